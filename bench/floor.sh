# bench/floor.sh: the in-memory floor arm of bench/run, sourced by it (uses
# its note, field, latency_stats, cdf_points, truth_eval, set_nq, floor_name,
# BIN, WORK, OUT, QSETS, DURATION, NRECALL, ARMS_TSV, NOTES, FAILED).  See
# bench/README.md "The in-memory floor".
#
# After a tier's arms, bench/floor.c loads the tier's corpus text into RAM
# as an inverted index and answers every query set's queries with a plain
# term-at-a-time loop, no database, for DURATION seconds per set; the first
# NRECALL answers go through bench/truth.c eval like any arm's (the floor is
# exact, or the run fails).  Its rows in ARMS_TSV are `floor` (first query
# set) and `floor_<set>`, 1 client, LIMIT 10, TPS = 1000 / mean ms; the
# report (bench/lib/report.sh floor_report) gives every index arm's p50 as a
# multiple of the floor's, and FLOOR_CPU (saved in run.env) the CPU time.

# above this many postings the floor (~16 bytes a posting while it builds
# its inverted index) is left out, with a note
FLOOR_MAX_POSTINGS=${FLOOR_MAX_POSTINGS:-200000000}

declare -A FLOOR_CPU	# tier.set -> "p50 p99" of the CPU time per query (the report gives them)
# floor_name (floor for the first set, floor_<set> for the others): bench/lib/report.sh

floor_run() {	# floor_run TIER POSTINGS
	local tier=$1 postings=$2 d=$WORK/t$1/floor s args=() nr lat p50 p90 p99 mean txns tps recall exact name
	if [ "$postings" -gt "$FLOOR_MAX_POSTINGS" ]; then
		note "floor: not run: $postings postings (more than $FLOOR_MAX_POSTINGS in memory)"
		NOTES+=("docs=$tier: the in-memory floor arm was not run: $postings postings, more than FLOOR_MAX_POSTINGS=$FLOOR_MAX_POSTINGS")
		return 0
	fi
	mkdir -p "$d"
	for s in "${QSETS[@]}"; do args+=("$WORK/q_$s.tsv" "$d/rows_$s.tsv" "$d/lat_$s.txt"); done
	note "floor: bench/floor.c, the corpus in memory, $DURATION s per query set"
	if ! "$BIN/floor" "$WORK/t$tier/docs.tsv" "$DURATION" "$NRECALL" "${args[@]}" 2>"$d/floor.err"; then
		NOTES+=("docs=$tier: the floor arm failed: $(tail -n 1 "$d/floor.err")")
		FAILED=1
		return 0
	fi
	sed 's/^/    /' "$d/floor.err"
	for s in "${QSETS[@]}"; do
		name=$(floor_name "$s")
		nr=$NRECALL
		[ "$nr" -le "$(set_nq "$s")" ] || nr=$(set_nq "$s")
		truth_eval "$WORK/t$tier/docs.tsv" "$s" "$WORK/t$tier/truth_$s.tsv" "$nr" 10 "$d/rows_$s.tsv"
		recall=$RECALL exact=$EXACT
		if [ "${exact%%/*}" != "${exact##*/}" ]; then
			note "arm $name: NOT EXACT: $exact queries match the brute force"
			NOTES+=("docs=$tier arm $name is not exact: only $exact queries matched the brute force")
			FAILED=1
		fi
		lat=$(latency_stats "$d/lat_sorted_$s.txt" "$d/lat_$s.txt")
		read -r p50 p90 p99 mean txns <<<"$lat"
		tps=$(awk -v m="$mean" 'BEGIN { printf "%.3f", (m > 0 ? 1000 / m : 0) }')
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\n' \
			"$tier" "$name" "$s" 1 10 "$p50" "$p90" "$p99" "$mean" "$tps" "$txns" "$recall" "$exact" no >>"$ARMS_TSV"
		cdf_points "$d/lat_sorted_$s.txt" >"$OUT/latency/cdf_${tier}_$name.dat"
		# the CPU time per query too: on a shared machine the wall-clock time
		# includes waiting for a core (the report gives both)
		FLOOR_CPU[$tier.$s]=$(awk '{ print $4 / 1000 }' "$d/lat_$s.txt" | sort -g |
			awk '{ v[NR] = $1 } function q(p,  i) { i = int(p * NR); if (i < p * NR) i++; if (i < 1) i = 1; return v[i] }
				END { if (NR) printf "%.3f %.3f", q(0.5), q(0.99) }')
		note "arm=$name p50_ms=$p50 p99_ms=$p99 tps=$(printf %.1f "$tps") recall@10=$recall exact=$exact (CPU time p50, p99: ${FLOOR_CPU[$tier.$s]} ms)"
	done
}
