# bench/corpus.sh: the tiers of bench/run whose vectors come from files
# instead of bench/gen, sourced by it (uses its sql, log, note, die, field,
# BIN, WORK, TIERS, QSETS, QSTATS, NQ, NRECALL):
#   --corpus DOCS --queries Q[,Q...]   a user's vectors, pgvector's text
#                                      format ("id<TAB>{i:v,...}/dim", as
#                                      COPY reads it)
#   --shape text                       the real-text tier (bench/text.sh)
# Every file goes through bench/corpus.c, which stops at the first
# malformed line with the file, the line number and what is wrong, and
# writes the rows in the form the server and bench/truth.c both read.
# Tiers (--docs N[,N...]) are the first N documents of the corpus (all of
# it without --docs); the query sets are the query files (named after them)
# or, for text, keyword and expansion.  See bench/README.md.

CORPUS_MODE=	# '' (bench/gen), user or text
CORPUS=
CORPUS_QFILES=()
declare -A SET_NQ CORPUS_QFILE

# queries in query set S (pgbench draws qid in 1..that)
set_nq() { echo "${SET_NQ[$1]:-$NQ}"; }

# after the options are parsed, before anything is installed: the mode, the
# query sets, the tiers' default
corpus_options() {
	local f s
	if [ -n "$CORPUS" ]; then
		CORPUS_MODE=user
		[ "$SHAPE" = flat ] || [ "$SHAPE" = corpus ] ||
			{ echo "bench/run: --corpus and --shape $SHAPE do not go together" >&2; exit 2; }
		SHAPE=corpus WEIGHTS=corpus
		[ -f "$CORPUS" ] && [ -r "$CORPUS" ] || { echo "bench/run: --corpus $CORPUS: no such readable file" >&2; exit 2; }
		CORPUS=$(cd "$(dirname "$CORPUS")" && pwd)/$(basename "$CORPUS")
		[ -n "$QUERIES_OPT" ] || { echo "bench/run: --corpus needs --queries QUERIES[,QUERIES...] (query files)" >&2; exit 2; }
		IFS=, read -r -a CORPUS_QFILES <<<"$QUERIES_OPT"
		QUERIES_OPT=
		SETS=
		for f in "${CORPUS_QFILES[@]}"; do
			[ -f "$f" ] && [ -r "$f" ] || { echo "bench/run: --queries $f: no such readable file" >&2; exit 2; }
			# the set's name: the file's name without extension, as an SQL identifier
			s=$(basename "$f" | sed 's/\.[^.]*$//' | tr 'A-Z' 'a-z' | tr -c 'a-z0-9_\n' '_' | sed 's/^\([0-9]\)/q\1/')
			[ -n "$s" ] || s=q
			while [ -n "${CORPUS_QFILE[$s]:-}" ]; do s=${s}_2; done
			CORPUS_QFILE[$s]=$(cd "$(dirname "$f")" && pwd)/$(basename "$f")
			SETS+=${SETS:+,}$s
		done
		[ -n "$DOCS_OPT" ] || DOCS_OPT=$(wc -l <"$CORPUS")
		[ "$DOCS_OPT" != 0 ] || { echo "bench/run: --corpus $CORPUS is empty" >&2; exit 2; }
	elif [ "$SHAPE" = text ]; then
		CORPUS_MODE=text
		WEIGHTS=bm25
		[ "$SETS" = skewed,flat ] && SETS=keyword,expansion
		for s in ${SETS//,/ }; do
			[[ $s = keyword || $s = expansion ]] ||
				{ echo "bench/run: --shape text has the query sets keyword and expansion, not $s" >&2; exit 2; }
		done
		[ -n "$DOCS_OPT" ] || DOCS_OPT=2000000	# the first 2M (capped at the corpus's size, ~2.2M)
	else
		return 0
	fi
	if [ "$MIXED" = 1 ]; then
		MIXED=0
		CORPUS_NOTES+=("the mixed read/write arm needs bench/gen's documents: not run with --corpus or --shape text")
	fi
}
CORPUS_NOTES=()

corpus_field() { sed -n "s|.* $1=\([^ ]*\).*|\1|p" <<<" $2"; }

# the text tier's files, built in the bench's cluster (bench/text.sh)
corpus_text() {
	local s
	# shellcheck source=text.sh
	. "$ROOT/bench/text.sh"
	text_prepare
	for s in "${QSETS[@]}"; do CORPUS_QFILE[$s]=${TEXT_QUERIES[$s]}; done
	corpus_check "$TEXT_DOCS"
}

# the corpus and the queries, checked and rewritten into WORK: a user's
# files right after the tools are compiled (nothing installed or started
# yet), the text tier's once the cluster has built them; sets DIM
corpus_check() {	# corpus_check DOCS
	local src=$1 s t0=$SECONDS cstats n t capped=()
	log "check the corpus and the queries (bench/corpus.c)"
	"$BIN/corpus" docs "$src" "$WORK/corpus.tsv" 2>"$WORK/corpus.err" || die "$(cat "$WORK/corpus.err")"
	cstats=$(sed -n 's/^corpus: //p' "$WORK/corpus.err")
	DIM=$(corpus_field dims "$cstats")
	n=$(corpus_field docs "$cstats")
	note "$src: $cstats ($((SECONDS - t0)) s)"
	for s in "${QSETS[@]}"; do
		"$BIN/corpus" queries "$s" "${CORPUS_QFILE[$s]}" "$WORK/q_$s.tsv" 2>"$WORK/q_$s.err" || die "$(cat "$WORK/q_$s.err")"
		QSTATS[$s]=$(sed -n 's/^corpus: //p' "$WORK/q_$s.err")
		[ "$(corpus_field dims "${QSTATS[$s]}")" = "$DIM" ] ||
			die "${CORPUS_QFILE[$s]}: the queries have $(corpus_field dims "${QSTATS[$s]}") dimensions, the corpus $DIM"
		SET_NQ[$s]=$(corpus_field queries "${QSTATS[$s]}")
		note "${CORPUS_QFILE[$s]}: ${QSTATS[$s]}"
	done
	# tiers beyond the corpus are the whole corpus
	for t in "${TIERS[@]}"; do
		[ "$t" -gt "$n" ] && t=$n
		printf '%s\n' "${capped[@]}" | grep -qx "$t" || capped+=("$t")
	done
	TIERS=("${capped[@]}")
	note "tiers: ${TIERS[*]} documents (the first N of the corpus)"
}

# the tier's documents: the first TIER rows of the corpus; sets DSTATS
corpus_tier() {	# corpus_tier TIER DIR
	"$BIN/corpus" docs "$WORK/corpus.tsv" "$2/docs.tsv" "$1" 2>"$2/gen.err" || die "$(cat "$2/gen.err")"
	DSTATS="$(sed -n 's/^corpus: //p' "$2/gen.err") shape=$SHAPE weights=$WEIGHTS"
}
