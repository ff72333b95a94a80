# bench/lib/touch.sh: what a query reads, relation by relation (bench/run
# --cold; sourced by bench/run).  Issue 38 item 4: besides the index, a
# query reads the heap pages of the rows the executor rechecks and returns
# (and their TOAST, for vectors stored out of line) and the query table's
# row; how much of each, when nothing is cached (the first pass), right
# after pg_prewarm (the settling pass, which also fills the cache for the
# arms where pg_prewarm could not) and after the arms (a warm pass).
#
# touch_script SET N FILE [warm]   the `index` statement (LIMIT 10, defaults) for
#     the first N queries of SET, each in a transaction between two reads of
#     the backend's block counters of the relations below
#     (pg_stat_get_xact_blocks_fetched and _hit: what the backend counted
#     and has not yet reported, which it does not report inside a
#     transaction block, so the difference is the statement's), with psql's
#     \timing around the statement alone (client side: the round trip
#     included); with warm, the first query once more before them, untimed
#     and uncounted, so that no statement pays for the new session's caches
# touch_parse OUT DIR       from psql's output: DIR/rows.tsv (the rows, for
#     the exactness check), DIR/log (latencies as pgbench log lines, us in
#     the third field) and DIR/touch.tsv, one line per query:
#     ms, then hit and read blocks of index, heap, TOAST, query table
# touch_summary TIER PASS DIR   one line of WORK/touch.tsv (the report's
#     table "What a query reads", bench/lib/report.sh touch_report): the
#     queries, their p50 and p99 ms, and the mean blocks per query, hit and
#     read, of each relation over all queries and over the slowest tenth
#
# The relations: the index `docs_v_idx`; the heap of `docs`; its TOAST
# table and the TOAST table's index together; `queries_<set>` (heap and
# TOAST), which the statement's subquery reads.  "read" is a block the
# buffer manager did not find in shared buffers (from the OS page cache or
# the disk); "hit" a block it found there.  The index pins some pages it has
# pinned before with ReadRecentBuffer (src/README "Segment cache"), which
# PostgreSQL does not count: the index's hits are a lower bound, its reads
# are all of them.

TOUCH_RELS=	# "index heap toast toastidx qheap qtoast" oids, set by touch_script

touch_script() {	# touch_script SET N FILE [warm]
	local set=$1 n=$2 file=$3 warm=${4:-} q counters r
	TOUCH_RELS=$(sql -c "SELECT concat_ws(' ', 'docs_v_idx'::regclass::oid, d.oid, d.reltoastrelid,
			coalesce((SELECT indexrelid FROM pg_index WHERE indrelid = d.reltoastrelid AND d.reltoastrelid <> 0 LIMIT 1), 0),
			q.oid, q.reltoastrelid)
		FROM pg_class d, pg_class q WHERE d.oid = 'docs'::regclass AND q.oid = 'queries_$set'::regclass") ||
		return 1
	read -r -a r <<<"$TOUCH_RELS"
	[ ${#r[@]} = 6 ] || return 1
	counters="SELECT 'touch'"
	for q in "${r[@]}"; do counters+=", pg_stat_get_xact_blocks_fetched($q), pg_stat_get_xact_blocks_hit($q)"; done
	{
		# warm: the session's first statement (it loads the backend's
		# caches) once before, its output discarded
		if [ -n "$warm" ]; then
			echo '\o /dev/null'
			arm_sql_rows index "$set" 10 1
			echo '\o'
		fi
		for ((q = 1; q <= n; q++)); do
			echo "BEGIN;"
			echo "$counters;"
			echo '\timing on'
			arm_sql_rows index "$set" 10 "$q"
			echo '\timing off'
			echo "$counters;"
			echo "COMMIT;"
		done
	} >"$file"
}

touch_parse() {	# touch_parse OUT DIR
	local out=$1 d=$2
	grep -v -e '^Time: ' -e '^touch	' "$out" >"$d/rows.tsv" || true
	# psql's "Time: 12.345 ms" (or "Time: 1234.567 ms (00:01.235)")
	sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$out" | awk '{ printf "0 %d %.0f\n", NR - 1, $1 * 1000 }' >"$d/log"
	# counters before and after each statement: fetched, hit per relation
	# (index, heap, toast, toast index, query heap, query toast)
	awk -F'\t' -v lf="$d/log" '
		BEGIN { while ((getline l < lf) > 0) { split(l, f, " "); ms[++nt] = f[3] / 1000 } }
		/^Time: / { next }
		$1 == "touch" {
			if (!open) { for (i = 2; i <= NF; i++) b[i] = $i; open = 1; next }
			open = 0; nq++
			for (i = 2; i <= NF; i++) d[i] = $i - b[i]
			# (fetched, hit) pairs: 2,3 index; 4,5 heap; 6,7 + 8,9 toast; 10,11 + 12,13 query table
			ih = d[3]; ir = d[2] - d[3]
			hh = d[5]; hr = d[4] - d[5]
			th = d[7] + d[9]; tr = d[6] - d[7] + d[8] - d[9]
			qh = d[11] + d[13]; qr = d[10] - d[11] + d[12] - d[13]
			printf "%.3f\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", ms[nq], ih, ir, hh, hr, th, tr, qh, qr
		}' "$out" >"$d/touch.tsv"
	[ "$(wc -l <"$d/touch.tsv")" = "$(wc -l <"$d/log")" ]
}

touch_summary() {	# touch_summary TIER PASS DIR
	local tier=$1 pass=$2 d=$3
	sort -t $'\t' -k1,1g "$d/touch.tsv" | awk -F'\t' -v t="$tier" -v p="$pass" '
		{ for (i = 1; i <= 9; i++) v[NR, i] = $i }
		function q(x,  i) { i = int(x * NR); if (i < x * NR) i++; if (i < 1) i = 1; return v[i, 1] }
		END {
			if (NR == 0) exit
			slow = NR - int(NR / 10) + 1	# the slowest tenth: ranks slow..NR
			if (slow > NR) slow = NR
			for (i = 2; i <= 9; i++) { a[i] = 0; s[i] = 0 }
			for (r = 1; r <= NR; r++) for (i = 2; i <= 9; i++) { a[i] += v[r, i]; if (r >= slow) s[i] += v[r, i] }
			printf "%s\t%s\t%d\t%.3f\t%.3f", t, p, NR, q(0.5), q(0.99)
			for (i = 2; i <= 9; i++) printf "\t%.1f", a[i] / NR
			for (i = 2; i <= 9; i++) printf "\t%.1f", s[i] / (NR - slow + 1)
			printf "\n" }' >>"$WORK/touch.tsv"
}

# The settling pass: after pg_prewarm and before the arms, every query of
# the first set once through the `index` statement, one at a time (psql),
# counted like the other passes.  It runs with --cold, and whenever the
# relations did not fit in shared buffers (load_prewarm: PREWARM_ALL),
# where pg_prewarm's pass over an index larger than shared buffers evicts
# its own first part and the first arm measured would otherwise pay for
# moving into memory what the queries need (doc/benchmarks.md "The first
# arm after pg_prewarm").  Its p50 and p99 are the row `settle` of the
# report's "What a query reads": what the first queries after a prewarm
# cost; the arms then measure the cache the queries keep.
touch_settle() {	# touch_settle TIER
	local tier=$1 set=${QSETS[0]} d=$WORK/t$1/touch_settle n why
	[ "$TIER_AM" = 1 ] || return 0
	if [ "$PREWARM_ALL" != t ]; then
		why="the relations did not fit in shared_buffers"
	elif [ "$COLD" = 1 ]; then
		why="--cold"
	else
		return 0
	fi
	n=$(set_nq "$set")
	mkdir -p "$d"
	log "settle the cache ($why): $n $set queries once each"
	if ! touch_script "$set" "$n" "$d/touch.sql" warm ||
		! PGOPTIONS="$BASE_PGOPTIONS" sql -f "$d/touch.sql" >"$d/touch.out" 2>"$d/touch.err" ||
		! touch_parse "$d/touch.out" "$d" || [ "$(wc -l <"$d/log")" != "$n" ]; then
		NOTES+=("docs=$tier: the settling pass after pg_prewarm failed: $(head -n 1 "$d/touch.err" 2>/dev/null)")
		FAILED=1
		return 0
	fi
	touch_summary "$tier" settle "$d"
	NOTES+=("docs=$tier: after pg_prewarm and before the arms ($why), every \`$set\` query once through the \`index\` statement, one at a time: the pass \`settle\` of \"What a query reads\"; the arms are measured after it")
}

# The warm pass: after the arms, the same statements once more with
# everything prewarmed that fits (bench/run --cold; its cold pass is
# bench/lib/cold.sh).  Not a row of the arms table: its times are psql's,
# one query at a time, to be read next to the first pass's.
touch_warm() {	# touch_warm TIER
	local tier=$1 set=${QSETS[0]} d=$WORK/t$1/touch_warm n=$NRECALL
	[ "$TIER_AM" = 1 ] && [ "$LOCAL" = 1 ] || return 0
	[ "$n" -le "$(set_nq "$set")" ] || n=$(set_nq "$set")
	mkdir -p "$d"
	log "what a query reads, warm: $n $set queries once each"
	if ! touch_script "$set" "$n" "$d/touch.sql" warm ||
		! PGOPTIONS="$BASE_PGOPTIONS" sql -f "$d/touch.sql" >"$d/touch.out" 2>"$d/touch.err" ||
		! touch_parse "$d/touch.out" "$d"; then
		NOTES+=("docs=$tier: the warm pass of \"what a query reads\" failed: $(head -n 1 "$d/touch.err" 2>/dev/null)")
		FAILED=1
		return 0
	fi
	touch_summary "$tier" warm "$d"
}
