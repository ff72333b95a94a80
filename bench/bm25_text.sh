# bench/bm25_text.sh: the --bm25-text DIR arm of bench/run, sourced by it
# (uses its sql, note, log, latency_stats, WORK, OUT, DSN, DURATION, NOTES,
# BASE_PGOPTIONS).  See bench/README.md "BM25 from text".
#
# Corpus: every text file under DIR (up to BM25_MAX_FILES, each cut at
# 100 kB), one document each.  Ranked two ways on the same tsvector
# column:
#   bm25_text    ORDER BY bm25 <#> (SELECT docs_bm25_query(q)) LIMIT 10,
#                served by sparse_maxscore (examples/bm25/recipe.sql; the
#                scalar subquery computes the query vector once, README)
#   ts_rank_gin  WHERE tsv @@ tq ORDER BY ts_rank(tsv, tq) DESC LIMIT 10,
#                a GIN index on tsv; tq ORs the query's lexemes, so both
#                rank the same candidate documents
#   pg_textsearch ORDER BY body <@> to_bm25query(q, idx) LIMIT 10, the
#                bm25 index of Timescale's pg_textsearch, with the recipe's
#                k1 and b; only when the server has pg_textsearch (preloaded:
#                bench/run adds it to shared_preload_libraries when the
#                installation has it), else reported as not run
# Each runs under pgbench -M prepared, one client, DURATION s, a random
# query per transaction, query building included.  Reported, not asserted:
# how many of ts_rank's and pg_textsearch's top 10 are in BM25's top 10
# (different rankings; pg_textsearch's differs by definition in places,
# doc/benchmarks.md "pg_textsearch").  Checked: BM25 through the index
# returns the distances of a seq scan.

BM25_MAX_FILES=${BM25_MAX_FILES:-20000}
BM25_NQ=${BM25_NQ:-200}

# pg_textsearch, when the server can run it.  Sets TS_NOTE (why the arm
# does not run; empty when it does), TS_VERSION, TS_OPTS (a search_path
# that reaches its operator) and TS_BUILD_S.  Never fails the run.
bm25_pgts_setup() {
	local k1b k1 b t0 schema err
	TS_NOTE= TS_VERSION= TS_OPTS= TS_BUILD_S=
	if [ -z "$(sql -c "SELECT 1 FROM pg_available_extensions WHERE name = 'pg_textsearch'")" ]; then
		TS_NOTE="pg_textsearch is not available in this server (no pg_textsearch.control): arm not run"
		return 0
	fi
	if [ -z "$(sql -c "SELECT 1 FROM pg_extension WHERE extname = 'pg_textsearch'")" ] &&
		! sql -c "SELECT 1 FROM unnest(string_to_array(current_setting('shared_preload_libraries'), ',')) l
			WHERE trim(l) = 'pg_textsearch'" | grep -q 1; then
		TS_NOTE="pg_textsearch is available but not in shared_preload_libraries, which it needs: arm not run"
		return 0
	fi
	# not in $(...): create_extension records what to undo in CREATED
	if ! create_extension pg_textsearch 2>"$WORK/bm25_text/pgts.err"; then
		TS_NOTE="CREATE EXTENSION pg_textsearch failed: arm not run ($(tail -n 1 "$WORK/bm25_text/pgts.err"))"
		return 0
	fi
	schema=$(sql -c "SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'pg_textsearch'")
	TS_VERSION=$(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'pg_textsearch'")
	TS_OPTS="-c search_path=sparsevec_bench,$EXTSCHEMA,$schema"
	# the recipe's k1 and b (docs_bm25_stats), so both score with the same parameters
	k1b=$(sql -c "SELECT k1, b FROM docs_bm25_stats")
	read -r k1 b <<<"$k1b"
	t0=$(now)
	if ! err=$(PGOPTIONS="$BASE_PGOPTIONS $TS_OPTS" sql -c "CREATE INDEX docs_body_bm25 ON docs USING bm25 (body)
			WITH (text_config = 'english', k1 = $k1, b = $b)" -c "ANALYZE docs" 2>&1); then
		TS_NOTE="pg_textsearch $TS_VERSION: CREATE INDEX ... USING bm25 failed: arm not run ($(tail -n 1 <<<"$err"))"
		return 0
	fi
	TS_BUILD_S=$(elapsed "$t0")
	TS_K1=$k1 TS_B=$b
}

bm25_text_arm() {
	local dir=$1 d=$WORK/bm25_text ndocs nq t0 load_s build_s gin_s stats plan forced=no
	local lat_b lat_t tps_b tps_t overlap exact ov nb nqs same dmed dmax
	mkdir -p "$d"
	log "bm25_text: corpus from $dir"
	[ -d "$dir" ] || { NOTES+=("bm25_text: $dir is not a directory: arm skipped"); return 0; }

	# the corpus as COPY text, and queries of 1 to 4 of its words
	find "$dir" -type f -size -10M -print0 2>/dev/null | sort -z | head -z -n "$BM25_MAX_FILES" |
		perl -MEncode -0 -ne 'BEGIN { binmode STDOUT, ":utf8" }
			chomp; next unless -T $_; open(my $f, "<", $_) or next;
			local $/ = \102400; my $t = <$f> // ""; close $f;
			$t = Encode::decode("UTF-8", $t, Encode::FB_DEFAULT);
			$t =~ s/\x00/ /g; $t =~ s/\\/\\\\/g; $t =~ s/\t/\\t/g; $t =~ s/\n/\\n/g; $t =~ s/\r/\\r/g;
			next unless $t =~ /[A-Za-z]{3}/; print ++$n, "\t", $t, "\n"' >"$d/docs.tsv"
	ndocs=$(wc -l <"$d/docs.tsv")
	[ "$ndocs" -ge 100 ] || { NOTES+=("bm25_text: only $ndocs text files under $dir: arm skipped"); return 0; }
	perl -e 'srand(11); my @w; while (<STDIN>) { my ($id, $t) = split /\t/, $_, 2;
			push @w, grep { length($_) < 20 } ($t =~ /\b([A-Za-z]{3,})\b/g) }
		for my $q (1 .. $ARGV[0]) { print $q, "\t", join(" ", map { $w[rand @w] } 1 .. 1 + ($q % 4)), "\n" }' \
		"$BM25_NQ" <"$d/docs.tsv" >"$d/queries.tsv"
	nq=$(wc -l <"$d/queries.tsv")

	sql -c "DROP TABLE IF EXISTS docs, docs_vocab, docs_bm25_stats, bm25_queries CASCADE" \
		-c "DROP FUNCTION IF EXISTS docs_bm25_row, docs_bm25_add_lexemes, docs_bm25_load, docs_bm25_refresh, docs_bm25_rebuild, docs_bm25_query"
	t0=$(now)
	sql -1 -c "CREATE TABLE docs (id bigint PRIMARY KEY, body text NOT NULL)" \
		-c "\\copy docs FROM '$d/docs.tsv'"
	load_s=$(elapsed "$t0")
	t0=$(now)
	# the recipe's objects go into the bench's schema (it names its schema)
	sql -c "SET docs_bm25.schema = 'sparsevec_bench'" -f "$ROOT/examples/bm25/recipe.sql" >/dev/null
	build_s=$(elapsed "$t0")
	t0=$(now)
	# the recipe keeps no tsvector column: the GIN arm's own
	sql -c "ALTER TABLE docs ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED" \
		-c "CREATE INDEX docs_tsv_gin ON docs USING gin (tsv)" -c "VACUUM ANALYZE docs" \
		-c "VACUUM ANALYZE docs_vocab"
	gin_s=$(elapsed "$t0")
	sql -1 -c "CREATE TABLE bm25_queries (qid int PRIMARY KEY, q text NOT NULL, tq tsquery)" \
		-c "\\copy bm25_queries (qid, q) FROM '$d/queries.tsv'" \
		-c "UPDATE bm25_queries SET tq = nullif(array_to_string(tsvector_to_array(to_tsvector('english', q)), ' | '), '')::tsquery" \
		-c "ANALYZE bm25_queries"
	stats=$(sql -c "SELECT format('%s documents, avgdl %s, %s lexemes, table %s, sparse_maxscore %s, GIN %s',
		n_docs, round(avgdl::numeric, 1), (SELECT count(*) FROM docs_vocab),
		pg_size_pretty(pg_table_size('docs')), pg_size_pretty(pg_relation_size('docs_bm25_idx')),
		pg_size_pretty(pg_relation_size('docs_tsv_gin'))) FROM docs_bm25_stats")
	note "bm25_text: $stats; load ${load_s} s, recipe (vocabulary, vectors, index) ${build_s} s, GIN ${gin_s} s"
	bm25_pgts_setup
	if [ -n "$TS_NOTE" ]; then
		note "bm25_text: $TS_NOTE"
		NOTES+=("bm25_text: $TS_NOTE")
	else
		note "bm25_text: pg_textsearch $TS_VERSION, bm25 index (k1 $TS_K1, b $TS_B) built in $TS_BUILD_S s, $(sql -c "SELECT pg_size_pretty(pg_relation_size('docs_body_bm25'))")"
	fi

	# the plans; BM25 must scan the sparse_maxscore index
	plan=$(sql -c "EXPLAIN SELECT id FROM docs ORDER BY bm25 <#> (SELECT docs_bm25_query(q) FROM bm25_queries WHERE qid = 1) LIMIT 10")
	local opts=
	if ! grep -q "Index Scan using docs_bm25_idx" <<<"$plan"; then
		forced=yes opts="-c enable_seqscan=off"
	fi
	{ echo "### bm25_text"; PGOPTIONS="$BASE_PGOPTIONS $opts" sql -c "EXPLAIN SELECT id FROM docs ORDER BY bm25 <#> (SELECT docs_bm25_query(q) FROM bm25_queries WHERE qid = 1) LIMIT 10"
	  echo; echo "### ts_rank_gin"; sql -c "EXPLAIN SELECT id FROM docs, (SELECT tq FROM bm25_queries WHERE qid = 1) x WHERE tsv @@ x.tq ORDER BY ts_rank(tsv, x.tq) DESC LIMIT 10"; echo; } >>"$OUT/plans.txt"
	local ts_opts=
	if [ -z "$TS_NOTE" ]; then
		plan=$(PGOPTIONS="$BASE_PGOPTIONS $TS_OPTS" sql -c "EXPLAIN SELECT id FROM docs ORDER BY body <@> to_bm25query((SELECT q FROM bm25_queries WHERE qid = 1), 'docs_body_bm25') LIMIT 10")
		grep -q "Index Scan using docs_body_bm25" <<<"$plan" || ts_opts="-c enable_seqscan=off"
		{ echo "### pg_textsearch"; PGOPTIONS="$BASE_PGOPTIONS $TS_OPTS $ts_opts" sql -c "EXPLAIN SELECT id FROM docs ORDER BY body <@> to_bm25query((SELECT q FROM bm25_queries WHERE qid = 1), 'docs_body_bm25') LIMIT 10"; echo; } >>"$OUT/plans.txt"
	fi

	# exactness (index against seq scan, distances bit for bit) and overlap
	read -r exact overlap < <(PGOPTIONS="$BASE_PGOPTIONS" sql <<-'EOSQL'
		CREATE TEMP TABLE r AS
		SELECT qid, q, tq, NULL::float8[] AS di, NULL::float8[] AS ds, NULL::bigint[] AS bi, NULL::bigint[] AS ti
		FROM bm25_queries;
		DO $$
		DECLARE x record;
		BEGIN
			FOR x IN SELECT qid, q, tq FROM r LOOP
				PERFORM set_config('enable_seqscan', 'off', true);
				UPDATE r SET di = (SELECT array_agg(dd ORDER BY n) FROM (SELECT row_number() OVER () n, dd FROM
					(SELECT bm25 <#> docs_bm25_query(x.q) dd FROM docs ORDER BY bm25 <#> docs_bm25_query(x.q) LIMIT 10) a) b),
					bi = (SELECT array_agg(id) FROM (SELECT id FROM docs ORDER BY bm25 <#> docs_bm25_query(x.q) LIMIT 10) a)
				WHERE qid = x.qid;
				PERFORM set_config('enable_seqscan', 'on', true);
				PERFORM set_config('enable_indexscan', 'off', true);
				UPDATE r SET ds = (SELECT array_agg(dd ORDER BY n) FROM (SELECT row_number() OVER () n, dd FROM
					(SELECT bm25 <#> docs_bm25_query(x.q) dd FROM docs ORDER BY 1 LIMIT 10) a) b)
				WHERE qid = x.qid;
				PERFORM set_config('enable_indexscan', 'on', true);
				UPDATE r SET ti = (SELECT array_agg(id) FROM (SELECT id FROM docs WHERE tsv @@ x.tq
					ORDER BY ts_rank(tsv, x.tq) DESC, id LIMIT 10) a)
				WHERE qid = x.qid;
			END LOOP;
		END $$;
		SELECT format('%s/%s', count(*) FILTER (WHERE di IS NOT DISTINCT FROM ds), count(*)),
			coalesce(round(avg((SELECT count(*) FROM unnest(ti) t WHERE t = ANY (bi))) FILTER (WHERE cardinality(ti) > 0), 2)::text, 'n/a')
			|| format(' (%s queries with matches)', count(*) FILTER (WHERE cardinality(ti) > 0))
		FROM r;
	EOSQL
	)
	note "bm25_text: exact (index = seq scan) $exact; ts_rank's top 10 in BM25's top 10: $overlap"
	[ "${exact%%/*}" = "${exact##*/}" ] || { NOTES+=("bm25_text: the index differed from a seq scan: $exact"); FAILED=1; }

	# pg_textsearch's top 10 against the exact BM25 top 10, rows of positive
	# score only on both sides (fewer than 10 when fewer rows match), and
	# the relative difference of the two scores of each row both return
	local ts_ov=
	if [ -z "$TS_NOTE" ]; then
		ts_ov=$(PGOPTIONS="$BASE_PGOPTIONS $TS_OPTS" sql <<-'EOSQL'
			CREATE TEMP TABLE p AS
			SELECT qid, q, NULL::bigint[] AS bi, NULL::float8[] AS bs, NULL::bigint[] AS pi, NULL::float8[] AS ps
			FROM bm25_queries;
			DO $$
			DECLARE x record;
			BEGIN
				PERFORM set_config('enable_seqscan', 'off', true);
				FOR x IN SELECT qid, q FROM p LOOP
					UPDATE p SET (bi, bs) = (SELECT array_agg(id ORDER BY n), array_agg(s ORDER BY n)
						FROM (SELECT row_number() OVER () n, id, s FROM
							(SELECT id, -(bm25 <#> docs_bm25_query(x.q)) s FROM docs
							 ORDER BY bm25 <#> docs_bm25_query(x.q) LIMIT 10) a) b WHERE s > 0)
					WHERE qid = x.qid;
					UPDATE p SET (pi, ps) = (SELECT array_agg(id ORDER BY n), array_agg(s ORDER BY n)
						FROM (SELECT row_number() OVER () n, id, s FROM
							(SELECT id, -(body <@> to_bm25query(x.q, 'docs_body_bm25')) s FROM docs
							 ORDER BY body <@> to_bm25query(x.q, 'docs_body_bm25') LIMIT 10) a) b WHERE s > 0)
					WHERE qid = x.qid;
				END LOOP;
			END $$;
			WITH z AS (SELECT cardinality(bi) nb, (SELECT count(*) FROM unnest(pi) t WHERE t = ANY (bi)) ov,
					pi IS NOT DISTINCT FROM bi same
				FROM p WHERE cardinality(bi) > 0),
			d AS (SELECT abs(ps[i] - bs[j]) / bs[j] d
				FROM p, generate_subscripts(p.pi, 1) i, generate_subscripts(p.bi, 1) j WHERE pi[i] = bi[j])
			SELECT coalesce(round(avg(ov), 2)::text, 'n/a'), coalesce(round(avg(nb), 2)::text, 'n/a'), count(*),
				count(*) FILTER (WHERE same),
				(SELECT coalesce(round((100 * percentile_cont(0.5) WITHIN GROUP (ORDER BY d))::numeric, 2)::text, 'n/a') FROM d),
				(SELECT coalesce(round((100 * max(d))::numeric, 2)::text, 'n/a') FROM d)
			FROM z;
		EOSQL
		) || { ts_ov=; NOTES+=("bm25_text: pg_textsearch's top 10 could not be compared (see the log)"); }
		[ -n "$ts_ov" ] && note "bm25_text: pg_textsearch against exact BM25 (overlap of 10, of the queries' matching rows; queries; same top 10; score difference median and max %): $ts_ov"
	fi

	# latency
	printf '\\set qid random(1, %s)\nSELECT id FROM docs ORDER BY bm25 <#> (SELECT docs_bm25_query(q) FROM bm25_queries WHERE qid = :qid) LIMIT 10;\n' \
		"$nq" >"$d/bm25.sql"
	printf '\\set qid random(1, %s)\nSELECT id FROM docs, (SELECT tq FROM bm25_queries WHERE qid = :qid) x WHERE tsv @@ x.tq ORDER BY ts_rank(tsv, x.tq) DESC LIMIT 10;\n' \
		"$nq" >"$d/tsrank.sql"
	printf '\\set qid random(1, %s)\nSELECT id FROM docs ORDER BY body <@> to_bm25query((SELECT q FROM bm25_queries WHERE qid = :qid), %s) LIMIT 10;\n' \
		"$nq" "'docs_body_bm25'" >"$d/pgts.sql"
	local arm script lat tps arms=(bm25_text ts_rank_gin) lat_p= tps_p=
	[ -z "$TS_NOTE" ] && arms+=(pg_textsearch)
	for arm in "${arms[@]}"; do
		script=$d/bm25.sql
		local o=$opts
		[ $arm = ts_rank_gin ] && script=$d/tsrank.sql o=
		[ $arm = pg_textsearch ] && script=$d/pgts.sql o="$TS_OPTS $ts_opts"
		note "arm $arm: pgbench -M prepared -c 1 -T $DURATION"
		rm -f "$d/log_$arm".*
		if ! PGOPTIONS="$BASE_PGOPTIONS $o" pgbench -n -M prepared -c 1 -T "$DURATION" -l \
			--log-prefix="$d/log_$arm" -f "$script" "$DSN" >"$d/$arm.out" 2>"$d/$arm.err"; then
			NOTES+=("bm25_text: arm $arm failed in pgbench: $(tail -n 1 "$d/$arm.err")")
			# pg_textsearch is someone else's extension: reported, the run goes on
			[ $arm = pg_textsearch ] || FAILED=1
			continue
		fi
		lat=$(latency_stats "$d/$arm.sorted" "$d/log_$arm".*)
		tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$d/$arm.out" | tail -n 1)
		[ $arm = bm25_text ] && lat_b=$lat tps_b=$tps
		[ $arm = ts_rank_gin ] && lat_t=$lat tps_t=$tps
		[ $arm = pg_textsearch ] && lat_p=$lat tps_p=$tps
	done

	# the figures the report renders (bench/lib/report.sh bm25_report,
	# bm25_summary), saved in the results folder's run.env
	BM25_RAN=1 BM25_DIR=$dir BM25_STATS=$stats BM25_QUERIES=$nq
	BM25_LOAD_S=$load_s BM25_BUILD_S=$build_s BM25_GIN_S=$gin_s BM25_FORCED=$forced
	BM25_EXACT=$exact BM25_OVERLAP=$overlap BM25_TS_OPTS=$ts_opts BM25_TS_OV=$ts_ov
	BM25_LAT_B=${lat_b:-} BM25_TPS_B=${tps_b:-} BM25_LAT_T=${lat_t:-} BM25_TPS_T=${tps_t:-}
	BM25_LAT_P=$lat_p BM25_TPS_P=$tps_p
	bm25_summary | sed 's/^/    /'
}
