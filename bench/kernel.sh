#!/usr/bin/env bash
# bench/kernel.sh: the cost of one posting, outside the server (issue 38).
#
#   bench/kernel.sh [--docs N] [--queries N] [--cg-queries N] [--seconds S]
#                   [--shapes "flat topical"] [--raw] [--bin BENCH_TRAVERSE]
#                   [--no-callgrind] [--work DIR]
#
# For each shape (bench/gen: flat = `gen docs N`, topical = `gen --shape
# topical --weights idf docs N`, queries `gen [same options] queries skewed
# N`), it runs
#   - test/unit/bench_traverse: the exhaustive and the MaxScore kernel over
#     one in-memory segment built with the real block codec (quantized
#     weights, as the server's segments are by default; --raw: raw float4
#     weights), every query, mean wall-clock (and CPU) time per posting
#     decoded;
#   - bench/floor.c, the in-memory floor (a plain term-at-a-time loop over
#     an inverted index in RAM), SECONDS of random rounds, mean wall-clock
#     and CPU time per query over the postings the exhaustive kernel
#     decodes (every posting of every query term: what the floor reads);
#   - the same three under valgrind --tool=callgrind --instr-atstart=no on
#     the first --cg-queries queries, only the query loops instrumented:
#     instructions per posting, repeatable on a noisy machine where the
#     wall-clock figures move by 20% or more.
# and prints one line per shape and arm, with /proc/loadavg before each
# timed run.  Corpora are generated once into the work directory (default
# /tmp/spv-kernel) and reused.  --bin measures a given bench_traverse
# binary (for a before/after comparison: build each from its commit with
# make -C test/unit bench_traverse and copy it away).  Takes 6-15
# minutes at the defaults (200,000 documents, 1,000 queries, 100 under
# callgrind), most of it valgrind; bench/README.md "Per posting and per
# query".  The commit printed is the tree's (the floor's source); with
# --bin the kernels are that binary's.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
DOCS=200000
NQ=1000
CGQ=100
SECONDS_FLOOR=5
SHAPES="flat topical"
QUANT=1
BIN=
CALLGRIND=1
WORKDIR=/tmp/spv-kernel

while [ $# -gt 0 ]; do
	case $1 in
	--docs) DOCS=$2; shift 2 ;;
	--queries) NQ=$2; shift 2 ;;
	--cg-queries) CGQ=$2; shift 2 ;;
	--seconds) SECONDS_FLOOR=$2; shift 2 ;;
	--shapes) SHAPES=$2; shift 2 ;;
	--raw) QUANT=0; shift ;;
	--bin) BIN=$2; shift 2 ;;
	--no-callgrind) CALLGRIND=0; shift ;;
	--work) WORKDIR=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/kernel.sh: unknown option $1" >&2; exit 2 ;;
	esac
done

mkdir -p "$WORKDIR"
cc -O2 -g -Wall -Wextra -ffp-contract=off -o "$WORKDIR/gen" "$root/bench/gen.c" -lm
cc -O2 -g -Wall -Wextra -ffp-contract=off -o "$WORKDIR/floor" "$root/bench/floor.c"
BINARG=$BIN
if [ -z "$BIN" ]; then
	make -s -C "$root/test/unit" bench_traverse >/dev/null
	BIN=$root/test/unit/bench_traverse
fi
if [ "$CALLGRIND" = 1 ] && ! command -v valgrind >/dev/null; then
	echo "bench/kernel.sh: valgrind is not installed (--no-callgrind to skip)" >&2
	exit 1
fi

load() { cut -d' ' -f1-3 /proc/loadavg; }

# callgrind's instruction total of an output file
cg_total() { sed -n 's/^totals: *//p' "$1" | awk '{ print $1 }'; }

# the field after "$2" in bench_traverse's line for kernel $1
bt_field() {
	awk -v k="$1" -v f="$2" '$1 == k { n = split($0, a, ", "); for (i = 1; i <= n; i++) if (index(a[i], f) == 1) { sub(f " ", "", a[i]); sub(/ .*/, "", a[i]); print a[i] } }'
}

export SPM_BENCH_QUANTIZE=$QUANT
printf 'bench/kernel.sh: %s documents, %s queries (%s under callgrind), %s weights, commit %s\n' \
	"$DOCS" "$NQ" "$CGQ" "$([ "$QUANT" = 1 ] && echo quantized || echo raw)" \
	"$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" diff --quiet 2>/dev/null || echo '+changes')${BINARG:+, kernels: $BINARG (--bin)}"
printf '%-8s %-10s %14s %12s %10s %14s  %s\n' shape arm postings/query ns/posting "(CPU)" instr/posting "load (1, 5, 15 min)"
for shape in $SHAPES; do
	case $shape in
	flat) gopt=() ;;
	topical) gopt=(--shape topical --weights idf) ;;
	*) echo "bench/kernel.sh: unknown shape $shape" >&2; exit 2 ;;
	esac
	d=$WORKDIR/$shape-$DOCS
	mkdir -p "$d"
	[ -s "$d/docs.tsv" ] || "$WORKDIR/gen" "${gopt[@]}" docs "$DOCS" >"$d/docs.tsv" 2>/dev/null
	[ -s "$d/q.tsv" ] || "$WORKDIR/gen" "${gopt[@]}" queries skewed "$NQ" >"$d/q.tsv" 2>/dev/null
	head -n "$CGQ" "$d/q.tsv" >"$d/qcg.tsv"

	# wall clock: both kernels (and their agreement check), then the floor
	l1=$(load)
	"$BIN" "$d/docs.tsv" "$d/q.tsv" 10 "$NQ" >"$d/bt.out"
	grep -q '^exhaustive and maxscore agree' "$d/bt.out" || { cat "$d/bt.out"; exit 1; }
	l2=$(load)
	"$WORKDIR/floor" "$d/docs.tsv" "$SECONDS_FLOOR" 0 "$d/q.tsv" /dev/null "$d/floor_lat.txt" 2>/dev/null
	post=$(bt_field exhaustive "postings decoded" <"$d/bt.out")
	for k in exhaustive maxscore; do
		ns=$(awk -v k=$k '$1 == k { for (i = 1; i <= NF; i++) if ($i == "ns") print $(i - 1) }' "$d/bt.out")
		cpu=$(awk -v k=$k '$1 == k { for (i = 1; i <= NF; i++) if ($i == "(CPU") { sub(/\)/, "", $(i + 1)); print $(i + 1) } }' "$d/bt.out")
		p=$(bt_field $k "postings decoded" <"$d/bt.out")
		ins=-
		if [ "$CALLGRIND" = 1 ]; then
			valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$d/cg_$k.out" \
				"$BIN" "$d/docs.tsv" "$d/qcg.tsv" 10 "$CGQ" $k >"$d/cg_$k.log" 2>&1
			pc=$(bt_field $k "postings decoded" <"$d/cg_$k.log")
			ins=$(awk -v t="$(cg_total "$d/cg_$k.out")" -v p="$pc" -v n="$CGQ" 'BEGIN { printf "%.2f", t / (p * n) }')
		fi
		printf '%-8s %-10s %14s %12s %10s %14s  %s\n' "$shape" "$k" "$p" "$ns" "${cpu:--}" "$ins" "$l1"
	done
	ns=$(awk -v p="$post" '{ w += $3; c += $4; n++ } END { printf "%.2f %.2f", w / n * 1000 / p, c / n * 1000 / p }' "$d/floor_lat.txt")
	ins=-
	if [ "$CALLGRIND" = 1 ]; then
		pc=$(bt_field exhaustive "postings decoded" <"$d/cg_exhaustive.log")
		valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$d/cg_floor.out" \
			"$WORKDIR/floor" "$d/docs.tsv" 0 0 "$d/qcg.tsv" /dev/null /dev/null >"$d/cg_floor.log" 2>&1
		ins=$(awk -v t="$(cg_total "$d/cg_floor.out")" -v p="$pc" -v n="$CGQ" 'BEGIN { printf "%.2f", t / (p * n) }')
	fi
	printf '%-8s %-10s %14s %12s %10s %14s  %s\n' "$shape" floor "$post" "${ns%% *}" "${ns#* }" "$ins" "$l2"
done
echo "callgrind outputs and logs: $WORKDIR/<shape>-$DOCS/cg_*.out (callgrind_annotate FILE)"
