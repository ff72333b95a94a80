# bench/lib/arms.sh: the measured arms of bench/run (sourced by it).
# An arm is a statement (arm_sql), the settings it runs with (arm_options)
# and what its plan must show (arm_plan_want).  run_arm checks the plan,
# answers the first --recall-queries queries once (rows checked against the
# brute force by truth_eval, the index's counters), warms up, and queues
# its measured pgbench runs; measure_queue runs the queue (at once, or in
# --slices rounds) and arm_row writes one row per client count to
# WORK/arms.tsv.  arms_tier runs every arm of a tier in order.
#
# WORK/arms.tsv (copied to the results folder), one row per (tier, arm,
# clients): tier, arm, set, clients, LIMIT, p50, p90, p99, mean (ms), TPS,
# transactions, recall@10, exact, forced (yes/no).

# the sharded_union arm's CTEs: one subquery per shard, each with its own
# ORDER BY and LIMIT (both shipped), under an Append that runs the shards
# at once (async_capable); README "Sharding"
sharded_union_sql() {	# sharded_union_sql SET LIMIT QID
	local i parts=
	for ((i = 1; i <= SHARDS; i++)); do
		parts+="${parts:+ UNION ALL }(SELECT id, v <#> (SELECT q FROM q) AS d FROM docs_sharded_$i ORDER BY d LIMIT $2)"
	done
	echo "WITH q AS MATERIALIZED (SELECT q FROM queries_$1 WHERE qid = $3), s AS MATERIALIZED ($parts)"
}


# ---------------------------------------------------------------- arms
# An arm: name, query set, LIMIT, extra settings, and the SQL of one query
# (with :qid).  The *_cosine arms (--metric cosine) order by <=> and are
# checked against the brute force's cosine ranking, the *_l2 arms (--metric
# l2) by <-> against its L2 ranking; the others by <#>.  The pk_lookup arm
# is the floor of per-statement overhead;
# pk_floor is the index arm's statement with the primary key doing the
# index's part: the query vector's InitPlan, LIMIT rows from :id on in id
# order, the distance of each computed (as the index arm's scan computes
# its ORDER BY expression), only the ids returned.
arm_metric() { case $1 in *cosine*) echo cosine ;; *_l2 | *_l2_*) echo l2 ;; *) echo ip ;; esac; }
arm_op() { case $(arm_metric "$1") in cosine) echo '<=>' ;; l2) echo '<->' ;; *) echo '<#>' ;; esac; }
arm_sql() {	# arm_sql ARM SET LIMIT
	local arm=$1 set=$2 limit=$3
	case $arm in
	pk_lookup) echo "SELECT id FROM docs WHERE id = :id" ;;
	pk_floor) echo "SELECT id FROM (SELECT id, v <#> (SELECT q FROM queries_$set WHERE qid = :qid) AS d FROM docs WHERE id >= :id ORDER BY id LIMIT $limit) s WHERE d IS NOT NULL" ;;
	hnsw) echo "SELECT id FROM hnsw_docs ORDER BY v OPERATOR($PGV.<#>) (SELECT q FROM hnsw_queries_$set WHERE qid = :qid) LIMIT $limit" ;;
	sharded) echo "SELECT id FROM docs_sharded ORDER BY v <#> (SELECT q FROM queries_$set WHERE qid = :qid) LIMIT $limit" ;;
	sharded_union) echo "$(sharded_union_sql "$set" "$limit" ":qid") SELECT id FROM s ORDER BY d LIMIT $limit" ;;
	*) echo "SELECT id FROM docs ORDER BY v $(arm_op "$arm") (SELECT q FROM queries_$set WHERE qid = :qid) LIMIT $limit" ;;
	esac
}
# the same query, also returning qid and the distance, for the recall pass
arm_sql_rows() {	# arm_sql_rows ARM SET LIMIT QID
	local arm=$1 set=$2 limit=$3 qid=$4
	case $arm in
	hnsw) echo "SELECT $qid, id, v OPERATOR($PGV.<#>) (SELECT q FROM hnsw_queries_$set WHERE qid = $qid) AS d FROM hnsw_docs ORDER BY d LIMIT $limit;" ;;
	sharded) echo "SELECT $qid, id, v <#> (SELECT q FROM queries_$set WHERE qid = $qid) AS d FROM docs_sharded ORDER BY d LIMIT $limit;" ;;
	sharded_union) echo "$(sharded_union_sql "$set" "$limit" "$qid") SELECT $qid, id, d FROM s ORDER BY d LIMIT $limit;" ;;
	*) echo "SELECT $qid, id, v $(arm_op "$arm") (SELECT q FROM queries_$set WHERE qid = $qid) AS d FROM docs ORDER BY d LIMIT $limit;" ;;
	esac
}
arm_options() {	# arm_options ARM
	case $1 in
	seqscan*) echo "-c enable_indexscan=off" ;;	# a bitmap scan cannot order
	index_exhaustive*) echo "-c sparse_maxscore.algorithm=exhaustive" ;;
	index_maxscore*) echo "-c sparse_maxscore.algorithm=maxscore" ;;
	# range pruning on every segment with range data, without auto's checks
	# that it pays and without giving up (spm_policy_choose); MaxScore on
	# the segments without: what auto is measured against
	index_ranges*) echo "-c sparse_maxscore.algorithm=ranges" ;;
	hnsw*) echo "-c hnsw.ef_search=100" ;;
	*) echo "" ;;
	esac
}
# what the plan must contain for the arm to measure what it claims
arm_plan_want() {
	case $1 in
	pk_*) echo "docs_pkey" ;;
	seqscan*) echo "Seq Scan on docs" ;;
	hnsw*) echo "hnsw_docs_v_idx" ;;
	sharded_union*) echo "Async Foreign Scan" ;;
	sharded*) echo "Merge Append" ;;
	index_cosine*) echo "Index Scan using docs_v_cosine_idx" ;;
	index_l2*) echo "Index Scan using docs_v_l2_idx" ;;
	*) echo "Index Scan using docs_v_idx" ;;
	esac
}



# explain ARM SET LIMIT OPTIONS WANT: the plans, for qid 1, of the arm's
# pgbench statement and of its recall statement; fails unless both contain WANT
explain() {
	local p1 p2 ex="EXPLAIN (COSTS OFF)"
	[[ $1 = sharded* ]] && ex="EXPLAIN (VERBOSE, COSTS OFF)"	# the Remote SQL
	p1=$(PGOPTIONS="$BASE_PGOPTIONS $4" sql -c "$ex $(arm_sql "$1" "$2" "$3" | sed 's/:qid/1/; s/:id/1/')" 2>&1) ||
		p1="(EXPLAIN failed) $p1"
	if [[ $1 = pk_* ]]; then
		p2=$p1
	else
		p2=$(PGOPTIONS="$BASE_PGOPTIONS $4" sql -c "$ex $(arm_sql_rows "$1" "$2" "$3" 1)" 2>&1) ||
			p2="(EXPLAIN failed) $p2"
	fi
	printf '%s\n' "$p1"
	[[ $1 = pk_* ]] || printf -- '-- the recall statement:\n%s\n' "$p2"
	grep -q "$5" <<<"$p1" && grep -q "$5" <<<"$p2"
}

# run_arm TIER ARM SET LIMIT "CLIENTS..." NAME
run_arm() {
	local tier=$1 arm=$2 set=$3 limit=$4 clients=$5 name=$6
	local opts plan want forced=no recall=n/a exact=n/a c q script d
	opts=$(arm_options "$arm")
	want=$(arm_plan_want "$arm")
	d=$WORK/t$tier/$name
	mkdir -p "$d"

	# the plan: the arm only counts if it measures what it is named after
	local planned=1
	plan=$(explain "$arm" "$set" "$limit" "$opts" "$want") || planned=0
	if [ $planned = 0 ] && [ "$arm" != seqscan ]; then
		opts="$opts -c enable_seqscan=off"
		forced=yes
		planned=1
		plan=$(explain "$arm" "$set" "$limit" "$opts" "$want") || planned=0
	fi
	{ printf '### docs=%s arm=%s (PGOPTIONS: %s)\n' "$tier" "$name" "${opts:-none}"; echo "$plan"; echo; } >>"$OUT/plans.txt"
	if [ $planned = 0 ]; then
		note "arm $name: the plan does not use $want; skipped"
		NOTES+=("docs=$tier arm $name skipped: the planner would not use $want")
		FAILED=1
		return 0
	fi
	[ $forced = yes ] && note "arm $name: the planner chose another plan; forced with enable_seqscan=off"

	# recall and exactness (and warm-up): the first NRECALL queries, once each
	if [[ $arm != pk_* ]]; then
		local nr=$NRECALL
		if [[ $arm = seqscan* ]] && [ "$tier" -gt 100000 ] && [ "$nr" -gt 50 ]; then nr=50; fi
		if [[ $arm = seqscan* ]] && [ "$tier" -gt 1000000 ] && [ "$nr" -gt 10 ]; then nr=10; fi
		[ "$nr" -le "$(set_nq "$set")" ] || nr=$(set_nq "$set")
		{
			for ((q = 1; q <= nr; q++)); do
				arm_sql_rows "$arm" "$set" "$limit" "$q"
				if [[ $arm = index* ]] && [ $HAVE_COUNTERS = 1 ]; then
					echo "SELECT 'C', $q, rounds, postings_decoded, blocks_decoded, blocks_skipped, candidates_scored, rows_returned FROM sparse_maxscore_last_scan();"
				fi
			done
			# the settings the index scans actually ran with
			[[ $arm = index* ]] &&
				echo "SELECT 'S', current_setting('sparse_maxscore.algorithm', true), current_setting('sparse_maxscore.initial_k', true);"
		} >"$d/recall.sql"
		local t0
		t0=$(now)
		if ! PGOPTIONS="$BASE_PGOPTIONS $opts" sql -f "$d/recall.sql" >"$d/recall.out" 2>"$d/recall.err"; then
			note "arm $name: the recall queries failed: $(head -n 3 "$d/recall.err")"
			NOTES+=("docs=$tier arm $name failed: $(head -n 1 "$d/recall.err")")
			FAILED=1
			server_ready
			return 0
		fi
		note "arm $name: $nr queries for recall in $(elapsed "$t0") s"
		grep -v '^[CS]	' "$d/recall.out" >"$d/rows.tsv" || true
		local algo
		algo=$(awk -F'\t' '$1 == "S" { print $2 " (first round: the LIMIT, else initial_k " $3 ")" }' "$d/recall.out")
		truth_eval "$WORK/t$tier/docs.tsv" "$set" "$(truth_file "$WORK/t$tier" "$set" "$(arm_metric "$arm")")" \
			"$nr" "$limit" "$d/rows.tsv" "$(arm_metric "$arm")"
		recall=$RECALL exact=$EXACT
		# the settings the paired run gives this arm (paired_set): those its
		# plan and its recall queries were checked with
		ARM_OPTS_OK[$tier.$name]=$opts
		if [ "$arm" = hnsw ]; then
			exact=n/a
		elif [ "${exact%%/*}" != "${exact##*/}" ]; then
			note "arm $name: NOT EXACT: $exact queries match the brute force"
			NOTES+=("docs=$tier arm $name is not exact: only $exact queries matched the brute force")
			FAILED=1
		fi
		if grep -q '^C	' "$d/recall.out"; then
			{
				printf 'rounds\tpostings_decoded\tblocks_decoded\tblocks_skipped\tcandidates_scored\trows_returned\n'
				grep '^C	' "$d/recall.out" | cut -f 3-
			} >"$d/counters.tsv"
			{
				column_stats "$d/counters.tsv"
				echo "algorithm $algo -"
			} | awk -v t="$tier" -v a="$name" '{ v = $2; for (i = 3; i < NF; i++) v = v " " $i
				print t "\t" a "\t" $1 "\t" v "\t" $NF }' >>"$WORK/counters.tsv"
		fi
	fi

	# latency and throughput
	script=$d/bench.sql
	local vars='\set qid random(1, :nq)'
	case $arm in
	pk_lookup) vars='\set id random(1, :ndocs)' ;;
	pk_floor) vars+=$'\n'"\\set id random(1, greatest(1, :ndocs - $limit + 1))" ;;
	esac
	printf '%s\n%s;\n' "$vars" "$(arm_sql "$arm" "$set" "$limit")" >"$script"
	# warm-up, not measured: the recall queries read only the pages of the
	# first NRECALL queries, and an index larger than shared_buffers would
	# otherwise be read in by whichever arm runs first
	if [ "$WARMUP" -gt 0 ] && [[ $arm != seqscan* ]]; then
		note "arm $name: warm-up, pgbench -c 1 -T $WARMUP (not measured)"
		if ! PGOPTIONS="$BASE_PGOPTIONS $opts" pgbench -n -M prepared -c 1 -j 1 -T "$WARMUP" \
			-D nq="$(set_nq "$set")" -D ndocs="$tier" -f "$script" "$DSN" >"$d/warmup.out" 2>&1; then
			NOTES+=("docs=$tier arm $name failed in its warm-up: $(grep -m1 -i error "$d/warmup.out" || tail -n 1 "$d/warmup.out")")
			FAILED=1
			server_ready
			return 0
		fi
	fi
	# the measured runs: queued, and run by measure_queue (now if unsliced)
	local i=${#Q_NAME[@]}
	Q_TIER[i]=$tier Q_NAME[i]=$name Q_ARM[i]=$arm Q_SET[i]=$set Q_LIMIT[i]=$limit
	Q_CLIENTS[i]=$clients Q_DIR[i]=$d Q_OPTS[i]=$opts Q_SCRIPT[i]=$script
	Q_RECALL[i]=$recall Q_EXACT[i]=$exact Q_FORCED[i]=$forced
	for c in $clients; do
		rm -f "$d/log_c$c".* "$d/pgbench_c$c".*
		Q_FAILED[$i.$c]=0
	done
	# unsliced: measured now, right after its own warm-up
	[ "$SLICES" = 1 ] && measure_queue
	return 0
}

# the arms run_arm queued: SLICES rounds in which every arm's runs (one per
# client count) take SLICE_T s each, in queue order, round k starting at the
# k-th arm (so that no arm always comes first after the warm-ups, or after
# the same other arm); then the seq scan arms, each in one run of DURATION
# s.  So on a tier whose relations do not fit in memory, no arm is measured
# only before the OS cache has filled, or only after (doc/decisions.md
# "bench/run measures the arms in slices").  The first transaction of each
# connection of a sliced run (it loads the backend's caches; one per client
# and slice) is left out of the latencies.  Rows go to ARMS_TSV in queue
# order.
measure_run() {	# measure_run I CLIENTS SECONDS SLICE
	local i=$1 c=$2 t=$3 k=$4 d=${Q_DIR[$1]} cname=${Q_NAME[$1]}
	[ "$c" -gt 1 ] && cname=${cname}_c$c
	note "arm $cname: pgbench -M prepared -c $c -T $t$([ "$SLICES" -gt 1 ] && [ "$k" != 0 ] && echo " (slice $k of $SLICES)")"
	# stdout (the final report) to a file; stderr (progress, errors) to a file and the terminal
	if ! PGOPTIONS="$BASE_PGOPTIONS ${Q_OPTS[$i]}" pgbench -n -M prepared -c "$c" -j "$c" -T "$t" -P 5 \
		-l --log-prefix="$d/log_c$c.s$k" -D nq="$(set_nq "${Q_SET[$i]}")" -D ndocs="${Q_TIER[$i]}" -f "${Q_SCRIPT[$i]}" "$DSN" \
		2>&1 >"$d/pgbench_c$c.s$k.out" | tee "$d/pgbench_c$c.s$k.err" | sed -u 's/^/    /'; then
		NOTES+=("docs=${Q_TIER[$i]} arm $cname failed in pgbench: $(grep -m1 -i error "$d/pgbench_c$c.s$k.err" || tail -n 1 "$d/pgbench_c$c.s$k.err")")
		FAILED=1
		Q_FAILED[$i.$c]=1
		server_ready
	fi
}

measure_queue() {
	local i j c k n=${#Q_NAME[@]}
	for ((k = 1; k <= SLICES; k++)); do
		for ((j = 0; j < n; j++)); do
			i=$(((j + k - 1) % n))	# round k starts at the k-th arm
			[[ ${Q_ARM[$i]} = seqscan* ]] && continue
			for c in ${Q_CLIENTS[$i]}; do
				[ "${Q_FAILED[$i.$c]}" = 0 ] && measure_run "$i" "$c" "$SLICE_T" "$k"
			done
		done
	done
	for ((i = 0; i < n; i++)); do
		[[ ${Q_ARM[$i]} = seqscan* ]] || continue
		for c in ${Q_CLIENTS[$i]}; do
			measure_run "$i" "$c" "$DURATION" 0
		done
	done
	for ((i = 0; i < n; i++)); do
		for c in ${Q_CLIENTS[$i]}; do
			arm_row "$i" "$c"
		done
	done
	Q_TIER=() Q_NAME=() Q_ARM=() Q_SET=() Q_LIMIT=() Q_CLIENTS=() Q_DIR=() Q_OPTS=() Q_SCRIPT=()
	Q_RECALL=() Q_EXACT=() Q_FORCED=() Q_FAILED=()
}

arm_row() {	# arm_row I CLIENTS: the arm's statistics over its runs, to ARMS_TSV
	local i=$1 c=$2 d=${Q_DIR[$1]} cname=${Q_NAME[$1]} lat tps txns failed p50 p90 p99 mean
	[ "$c" -gt 1 ] && cname=${cname}_c$c
	[ "${Q_FAILED[$i.$c]}" = 0 ] || return 0
	# tps: the mean over the runs (of equal length); failed transactions: the sum
	tps=$(cat "$d/pgbench_c$c".s*.out | sed -n 's/^tps = \([0-9.]*\).*/\1/p' |
		awk '{ s += $1; n++ } END { if (n) printf "%.3f", s / n; else print 0 }')
	failed=$(cat "$d/pgbench_c$c".s*.out | sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }')
	if [ "$failed" != 0 ]; then
		NOTES+=("docs=${Q_TIER[$i]} arm $cname: $failed failed transactions")
		FAILED=1
	fi
	if [[ ${Q_ARM[$i]} = seqscan* ]] || [ "$SLICES" = 1 ]; then
		cat "$d/log_c$c".s*.* >"$d/log_c$c.all"
	else
		# pgbench -l: client, transaction number (from 0 per connection), latency (us), ...
		awk '$2 != 0' "$d/log_c$c".s*.* >"$d/log_c$c.all"
	fi
	lat=$(latency_stats "$d/lat_c$c.txt" "$d/log_c$c.all")
	rm -f "$d/log_c$c.all"
	# a CDF of at most 1000 points for the plot
	cdf_points "$d/lat_c$c.txt" >"$OUT/latency/cdf_${Q_TIER[$i]}_$cname.dat"
	read -r p50 p90 p99 mean txns <<<"$lat"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\n' \
		"${Q_TIER[$i]}" "$cname" "${Q_SET[$i]}" "$c" "${Q_LIMIT[$i]}" "$p50" "$p90" "$p99" "$mean" "$tps" "$txns" \
		"${Q_RECALL[$i]}" "${Q_EXACT[$i]}" "${Q_FORCED[$i]}" >>"$ARMS_TSV"
	note "arm=$cname p50_ms=$p50 p99_ms=$p99 tps=$(printf %.1f "$tps") recall@10=${Q_RECALL[$i]} exact=${Q_EXACT[$i]}"
}
Q_TIER=() Q_NAME=() Q_ARM=() Q_SET=() Q_LIMIT=() Q_CLIENTS=() Q_DIR=() Q_OPTS=() Q_SCRIPT=()
Q_RECALL=() Q_EXACT=() Q_FORCED=()
declare -A Q_FAILED ARM_OPTS_OK

# paired_set TIER SET SFX: the index arms of a query set that ran (auto and
# each forced algorithm) once more with bench/paired: two warm connections
# per arm, the set's first NRECALL queries in a random order, each query
# answered by every arm back to back, for PAIRED seconds.  Arms measured
# seconds apart differ by more than auto differs from its arms on this
# machine (doc/decisions.md "Paired arms"); side by side they share the
# moment.  One row per arm to WORK/paired.tsv: tier, set, arm, executions,
# p50, p90, p99, mean (ms), and the median over the queries of the arm's
# time over index's.
paired_set() {
	local tier=$1 set=$2 sfx=$3 a specs=() nq out
	[ "$PAIRED" -gt 0 ] || return 0
	for a in index index_maxscore index_exhaustive index_ranges; do
		[ -n "${ARM_OPTS_OK[$tier.$a$sfx]+x}" ] && specs+=("$a=$BASE_PGOPTIONS ${ARM_OPTS_OK[$tier.$a$sfx]}")
	done
	[ ${#specs[@]} -ge 2 ] && [[ ${specs[0]} = index=* ]] || return 0
	nq=$NRECALL
	[ "$nq" -le "$(set_nq "$set")" ] || nq=$(set_nq "$set")
	out=$WORK/t$tier/paired_$set
	log "paired: ${#specs[@]} index arms side by side on $tier documents, $set queries ($nq queries, $PAIRED s)"
	if ! "$BIN/paired" "$DSN" "$(arm_sql index "$set" 10 | sed 's/:qid/$1/')" "$nq" "$PAIRED" "$SEED" \
		"$out.tsv" "${specs[@]}" >"$out.out" 2>"$out.err"; then
		NOTES+=("docs=$tier: the paired run on $set queries failed: $(head -n 1 "$out.err")")
		FAILED=1
		server_ready
		return 0
	fi
	awk -v t="$tier" -v s="$set" '{ print t "\t" s "\t" $0 }' "$out.out" >>"$WORK/paired.tsv"
	note "paired: $(awk '{ printf "%s%s p50 %s ms", (NR > 1 ? ", " : ""), $1, $3 }' "$out.out")"
}

# every arm of a tier: on the first query set at 1 and 2 clients, the
# others at 1 client with a _<set> suffix
arms_tier() {	# arms_tier TIER
	local tier=$1 first=${QSETS[0]} s sfx clients
	for s in "${QSETS[@]}"; do
		sfx=
		clients="1 2"
		if [ "$s" != "$first" ]; then
			sfx=_$s
			clients=1
		else
			log "arms on $tier documents, $s queries"
			if [ "$(field ids "$DSTATS")" = sparse ]; then	# --corpus with other ids than 1..N
				note "arms pk_lookup, pk_floor: skipped: the ids are not 1..$tier"
				NOTES+=("docs=$tier: arms pk_lookup and pk_floor skipped: they draw ids from 1..$tier, and the corpus's ids are not those")
			else
				run_arm "$tier" pk_lookup "$s" - "1 2" pk_lookup
				if [ $TIER_AM = 1 ]; then
					run_arm "$tier" pk_floor "$s" 10 1 pk_floor
				fi
			fi
		fi
		[ -n "$sfx" ] && log "arms on $tier documents, $s queries"
		if [ $TIER_AM = 1 ]; then
			run_arm "$tier" index "$s" 10 "$clients" "index$sfx"
			[ -z "$sfx" ] && run_arm "$tier" index_limit100 "$s" 100 "$clients" index_limit100
			run_arm "$tier" index_maxscore "$s" 10 "$clients" "index_maxscore$sfx"
			run_arm "$tier" index_exhaustive "$s" 10 "$clients" "index_exhaustive$sfx"
			run_arm "$tier" index_ranges "$s" 10 "$clients" "index_ranges$sfx"
			# --metric cosine: ORDER BY v <=> q through the cosine index;
			# --metric l2: ORDER BY v <-> q through the L2 index
			[ $TIER_COS = 1 ] && run_arm "$tier" index_cosine "$s" 10 "$clients" "index_cosine$sfx"
			[ $TIER_L2 = 1 ] && run_arm "$tier" index_l2 "$s" 10 "$clients" "index_l2$sfx"
		elif [ -z "$sfx" ] && [ $HAVE_AM = 0 ]; then
			note "arms index, index_limit100, index_maxscore, index_exhaustive, index_ranges: skipped: index not available"
			NOTES+=("arms index, index_limit100, index_maxscore, index_exhaustive, index_ranges skipped: index not available (no access method sparse_maxscore)")
		fi
		if [ "$SHARDS" -gt 0 ] && [ -z "$sfx" ]; then	# --shards: 1 client, first set
			run_arm "$tier" sharded "$s" 10 1 sharded
			run_arm "$tier" sharded_union "$s" 10 1 sharded_union
		fi
		run_arm "$tier" seqscan "$s" 10 "$clients" "seqscan$sfx"
		# the checks of the brute force's cosine and L2 rankings against the server
		[ $COSINE = 1 ] && [ -z "$sfx" ] && run_arm "$tier" seqscan_cosine "$s" 10 1 seqscan_cosine
		[ $L2 = 1 ] && [ -z "$sfx" ] && run_arm "$tier" seqscan_l2 "$s" 10 1 seqscan_l2
		if [ $TIER_PGV = 1 ]; then
			run_arm "$tier" hnsw "$s" 10 "$clients" "hnsw$sfx"
		elif [ -z "$sfx" ] && [ $HAVE_PGV = 0 ]; then
			note "arm hnsw: skipped: pgvector not installed"
			NOTES+=("arm hnsw skipped: pgvector (extension vector) is not installed on the server")
		fi
		if [ "$SLICES" -gt 1 ]; then
			log "measured runs on $tier documents, $s queries: $SLICES slices of $SLICE_T s per arm and client count, the arms taking turns"
			measure_queue
		fi
		[ $TIER_AM = 1 ] && paired_set "$tier" "$s" "$sfx"
	done
}
