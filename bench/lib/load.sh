# bench/lib/load.sh: the tier's relations in the server (sourced by bench/run).
#   load_tier TIER      the query sets and the corpus with COPY, the primary
#                       key, VACUUM ANALYZE (LOAD_S)
#   load_indexes TIER   CREATE INDEX ... USING sparse_maxscore (BUILD_S,
#                       INDEX_BYTES; TIER_AM=0 when it failed) and pgvector's
#                       HNSW on tiers up to --hnsw-max-docs (HNSW_BUILD_S,
#                       HNSW_BYTES, TIER_PGV), the table's size (TABLE_BYTES);
#                       with --metric cosine a second sparse_maxscore index
#                       on docs, of sparsevec_cosine_ops (COS_BUILD_S,
#                       COS_INDEX_BYTES; TIER_COS=0 when it failed), with
#                       --metric l2 one of sparsevec_l2_ops (L2_BUILD_S,
#                       L2_INDEX_BYTES; TIER_L2)
#   load_drop_metrics   drops those (before the mixed arm, which writes)
#   load_prewarm TIER   pg_prewarm, everything or (when it does not fit in
#                       shared_buffers) the indexes and small relations
#   load_shards TIER    --shards: each shard's rows and index (SHARD_INFO)

CREATE_INDEX_PROGRESS="SELECT 'CREATE INDEX: ' || phase
	|| CASE WHEN blocks_total > 0 THEN ', blocks ' || blocks_done || '/' || blocks_total ELSE '' END
	|| CASE WHEN tuples_done > 0 THEN ', tuples ' || tuples_done || coalesce('/' || nullif(tuples_total, 0), '') ELSE '' END
	FROM pg_stat_progress_create_index"

load_tier() {	# load_tier TIER
	local tier=$1 s t0
	sql -c "DROP TABLE IF EXISTS docs, hnsw_docs CASCADE"
	for s in "${QSETS[@]}"; do
		sql -c "DROP TABLE IF EXISTS queries_$s, hnsw_queries_$s"
		sql -1 -c "CREATE TABLE queries_$s (qid int PRIMARY KEY, q sparsevec($DIM))" \
			-c "\\copy queries_$s FROM '$WORK/q_$s.tsv'"
	done
	log "load $tier documents with COPY"
	bg_start poll 5 "SELECT 'COPY ' || tuples_processed || '/$tier rows' FROM pg_stat_progress_copy"
	POLL_PID=$BG_LAST
	t0=$(now)
	sql -1 -c "CREATE TABLE docs (id bigint, v sparsevec($DIM))" -c "\\copy docs FROM pstdin" <"$T/docs.tsv"
	LOAD_S=$(elapsed "$t0")
	bg_stop $POLL_PID
	note "loaded in $LOAD_S s"
	t0=$(now)
	sql -c "ALTER TABLE docs ADD PRIMARY KEY (id)"
	sql -c "VACUUM ANALYZE docs"
	for s in "${QSETS[@]}"; do sql -c "VACUUM ANALYZE queries_$s"; done
	note "primary key and VACUUM ANALYZE in $(elapsed "$t0") s"
}

# load_metric_index TIER INDEX CLASS ARMS: CREATE INDEX INDEX ON docs USING
# sparse_maxscore (v CLASS), with --index-options; sets MI_BUILD_S and
# MI_BYTES, or fails (with a note that ARMS are skipped)
load_metric_index() {
	local tier=$1 idx=$2 class=$3 arms=$4 t0 rc=0
	MI_BUILD_S=n/a MI_BYTES=n/a
	log "CREATE INDEX ... USING sparse_maxscore (v $class)"
	bg_start poll 5 "$CREATE_INDEX_PROGRESS"
	POLL_PID=$BG_LAST
	t0=$(now)
	if sql -c "CREATE INDEX $idx ON docs USING sparse_maxscore (v $class)$INDEX_WITH"; then
		MI_BUILD_S=$(elapsed "$t0")
		MI_BYTES=$(sql -c "SELECT pg_relation_size('$idx')")
		note "built in $MI_BUILD_S s, $(numfmt --to=iec "$MI_BYTES")B"
	else
		rc=1
		NOTES+=("docs=$tier: CREATE INDEX ... USING sparse_maxscore (v $class) failed; $arms arms skipped")
		FAILED=1
		server_ready
	fi
	bg_stop $POLL_PID
	return $rc
}

load_indexes() {	# load_indexes TIER
	local tier=$1 s t0
	# the index
	BUILD_S=n/a INDEX_BYTES=n/a SEG_INFO= TIER_AM=$HAVE_AM
	if [ $HAVE_AM = 1 ]; then
		log "CREATE INDEX ... USING sparse_maxscore"
		bg_start poll 5 "$CREATE_INDEX_PROGRESS"
		POLL_PID=$BG_LAST
		t0=$(now)
		if sql -c "CREATE INDEX docs_v_idx ON docs USING sparse_maxscore (v sparsevec_ip_ops)$INDEX_WITH"; then
			BUILD_S=$(elapsed "$t0")
			INDEX_BYTES=$(sql -c "SELECT pg_relation_size('docs_v_idx')")
			note "built in $BUILD_S s, $(numfmt --to=iec "$INDEX_BYTES")B"
			# what its segments hold, their pages by kind (report: "Range data")
			SEG_INFO=$(sql -c "SELECT format('seg_n=%s seg_ranged=%s seg_quant=%s seg_post=%s seg_skip=%s seg_dict=%s seg_fwd=%s seg_range=%s seg_other=%s block_size=%s',
					count(*), count(*) FILTER (WHERE range_data), count(*) FILTER (WHERE quantized),
					coalesce(sum(posting_pages), 0), coalesce(sum(skip_pages), 0), coalesce(sum(dictionary_pages), 0),
					coalesce(sum(forward_pages), 0), coalesce(sum(range_pages), 0), coalesce(sum(other_pages), 0),
					current_setting('block_size'))
				FROM sparse_maxscore_segments('docs_v_idx')") || SEG_INFO=
		else
			TIER_AM=0
			NOTES+=("docs=$tier: CREATE INDEX ... USING sparse_maxscore failed; index arms skipped")
			FAILED=1
			server_ready
		fi
		bg_stop $POLL_PID
	fi
	# the cosine index (--metric cosine) and the L2 index (--metric l2):
	# same table, same options
	COS_BUILD_S=n/a COS_INDEX_BYTES=n/a TIER_COS=0
	if [ $COSINE = 1 ] && [ $HAVE_AM = 1 ] &&
		load_metric_index "$tier" docs_v_cosine_idx sparsevec_cosine_ops index_cosine; then
		COS_BUILD_S=$MI_BUILD_S COS_INDEX_BYTES=$MI_BYTES TIER_COS=1
	fi
	L2_BUILD_S=n/a L2_INDEX_BYTES=n/a TIER_L2=0
	if [ $L2 = 1 ] && [ $HAVE_AM = 1 ] &&
		load_metric_index "$tier" docs_v_l2_idx sparsevec_l2_ops index_l2; then
		L2_BUILD_S=$MI_BUILD_S L2_INDEX_BYTES=$MI_BYTES TIER_L2=1
	fi
	HNSW_BUILD_S=n/a HNSW_BYTES=n/a TIER_PGV=$HAVE_PGV
	if [ $HAVE_PGV = 1 ] && [ "$tier" -gt "$HNSW_MAX_DOCS" ]; then
		TIER_PGV=0
		note "pgvector: no HNSW on this tier (--hnsw-max-docs $HNSW_MAX_DOCS)"
		NOTES+=("docs=$tier: hnsw arms not run (--hnsw-max-docs $HNSW_MAX_DOCS)")
	fi
	if [ $TIER_PGV = 1 ]; then
		log "pgvector: copy into $PGV.sparsevec and CREATE INDEX ... USING hnsw"
		# pgvector's sparsevec reads our text format
		sql -c "CREATE TABLE hnsw_docs AS SELECT id, v::text::$PGV.sparsevec($DIM) AS v FROM docs" \
			-c "ALTER TABLE hnsw_docs ADD PRIMARY KEY (id)" -c "VACUUM ANALYZE hnsw_docs"
		for s in "${QSETS[@]}"; do
			sql -c "CREATE TABLE hnsw_queries_$s AS SELECT qid, q::text::$PGV.sparsevec($DIM) AS q FROM queries_$s" \
				-c "ALTER TABLE hnsw_queries_$s ADD PRIMARY KEY (qid)"
		done
		bg_start poll 10 "$CREATE_INDEX_PROGRESS"
		POLL_PID=$BG_LAST
		t0=$(now)
		if sql -c "CREATE INDEX hnsw_docs_v_idx ON hnsw_docs USING hnsw (v $PGV.sparsevec_ip_ops)"; then
			HNSW_BUILD_S=$(elapsed "$t0")
			HNSW_BYTES=$(sql -c "SELECT pg_relation_size('hnsw_docs_v_idx')")
			note "hnsw built in $HNSW_BUILD_S s, $(numfmt --to=iec "$HNSW_BYTES")B"
		else
			TIER_PGV=0
			NOTES+=("docs=$tier: CREATE INDEX ... USING hnsw failed; hnsw arms skipped")
			FAILED=1
			server_ready
		fi
		bg_stop $POLL_PID
	fi
	TABLE_BYTES=$(sql -c "SELECT pg_table_size('docs')")
}

load_drop_metrics() {
	if [ "${TIER_COS:-0}" = 1 ]; then
		sql -c "DROP INDEX docs_v_cosine_idx"
		TIER_COS=0
	fi
	if [ "${TIER_L2:-0}" = 1 ]; then
		sql -c "DROP INDEX docs_v_l2_idx"
		TIER_L2=0
	fi
	return 0
}

load_prewarm() {	# load_prewarm TIER
	local tier=$1
	log "warm the cache (pg_prewarm)"
	# everything when it fits in 90% of shared_buffers; otherwise (10M
	# documents: a ~10.5 GB table) the indexes and the relations under 256 MB
	# only, and the table's pages are read on demand (the index arms fetch 10
	# or 100 rows per query; the seqscan arm reads it all)
	BENCH_RELS="c.relkind IN ('r', 'i', 't')
		  AND (c.relnamespace = 'sparsevec_bench'::regnamespace
		       OR c.oid IN (SELECT reltoastrelid FROM pg_class WHERE relnamespace = 'sparsevec_bench'::regnamespace)
		       OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN
		                    (SELECT reltoastrelid FROM pg_class WHERE relnamespace = 'sparsevec_bench'::regnamespace)))"
	PREWARM_ALL=$(sql -c "SELECT sum(pg_relation_size(c.oid)) < 0.9 * pg_size_bytes(current_setting('shared_buffers'))
		FROM pg_class c WHERE $BENCH_RELS")
	if [ "$PREWARM_ALL" != t ]; then
		note "the relations do not fit in shared_buffers: prewarming the indexes and the relations under 256 MB only"
		NOTES+=("docs=$tier: the relations did not fit in 90% of shared_buffers: only the indexes and the relations under 256 MB were prewarmed; the table's pages were read on demand")
	fi
	sql -c "SELECT count(*), sum(pg_prewarm(c.oid)) FROM pg_class c
		WHERE $BENCH_RELS AND ('$PREWARM_ALL' OR c.relkind = 'i' OR pg_relation_size(c.oid) < 256 * 1024 * 1024)" |
		awk -F'\t' '{ printf "    %s relations, %s blocks\n", $1, $2 }'
}

load_shards() {	# load_shards TIER
	local tier=$1 i t0 rows=() b build=0 bytes=0
	t0=$(now)
	for ((i = 1; i <= SHARDS; i++)); do
		shard_sql "$i" -c "DROP TABLE IF EXISTS docs" -c "CREATE TABLE docs (id bigint PRIMARY KEY, v sparsevec($DIM))"
		sql -c "\\copy (SELECT id, v FROM docs WHERE satisfies_hash_partition('docs_sharded'::regclass,
			$SHARDS, $((i - 1)), id)) TO pstdout WITH (FORMAT binary)" |
			shard_sql "$i" -c "\\copy docs FROM pstdin WITH (FORMAT binary)"
		shard_sql "$i" -c "VACUUM ANALYZE docs"
		rows+=("$(shard_sql "$i" -c "SELECT count(*) FROM docs")")
	done
	SHARD_INFO[$tier]="load_s=$(elapsed "$t0") rows=$(IFS=,; echo "${rows[*]}")"
	note "shards loaded (${rows[*]} rows) in $(field load_s "${SHARD_INFO[$tier]}") s"
	for ((i = 1; i <= SHARDS; i++)); do
		t0=$(now)
		shard_sql "$i" -c "CREATE INDEX docs_v_idx ON docs USING sparse_maxscore (v sparsevec_ip_ops)$INDEX_WITH"
		b=$(elapsed "$t0")
		build=$(awk -v a="$build" -v b="$b" 'BEGIN { printf "%.1f", a + b }')
		bytes=$((bytes + $(shard_sql "$i" -c "SELECT pg_relation_size('docs_v_idx')")))
		shard_sql "$i" -c "SELECT sum(pg_prewarm(c.oid)) FROM pg_class c WHERE c.oid IN ('docs'::regclass,
			'docs_v_idx'::regclass, 'docs_pkey'::regclass, (SELECT reltoastrelid FROM pg_class WHERE oid = 'docs'::regclass))" >/dev/null
	done
	SHARD_INFO[$tier]+=" build_s=$build index_bytes=$bytes"
	note "shard indexes built in $build s (sum), $(numfmt --to=iec "$bytes")B"
}
