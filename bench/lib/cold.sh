# bench/lib/cold.sh: bench/run --cold, the first pass (sourced by bench/run).
#
# cold_pass TIER, after the indexes are built and before anything is
# prewarmed: the throwaway cluster is restarted (shared buffers empty, every
# backend cache gone) and, when bench/run runs as root, the OS page cache
# is dropped (sync; echo 3 >/proc/sys/vm/drop_caches), so that the table
# and the index are read from the disk.  Then one psql session answers the
# `index` statement (LIMIT 10, defaults) for each of the first
# --recall-queries queries of the first query set, once each, in qid order,
# timed by psql's \timing (client side: the round trip included).  The rows
# are checked against the brute force as every arm's are, what each
# statement read from the index, the heap and TOAST is counted
# (bench/lib/touch.sh; touch_warm repeats the pass after the arms), and the
# pass is one row of the arms table, `index_cold`: p50/p90/p99/mean of
# those queries, TPS = queries / the pass's summed latency.  What a user sees
# when the server has just started on an index that is not in memory; the
# warm arms are measured after pg_prewarm, as before.
#
# Only on a throwaway cluster: with --dsn the server is not ours to
# restart, and the pass is left out with a note.

cold_pass() {	# cold_pass TIER
	local tier=$1 set=${QSETS[0]} d=$WORK/t$1/index_cold n=$NRECALL q dropped
	if [ "$LOCAL" != 1 ]; then
		note "--cold: not run: the server is not a throwaway cluster (--dsn)"
		NOTES+=("docs=$tier: --cold: the first pass was not measured: the server given by --dsn is not restarted by bench/run")
		return 0
	fi
	[ "$TIER_AM" = 1 ] || return 0
	[ "$n" -le "$(set_nq "$set")" ] || n=$(set_nq "$set")
	mkdir -p "$d"
	log "the first pass on $tier documents (--cold): restart the cluster, $n $set queries once each"
	"${PGENV_RUNAS[@]}" "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -l "$WORK/cluster/server.log" -m fast -w restart >/dev/null ||
		die "--cold: the cluster did not restart (see $WORK/cluster/server.log)"
	dropped="the OS page cache was not dropped (not root)"
	if [ "$(id -u)" = 0 ]; then
		sync
		if echo 3 2>/dev/null >/proc/sys/vm/drop_caches; then
			dropped="the OS page cache dropped (echo 3 >/proc/sys/vm/drop_caches)"
		else
			dropped="the OS page cache was not dropped (/proc/sys/vm/drop_caches refused the write)"
		fi
	fi
	note "cluster restarted; $dropped"
	# each statement between two reads of the block counters
	# (bench/lib/touch.sh): what it read from the index, the heap, TOAST
	touch_script "$set" "$n" "$d/cold.sql" 2>"$d/cold.err" || die "--cold: the relations' oids: $(head -n 1 "$d/cold.err")"
	if ! PGOPTIONS="$BASE_PGOPTIONS" sql -f "$d/cold.sql" >"$d/cold.out" 2>"$d/cold.err"; then
		note "--cold: the first pass failed: $(head -n 3 "$d/cold.err")"
		NOTES+=("docs=$tier arm index_cold failed: $(head -n 1 "$d/cold.err")")
		FAILED=1
		server_ready
		return 0
	fi
	if ! touch_parse "$d/cold.out" "$d" || [ "$(wc -l <"$d/log")" != "$n" ]; then
		note "--cold: $(wc -l <"$d/log") timings for $n queries"
		NOTES+=("docs=$tier arm index_cold: psql printed $(wc -l <"$d/log") timings for $n queries")
		FAILED=1
		return 0
	fi
	truth_eval "$WORK/t$tier/docs.tsv" "$set" "$(truth_file "$WORK/t$tier" "$set" ip)" "$n" 10 "$d/rows.tsv" ip
	if [ "${EXACT%%/*}" != "${EXACT##*/}" ]; then
		note "arm index_cold: NOT EXACT: $EXACT queries match the brute force"
		NOTES+=("docs=$tier arm index_cold is not exact: only $EXACT queries matched the brute force")
		FAILED=1
	fi
	touch_summary "$tier" cold "$d"
	local p50 p90 p99 mean txns tps
	read -r p50 p90 p99 mean txns <<<"$(latency_stats "$d/lat.txt" "$d/log")"
	tps=$(awk -v m="$mean" 'BEGIN { printf "%.3f", (m > 0 ? 1000 / m : 0) }')
	cdf_points "$d/lat.txt" >"$OUT/latency/cdf_${tier}_index_cold.dat"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\n' \
		"$tier" index_cold "$set" 1 10 "$p50" "$p90" "$p99" "$mean" "$tps" "$txns" "$RECALL" "$EXACT" no >>"$ARMS_TSV"
	NOTES+=("docs=$tier: \`index_cold\` is the first pass (--cold): the cluster restarted after CREATE INDEX, $dropped, then the \`index\` statement once for each of the first $n \`$set\` queries in one psql session, timed by psql (client side), before pg_prewarm and every other arm; its first query ($(head -n 1 "$d/log" | awk '{ printf "%.1f", $3 / 1000 }') ms) also loads the backend's caches")
	note "arm=index_cold p50_ms=$p50 p99_ms=$p99 max_ms=$(tail -n 1 "$d/lat.txt") recall@10=$RECALL exact=$EXACT"
}
