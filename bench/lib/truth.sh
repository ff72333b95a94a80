# bench/lib/truth.sh: the exact answers of bench/run (sourced by it).
# bench/truth.c computes every query set's top 100 by brute force over the
# tier's corpus, streamed, in the background while the server loads; each
# arm's rows are then checked against it (recall@10 and exactness).
#   truth_start TIER / truth_wait   the brute force: WORK/t<tier>/truth_<set>.tsv
#   truth_eval DOCS SET TRUTH N LIMIT ROWS
#                                   sets RECALL and EXACT ("m/n") for the
#                                   first N queries of SET

truth_start() {	# truth_start TIER
	local s tf=()
	for s in "${QSETS[@]}"; do tf+=("$WORK/q_$s.tsv" "$T/truth_$s.tsv"); done
	bg_start "$BIN/truth" top 100 "$T/docs.tsv" "${tf[@]}" 2>"$T/truth.err"
	TRUTH_PID=$BG_LAST
	T_TRUTH=$(now)
}

truth_wait() {
	log "ground truth (brute force, streaming the corpus)"
	bg_wait "$TRUTH_PID" || die "bench/truth failed"
	note "truth done ($(elapsed "$T_TRUTH") s since it started, overlapping the load)"
}

# DOCS may be a process substitution (the mixed arm's final table)
truth_eval() {	# truth_eval DOCS SET TRUTH N LIMIT ROWS
	local ev
	ev=$("$BIN/truth" eval "$1" "$WORK/q_$2.tsv" "$3" "$4" "$5" "$6")
	RECALL=$(field 'recall@10' "$ev")
	EXACT=$(field exact "$ev")
}
