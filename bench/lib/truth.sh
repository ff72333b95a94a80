# bench/lib/truth.sh: the exact answers of bench/run (sourced by it).
# bench/truth.c computes every query set's top 100 by brute force over the
# tier's corpus, streamed, in the background while the server loads; each
# arm's rows are then checked against it (recall@10 and exactness).  With
# --metric cosine a second pass ranks by <=> (truth --metric cosine), with
# --metric l2 another by <-> (truth --metric l2).
#   truth_start TIER / truth_wait   the brute force: WORK/t<tier>/truth_<set>.tsv
#                                   (and truth_cosine_<set>.tsv, truth_l2_<set>.tsv)
#   truth_eval DOCS SET TRUTH N LIMIT ROWS [METRIC]
#                                   sets RECALL and EXACT ("m/n") for the
#                                   first N queries of SET (METRIC: ip, the
#                                   default, cosine or l2, as TRUTH was made)

# the truth file of a tier's query set for a metric
truth_file() {	# truth_file TIERDIR SET METRIC
	if [ "$3" = ip ]; then echo "$1/truth_$2.tsv"; else echo "$1/truth_$3_$2.tsv"; fi
}

truth_top() {	# truth_top TIERDIR: every metric's pass, one after the other
	local m s tf
	for m in $METRICS; do
		tf=()
		for s in "${QSETS[@]}"; do tf+=("$WORK/q_$s.tsv" "$(truth_file "$1" "$s" "$m")"); done
		"$BIN/truth" --metric "$m" top 100 "$1/docs.tsv" "${tf[@]}" || return 1
	done
}

truth_start() {	# truth_start TIER
	bg_start truth_top "$T" 2>"$T/truth.err"
	TRUTH_PID=$BG_LAST
	T_TRUTH=$(now)
}

truth_wait() {
	log "ground truth (brute force, streaming the corpus)"
	bg_wait "$TRUTH_PID" || die "bench/truth failed"
	note "truth done ($(elapsed "$T_TRUTH") s since it started, overlapping the load)"
}

# DOCS may be a process substitution (the mixed arm's final table)
truth_eval() {	# truth_eval DOCS SET TRUTH N LIMIT ROWS [METRIC]
	local ev
	ev=$("$BIN/truth" --metric "${7:-ip}" eval "$1" "$WORK/q_$2.tsv" "$3" "$4" "$5" "$6")
	RECALL=$(field 'recall@10' "$ev")
	EXACT=$(field exact "$ev")
}
