# bench/lib/mixed.sh: the mixed read/write arm of bench/run (sourced by it),
# last on each tier since it inserts into docs.
# After the read-only arms of a tier (they are done with docs by then):
#   mixed          one client runs the index arm's query (LIMIT 10) while
#                  another inserts MIXED_RATE rows/s (pgbench --rate, one row
#                  per transaction) into docs itself, both for DURATION s;
#                  then sparse_maxscore_verify and the recall queries through
#                  the index against a brute force over the final table;
#   insert_index   the same insert script alone and unthrottled, into a copy
#   insert_noindex of the tier's documents with and without the
#                  sparse_maxscore index (both with the primary key).
# Inserted rows get ids above the corpus from a sequence; their vectors come
# from mixed_pool, documents N+1..N+P of the generator (so the docs table
# after the mixed run is the generator's first N+k documents, and
# bench/truth.c can compute its exact answers); ids beyond N+P reuse the
# pool's vectors cyclically (only the unthrottled runs get that far).
# WORK/mixed.tsv (MIXED_TSV; copied to the results folder), one row per run:
# tier name p50 p90 p99 mean max tps txns lag_p99 lag_max rows
declare -A MIXED_INFO	# tier -> "key=value ..." of the mixed run (the report reads it)

# statement latency (ms) from pgbench -l files, without the schedule lag of
# --rate runs (column 7): "p50 p90 p99 mean n max lag_p99 lag_max"
stmt_stats() {	# stmt_stats SORTED_OUT LOGFILE...
	local out=$1 lag
	shift
	awk '{ print ($3 - (NF >= 7 ? $7 : 0)) / 1000 }' "$@" | sort -g >"$out"
	lag=$(awk '{ print (NF >= 7 ? $7 : 0) / 1000 }' "$@" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) { print "n/a n/a"; exit }
			i = int(0.99 * NR); if (i < 0.99 * NR) i++; if (i < 1) i = 1
			printf "%.3f %.3f\n", v[i], v[NR] }')
	awk -v lag="$lag" '{ v[NR] = $1; s += $1 }
		function q(p,  i) { i = int(p * NR); if (i < p * NR) i++; if (i < 1) i = 1; return v[i] }
		END { if (NR == 0) { print "n/a n/a n/a n/a 0 n/a n/a n/a"; exit }
			printf "%.3f %.3f %.3f %.3f %d %.3f %s\n", q(0.5), q(0.9), q(0.99), s / NR, NR, v[NR], lag }' "$out"
}

# mixed_pgbench DIR NAME PGOPTS PGBENCH_ARGS...: one pgbench, -P 5 lines
# prefixed with NAME; stdout in DIR/NAME.out, stderr in DIR/NAME.err
mixed_pgbench() {
	local d=$1 name=$2 opts=$3
	shift 3
	rm -f "$d/log_$name".*
	PGOPTIONS="$BASE_PGOPTIONS $opts" pgbench -n -M prepared -P 5 -l --log-prefix="$d/log_$name" "$@" "$DSN" \
		2>&1 >"$d/$name.out" | tee "$d/$name.err" | sed -u "s/^/    $name: /"
}

# mixed_record TIER NAME DIR: one row of MIXED_TSV from DIR/NAME's pgbench
# output and log; prints "p50 p99 tps"; fails if pgbench failed
mixed_record() {
	local tier=$1 name=$2 d=$3 tps failed st p50 p90 p99 mean n max lag99 lagmax
	tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$d/$name.out" | tail -n 1)
	failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$d/$name.out")
	if [ -n "$failed" ] && [ "$failed" != 0 ]; then
		NOTES+=("docs=$tier $name: $failed failed transactions")
		FAILED=1
	fi
	st=$(stmt_stats "$d/lat_$name.txt" "$d/log_$name".*)
	read -r p50 p90 p99 mean n max lag99 lagmax <<<"$st"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\n' "$tier" "$name" "$p50" "$p90" "$p99" "$mean" "$max" \
		"${tps:-0}" "$n" "$lag99" "$lagmax" "$n" >>"$MIXED_TSV"
	note "arm=$name p50_ms=$p50 p99_ms=$p99 max_ms=$max tps=$(printf %.1f "${tps:-0}") transactions=$n"
	# the reader's latencies go on the tier's CDF plot with the read-only arms
	[ "$name" = mixed_query ] && cdf_points "$d/lat_$name.txt" >"$OUT/latency/cdf_${tier}_$name.dat"
	return 0
}

# the index's state as "segments documents pending_documents"
spm_state() { sql -c "SELECT segments, documents, pending_documents FROM sparse_maxscore_info('$1')" | tr '\t' ' '; }

# the insert script for TABLE (sequence TABLE_ids)
insert_script() {	# insert_script TABLE FILE
	printf '%s\n' "INSERT INTO $1 (id, v) SELECT s.id, p.v FROM (SELECT nextval('$1_ids') AS id) s JOIN mixed_pool p ON p.n = (s.id - :ndocs - 1) % :npool + 1;" >"$2"
}

run_mixed() {	# run_mixed TIER SET
	local tier=$1 set=$2 d=$WORK/t$tier/mixed npool opts plan forced=no ins_opts t0 rc
	local rpid ipid ppid before after recall=n/a exact=n/a verify counts
	mkdir -p "$d"
	ins_opts=${MIXED_PENDING_KB:+-c sparse_maxscore.pending_list_limit=$MIXED_PENDING_KB}

	# the pool of new documents: the generator's N+1..N+P
	npool=$((MIXED_RATE * DURATION * 5 / 4 + 100))
	t0=$(now)
	"$BIN/gen" --shape "$SHAPE" --weights "$WEIGHTS" docs $((tier + npool)) "$SEED" 2>/dev/null | tail -n "+$((tier + 1))" |
		awk -F'\t' -v N="$tier" '{ print $1 - N "\t" $2 }' >"$d/pool.tsv"
	sql -c "DROP TABLE IF EXISTS mixed_pool" -c "CREATE TABLE mixed_pool (n int PRIMARY KEY, v sparsevec($DIM))"
	sql -c "\\copy mixed_pool FROM '$d/pool.tsv'"
	sql -c "VACUUM ANALYZE mixed_pool" -c "SELECT pg_prewarm('mixed_pool')" >/dev/null
	note "pool of $npool new documents (ids $((tier + 1))..$((tier + npool)) of the generator) in $(elapsed "$t0") s"

	# the reader: the index arm's statement, with the index arm's plan check
	opts=$(arm_options index)
	plan=$(explain index "$set" 10 "$opts" "Index Scan using docs_v_idx") || {
		opts="$opts -c enable_seqscan=off"
		forced=yes
		plan=$(explain index "$set" 10 "$opts" "Index Scan using docs_v_idx")
	} || {
		note "mixed: the plan does not use docs_v_idx; skipped"
		NOTES+=("docs=$tier mixed arm skipped: the planner would not use docs_v_idx")
		FAILED=1
		return 0
	}
	{ printf '### docs=%s arm=mixed_query (PGOPTIONS: %s)\n' "$tier" "${opts:-none}"; echo "$plan"; echo; } >>"$OUT/plans.txt"
	printf '\\set qid random(1, :nq)\n%s;\n' "$(arm_sql index "$set" 10)" >"$d/query.sql"

	# --- mixed: reader and inserter together, on docs
	insert_script docs "$d/insert_docs.sql"
	sql -c "DROP SEQUENCE IF EXISTS docs_ids" -c "CREATE SEQUENCE docs_ids START $((tier + 1))"
	before=$(spm_state docs_v_idx)
	log "mixed read/write on $tier documents: 1 client querying ($set, LIMIT 10) + 1 client inserting $MIXED_RATE rows/s, $DURATION s"
	[ $forced = yes ] && note "mixed: the planner chose another plan; the reader is forced with enable_seqscan=off"
	[ -n "$ins_opts" ] && note "mixed: the inserting sessions run with sparse_maxscore.pending_list_limit=${MIXED_PENDING_KB}kB (--quick)"
	# the index's state five times a second (one session, \watch), to see the flushes
	# (stdin in a function of its own: a background command's is /dev/null)
	poll_state() {
		psql -X -q -At -F ' ' -d "$DSN" 2>/dev/null <<<"SELECT extract(epoch FROM clock_timestamp()),
			segments, documents, pending_documents FROM sparse_maxscore_info('docs_v_idx') \watch 0.2"
	}
	bg_start poll_state >"$d/state.txt"
	ppid=$BG_LAST
	t0=$(now)
	bg_start mixed_pgbench "$d" mixed_query "$opts" -c 1 -j 1 -T "$DURATION" -D nq="$NQ" -f "$d/query.sql"
	rpid=$BG_LAST
	bg_start mixed_pgbench "$d" mixed_insert "$ins_opts" -c 1 -j 1 -T "$DURATION" -R "$MIXED_RATE" \
		-D ndocs="$tier" -D npool="$npool" -f "$d/insert_docs.sql"
	ipid=$BG_LAST
	rc=0
	bg_wait "$rpid" || rc=1
	bg_wait "$ipid" || rc=$((rc | 2))
	bg_stop "$ppid"
	after=$(spm_state docs_v_idx)
	# flushes: the pending list shrank between two samples (at least one flush each)
	MIXED_INFO[$tier]="t0=$t0 npool=$npool forced=$forced before=${before// /,} after=${after// /,}"
	MIXED_INFO[$tier]+=" flushes_seen=$(awk 'NR > 1 && $4 < p { n++ } { p = $4 } END { print n + 0 }' "$d/state.txt")"
	MIXED_INFO[$tier]+=" samples=$(wc -l <"$d/state.txt")"
	if [ $rc != 0 ]; then
		NOTES+=("docs=$tier mixed arm failed in pgbench: $(grep -h -m1 -i error "$d"/mixed_*.err || tail -qn 1 "$d"/mixed_*.err)")
		FAILED=1
		server_ready
	fi
	[ $((rc & 1)) = 0 ] && mixed_record "$tier" mixed_query "$d"
	[ $((rc & 2)) = 0 ] && mixed_record "$tier" mixed_insert "$d"
	note "index before: segments documents pending = $before; after: $after"
	# the timeline plot's data: per second, the reader's p50 and p99 and the
	# slowest insert statement; the pending list as polled
	per_second() {	# per_second T0 LOGFILE...: "second+0.5 p50 p99 max"
		local t0=$1
		shift
		awk -v t0="$t0" '{ printf "%d %.3f\n", $5 + $6 / 1e6 - t0, ($3 - (NF >= 7 ? $7 : 0)) / 1000 }' "$@" |
			sort -k1,1n -k2,2g | awk '
			function out(  i, j) { if (n == 0) return
				i = int(0.5 * n); if (i < 0.5 * n) i++; j = int(0.99 * n); if (j < 0.99 * n) j++
				printf "%d.5 %s %s %s\n", b, v[i], v[j], v[n] }
			NR == 1 || $1 != b { out(); b = $1; n = 0 } { v[++n] = $2 } END { out() }'
	}
	[ $((rc & 1)) = 0 ] && per_second "$t0" "$d"/log_mixed_query.* >"$OUT/latency/mixed_${tier}_query.dat"
	[ $((rc & 2)) = 0 ] && per_second "$t0" "$d"/log_mixed_insert.* >"$OUT/latency/mixed_${tier}_insert.dat"
	awk -v t0="$t0" '{ printf "%.2f %s %s %s\n", $1 - t0, $2, $3, $4 }' "$d/state.txt" >"$OUT/latency/mixed_${tier}_state.dat"

	# --- exactness on the final table: verify, then the recall queries
	# through the index against a brute force over what docs now holds
	if verify=$(sql -c "SELECT sparse_maxscore_verify('docs_v_idx')" 2>&1); then
		note "sparse_maxscore_verify: $verify"
	else
		note "sparse_maxscore_verify FAILED: $verify"
		NOTES+=("docs=$tier after the mixed run: sparse_maxscore_verify failed: $(head -n 1 <<<"$verify")")
		FAILED=1
		verify="FAILED: $(head -n 1 <<<"$verify")"
	fi
	MIXED_INFO[$tier]+=" verify=${verify// /,}"
	counts=$(sql -c "SELECT count(*), count(*) FILTER (WHERE id > $tier), count(DISTINCT id) FROM docs" | tr '\t' ' ')
	MIXED_INFO[$tier]+=" final_rows=${counts%% *} inserted_rows=$(cut -d' ' -f2 <<<"$counts")"
	# the final table's text is the corpus followed by the inserted rows,
	# streamed to bench/truth (never a copy of the corpus: 15 GB at 10M)
	sql -c "SELECT id FROM docs WHERE id > $tier ORDER BY id" |
		awk -F'\t' -v N="$tier" -v P="$npool" 'NR == FNR { v[$1] = $2; next } { print $1 "\t" v[($1 - N - 1) % P + 1] }' \
			"$d/pool.tsv" - >"$d/inserted.tsv"
	final() { cat "$WORK/t$tier/docs.tsv" "$d/inserted.tsv"; }
	"$BIN/truth" top 100 <(final) "$WORK/q_$set.tsv" "$d/truth.tsv" 2>"$d/truth.err" || die "bench/truth failed on the final table"
	for ((q = 1; q <= NRECALL; q++)); do arm_sql_rows index "$set" 10 "$q"; done >"$d/recall.sql"
	if PGOPTIONS="$BASE_PGOPTIONS $opts" sql -f "$d/recall.sql" >"$d/rows.tsv" 2>"$d/recall.err"; then
		truth_eval <(final) "$set" "$d/truth.tsv" "$NRECALL" 10 "$d/rows.tsv"
		recall=$RECALL exact=$EXACT
		note "after the mixed run, $((tier + $(wc -l <"$d/inserted.tsv"))) documents: recall@10=$recall exact=$exact against the brute force"
		if [ "${exact%%/*}" != "${exact##*/}" ]; then
			NOTES+=("docs=$tier after the mixed run the index is not exact: only $exact queries matched the brute force over the final table")
			FAILED=1
		fi
	else
		NOTES+=("docs=$tier after the mixed run the recall queries failed: $(head -n 1 "$d/recall.err")")
		FAILED=1
		server_ready
	fi
	MIXED_INFO[$tier]+=" recall=$recall exact=$exact"

	# --- insert throughput alone, unthrottled, with and without the index
	local tbl name
	for name in insert_index insert_noindex; do
		tbl=docs_${name#insert_}
		log "$name: 1 client inserting as fast as it can into $tbl (a copy of the $tier documents$([ $name = insert_index ] && echo ' with the sparse_maxscore index' || echo ', primary key only')), $DURATION s"
		t0=$(now)
		sql -c "DROP TABLE IF EXISTS $tbl" -c "CREATE TABLE $tbl AS SELECT id, v FROM docs WHERE id <= $tier" \
			-c "ALTER TABLE $tbl ADD PRIMARY KEY (id)" \
			-c "DROP SEQUENCE IF EXISTS ${tbl}_ids" -c "CREATE SEQUENCE ${tbl}_ids START $((tier + 1))"
		[ $name = insert_index ] && sql -c "CREATE INDEX ${tbl}_v_idx ON $tbl USING sparse_maxscore (v sparsevec_ip_ops)"
		sql -c "VACUUM ANALYZE $tbl"
		sql -c "SELECT sum(pg_prewarm(c.oid)) FROM pg_class c WHERE c.oid IN
			(SELECT '$tbl'::regclass UNION ALL SELECT reltoastrelid FROM pg_class WHERE oid = '$tbl'::regclass AND reltoastrelid <> 0
			 UNION ALL SELECT indexrelid FROM pg_index WHERE indrelid = '$tbl'::regclass)" >/dev/null
		note "copied in $(elapsed "$t0") s"
		insert_script "$tbl" "$d/insert_$tbl.sql"
		[ $name = insert_index ] && before=$(spm_state "${tbl}_v_idx")
		if mixed_pgbench "$d" "$name" "$ins_opts" -c 1 -j 1 -T "$DURATION" \
			-D ndocs="$tier" -D npool="$npool" -f "$d/insert_$tbl.sql"; then
			mixed_record "$tier" "$name" "$d"
		else
			NOTES+=("docs=$tier $name failed in pgbench: $(grep -m1 -i error "$d/$name.err" || tail -n 1 "$d/$name.err")")
			FAILED=1
			server_ready
		fi
		if [ $name = insert_index ]; then
			after=$(spm_state "${tbl}_v_idx")
			MIXED_INFO[$tier]+=" ins_before=${before// /,} ins_after=${after// /,}"
			if verify=$(sql -c "SELECT sparse_maxscore_verify('${tbl}_v_idx')" 2>&1); then
				MIXED_INFO[$tier]+=" ins_verify=${verify// /,}"
			else
				NOTES+=("docs=$tier after insert_index: sparse_maxscore_verify failed: $(head -n 1 <<<"$verify")")
				FAILED=1
				MIXED_INFO[$tier]+=" ins_verify=FAILED"
			fi
		fi
		sql -c "DROP TABLE $tbl" -c "DROP SEQUENCE IF EXISTS ${tbl}_ids"
	done
	sql -c "DROP TABLE mixed_pool"
}
