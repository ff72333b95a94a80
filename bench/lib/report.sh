# bench/lib/report.sh: the report of a bench/run results folder, from the
# folder alone (sourced by bench/report, which bench/run runs on its own
# folder at the end; bench/run sources it too, for REPORT_KEYS and the
# --bm25-text arm's summary lines).  No server, nothing of the run's
# shell: report_load reads DIR/run.env (bench/lib/save.sh) into variables
# of the same names as the run's, the tables are read from DIR.
#
#   report_render DIR   the plots (gnuplot, when installed), DIR/report.md,
#                       DIR/summary.txt, and on stdout the notes, the
#                       report's path and the summary lines
#
# Files of DIR it reads (bench/README.md "The results folder"): run.env,
# notes.txt, arms.tsv, mixed.tsv, counters.tsv, touch.tsv, paired.tsv, latency/*.dat.

# run.env's scalar keys, in the order bench/run writes them (lists are
# space-separated); then per query set QSTATS.<set>, SET_NQ.<set>,
# SET_NRECALL.<set>, and per tier TIER_INFO.<tier>, MIXED_INFO.<tier>,
# SHARD_INFO.<tier>, FLOOR_CPU.<tier>.<set>
REPORT_KEYS="ARGS REPORT_DATE DURATION_TOTAL LOAD_START LOAD_END CPU CORES MEM OS KERNEL COMMIT BRANCH
	PGVERSION LOCAL SERVER_SETTINGS HUGE_NOTE HAVE_AM HAVE_PGV PGV PGV_VERSION
	TIERS QSETS SHAPE WEIGHTS CORPUS_MODE CORPUS CORPUS_INFO NQ NRECALL DURATION WARMUP SLICES SLICE_T PAIRED
	INDEX_OPTIONS METRICS MIXED_RATE MIXED_PENDING_KB SHARDS SHARD_FETCH FAILED
	BM25_RAN BM25_DIR BM25_STATS BM25_QUERIES BM25_LOAD_S BM25_BUILD_S BM25_GIN_S BM25_FORCED
	BM25_EXACT BM25_OVERLAP BM25_LAT_B BM25_TPS_B BM25_LAT_T BM25_TPS_T BM25_LAT_P BM25_TPS_P
	TS_NOTE TS_VERSION TS_K1 TS_B TS_BUILD_S BM25_TS_OPTS BM25_TS_OV"
REPORT_ARRAYS="QSTATS SET_NQ SET_NRECALL TIER_INFO MIXED_INFO SHARD_INFO FLOOR_CPU"

report_load() {	# report_load DIR: run.env and notes.txt into variables
	local dir=$1 line k v name keys
	keys=" $(echo $REPORT_KEYS) "
	[ -f "$dir/run.env" ] || { echo "bench/report: $dir/run.env: no such file (not a bench/run results folder?)" >&2; return 1; }
	for k in $REPORT_KEYS; do printf -v "$k" '%s' ''; done
	for name in $REPORT_ARRAYS; do unset "$name"; declare -gA "$name"; done
	while IFS= read -r line; do
		k=${line%%=*} v=${line#*=}
		if [[ $keys = *" $k "* ]]; then
			printf -v "$k" '%s' "$v"
		elif [[ $k = *.* && " $REPORT_ARRAYS " = *" ${k%%.*} "* && ${k#*.} =~ ^[A-Za-z0-9_.]+$ ]]; then
			name=${k%%.*}
			printf -v "${name}[${k#*.}]" '%s' "$v"
		else
			echo "bench/report: $dir/run.env: unknown line: $line" >&2
			return 1
		fi
	done <"$dir/run.env"
	read -r -a TIERS <<<"$TIERS"
	read -r -a QSETS <<<"$QSETS"
	NOTES=()
	[ -f "$dir/notes.txt" ] && mapfile -t NOTES <"$dir/notes.txt"
	return 0
}

fmt_bytes() { [ "$1" = n/a ] && echo n/a || numfmt --to=iec-i --suffix=B --format=%.1f "$1"; }
per_posting() { [ "$1" = n/a ] && echo n/a || awk -v b="$1" -v p="$2" 'BEGIN { printf "%.2f", b / p }'; }

# the report's line on where the corpus came from
corpus_origin() {
	case $CORPUS_MODE in
	user) echo "the vectors of \`$CORPUS\` (--corpus), checked by bench/corpus.c" ;;
	text) echo "BM25 impact vectors of English paragraphs from pinned Debian packages (--shape text, bench/text.sh): $CORPUS_INFO" ;;
	*) echo "bench/gen.c --shape, --weights" ;;
	esac
}

# the in-memory floor arm's name on set S (bench/floor.sh)
floor_name() { [ "$1" = "${QSETS[0]}" ] && echo floor || echo "floor_$1"; }

# the report's lines: every 1-client arm's p50 over the floor's, per set
floor_report() {	# floor_report TIER
	local tier=$1 s c50 c99
	awk -F'\t' -v t="$tier" '$1 == t && $2 ~ /^floor/ { f = 1 } END { exit !f }' "$DIR/arms.tsv" || return 0
	echo "In-memory floor (bench/floor.c: the same queries, term-at-a-time over the corpus held in RAM, no"
	echo "database; exact against the brute force): each arm's p50 at 1 client as a multiple of the floor's p50"
	echo "on the same query set:"
	echo
	echo "| arm | set | p50 ms | floor p50 ms | p50 / floor p50 |"
	echo "|---|---|---|---|---|"
	awk -F'\t' -v t="$tier" 'NR == FNR { if ($1 == t && $2 ~ /^floor/) f[$3] = $6; next }
		$1 == t && $4 == 1 && $2 !~ /^(floor|pk_)/ && $2 !~ /cosine|_l2(_|$)/ && ($3 in f) && $6 + 0 > 0 {
			printf "| %s | %s | %s | %s | %.2fx |\n", $2, $3, $6, f[$3], (f[$3] > 0 ? $6 / f[$3] : 0) }' \
		"$DIR/arms.tsv" "$DIR/arms.tsv"
	echo
	for s in "${QSETS[@]}"; do
		[ -n "${FLOOR_CPU[$tier.$s]:-}" ] || continue
		read -r c50 c99 <<<"${FLOOR_CPU[$tier.$s]}"
		echo "- \`$(floor_name "$s")\` by the CPU time of its thread (without the time it waited for a core): p50 $c50 ms, p99 $c99 ms."
	done
	echo
}

# metric_report TIER ARM OP INDEX CLASS TITLE BRUTE GOAL: the tier's
# section on another distance than <#> (--metric cosine, l2): ARM (its
# index arm, ORDER BY v OP q through INDEX of CLASS) against index, per
# query set and client count, then its seq scan arm's check of the brute
# force (truth --metric BRUTE); GOAL, when not empty, a sentence on the goal
metric_report() {
	local tier=$1 arm=$2 op=$3 idx=$4 class=$5 title=$6 brute=$7 goal=$8 seq
	seq=seqscan_${arm#index_}
	awk -F'\t' -v t="$tier" -v a="$arm" '$1 == t && index($2, a) == 1 { f = 1 } END { exit !f }' "$DIR/arms.tsv" || return 0
	echo "### $title (\`$op\`) against inner product (\`<#>\`)"
	echo
	echo "The same table, queries and LIMIT 10: \`index\` runs \`ORDER BY v <#> q\` through \`docs_v_idx\`"
	echo "(sparsevec_ip_ops), \`$arm\` runs \`ORDER BY v $op q\` through \`$idx\`"
	echo "($class, built on the same rows; sparse_maxscore.algorithm = auto for both). Its"
	echo "exactness is against the brute force's \`$op\` ranking (bench/truth.c --metric $brute), which"
	echo "\`$seq\` checks against the server.${goal:+ $goal}"
	echo
	echo "| set | clients | \`index\` p50 / p99 ms | \`$arm\` p50 / p99 ms | p50 ratio | p99 ratio | exact \`index\` | exact \`$arm\` |"
	echo "|---|---|---|---|---|---|---|---|"
	awk -F'\t' -v t="$tier" -v first="${QSETS[0]}" -v a="$arm" '
		function base(n, s, c) { if (c > 1) sub("_c" c "$", "", n); if (s != first) sub("_" s "$", "", n); return n }
		function ratio(x, y) { return (x + 0 > 0 && y + 0 > 0) ? sprintf("%.2fx", x / y) : "-" }
		$1 == t && $2 ~ /^index/ { b = base($2, $3, $4)
			if (b != "index" && b != a) next
			k = $3 SUBSEP $4
			if (!(k in seen)) { seen[k] = 1; order[++n] = k }
			p50[k, b] = $6; p99[k, b] = $8; ex[k, b] = $13 }
		END { for (i = 1; i <= n; i++) { k = order[i]; split(k, sc, SUBSEP)
			if (!((k, a) in p50)) continue
			printf "| %s | %s | %s / %s | %s / %s | %s | %s | %s | %s |\n", sc[1], sc[2],
				(k, "index") in p50 ? p50[k, "index"] : "-", (k, "index") in p99 ? p99[k, "index"] : "-",
				p50[k, a], p99[k, a],
				ratio(p50[k, a], p50[k, "index"]), ratio(p99[k, a], p99[k, "index"]),
				(k, "index") in ex ? ex[k, "index"] : "-", ex[k, a] } }' "$DIR/arms.tsv"
	echo
	awk -F'\t' -v t="$tier" -v a="$seq" -v op="$op" '$1 == t && $2 == a {
		printf "`%s` (the seq scan under `ORDER BY v %s q`, %s): exact %s against the brute force.\n\n", a, op, $3, $13 }' "$DIR/arms.tsv"
}

# the tier's "Cosine" section (--metric cosine): index_cosine against index
cosine_report() {
	metric_report "$1" index_cosine '<=>' docs_v_cosine_idx sparsevec_cosine_ops Cosine cosine \
		"Issue 39's goal: \`index_cosine\` p50 <= 1.2x \`index\` p50."
}

# the tier's "L2" section (--metric l2): index_l2 against index
l2_report() {
	metric_report "$1" index_l2 '<->' docs_v_l2_idx sparsevec_l2_ops L2 l2 \
		"Unless its nearest rows all lie within |q| of q, an L2 scan decodes every posting of the query's terms and every document's norm term, once (src/README \"Cosine and L2\", Rounds of every sign: no pruning while the heap's worst row is at or below 0): O(N) work, as for \`seqscan_l2\`."
}

# the index's storage parameter ranges (--index-options), in words: which
# segments get range data, the only ones on which index_ranges differs
# from index_maxscore
ranges_option_words() {
	local v=auto
	[[ ",$INDEX_OPTIONS" =~ [,\ ]ranges\ *=\ *([A-Za-z0-9_]+) ]] && v=${BASH_REMATCH[1],,}
	case $v in
	auto) echo "\`auto\` (the default): a build or a flush gives a segment range data when what it measures of the documents says it pays, a merge when all its inputs have it (src/README \"Ranges\")" ;;
	on) echo "\`on\` (--index-options): every segment a build or a flush writes has range data, and a merge's when all its inputs have it" ;;
	off) echo "\`off\` (--index-options): no segment has range data, so \`index_ranges\` ran MaxScore everywhere" ;;
	*) echo "\`$v\` (--index-options)" ;;
	esac
}

# auto_report TIER: the tier's "auto against every arm" section: per query
# set and client count, index (algorithm auto) over the fastest of the
# arms that force one algorithm, p50 and p99 each with its own fastest.
# From arms.tsv and run.env's INDEX_OPTIONS alone (bench/report).
auto_report() {
	local tier=$1
	awk -F'\t' -v t="$tier" '$1 == t && $2 ~ /^index_(maxscore|exhaustive|ranges)/ { f = 1 } END { exit !f }' "$DIR/arms.tsv" || return 0
	echo "### \`auto\` against every arm"
	echo
	echo "\`index\` (sparse_maxscore.algorithm = auto) over the fastest of \`index_maxscore\`, \`index_exhaustive\` and"
	echo "\`index_ranges\` on the same query set and client count, p50 and p99 each against its own fastest arm"
	echo "(below 1x: auto is faster than every arm that forces one algorithm):"
	echo
	echo "| set | clients | \`index\` p50 ms | fastest p50 ms | p50 auto / fastest | \`index\` p99 ms | fastest p99 ms | p99 auto / fastest |"
	echo "|---|---|---|---|---|---|---|---|"
	awk -F'\t' -v t="$tier" -v first="${QSETS[0]}" '
		function base(n, s, c) { if (c > 1) sub("_c" c "$", "", n); if (s != first) sub("_" s "$", "", n); return n }
		function ratio(x, y) { return (x + 0 > 0 && y + 0 > 0) ? sprintf("%.2fx", x / y) : "-" }
		$1 == t && $2 ~ /^index/ { b = base($2, $3, $4)
			if (b != "index" && b != "index_maxscore" && b != "index_exhaustive" && b != "index_ranges") next
			k = $3 SUBSEP $4
			if (!(k in seen)) { seen[k] = 1; order[++n] = k }
			p50[k, b] = $6; p99[k, b] = $8 }
		END { split("index_maxscore index_exhaustive index_ranges", other, " ")
			for (i = 1; i <= n; i++) { k = order[i]; split(k, sc, SUBSEP)
				if (!((k, "index") in p50)) continue
				b50 = b99 = ""
				for (j = 1; j <= 3; j++) { a = other[j]
					if (!((k, a) in p50)) continue
					if (b50 == "" || p50[k, a] + 0 < p50[k, b50] + 0) b50 = a
					if (b99 == "" || p99[k, a] + 0 < p99[k, b99] + 0) b99 = a }
				if (b50 == "") continue
				printf "| %s | %s | %s | %s (`%s`) | %s | %s | %s (`%s`) | %s |\n", sc[1], sc[2],
					p50[k, "index"], p50[k, b50], b50, ratio(p50[k, "index"], p50[k, b50]),
					p99[k, "index"], p99[k, b99], b99, ratio(p99[k, "index"], p99[k, b99]) } }' "$DIR/arms.tsv"
	echo
	paired_report "$tier"
	echo "Range data: the corpus table's \`sparse_maxscore segments\` row. \`index_ranges\` prunes by range on the"
	echo "segments that have range data and runs MaxScore on the others, so on an index without range data it"
	echo "equals \`index_maxscore\`. The index's storage"
	echo "parameter ranges: $(ranges_option_words)."
	echo
}

# seg_row TIER: the corpus table's row on the index's segments after CREATE
# INDEX, from sparse_maxscore_segments (TIER_INFO's seg_* fields): how
# many have range data and quantized weights, and the index's bytes per
# posting by what its pages hold
seg_row() {
	local info=${TIER_INFO[$1]}
	[ "$(field build_s "$info")" != n/a ] || return 0
	if [ -z "$(field seg_n "$info")" ]; then
		echo "| sparse_maxscore segments | not recorded (\`sparse_maxscore_segments\` did not answer after CREATE INDEX) |"
		return 0
	fi
	awk -v p="$(field postings "$info")" -v bs="$(field block_size "$info")" -v n="$(field seg_n "$info")" \
		-v r="$(field seg_ranged "$info")" -v q="$(field seg_quant "$info")" -v a="$(field seg_post "$info")" \
		-v b="$(field seg_skip "$info")" -v c="$(field seg_dict "$info")" -v d="$(field seg_fwd "$info")" \
		-v e="$(field seg_range "$info")" -v f="$(field seg_other "$info")" '
		function bp(x) { return (p + 0 > 0) ? sprintf("%.2f", x * bs / p) : "n/a" }
		BEGIN { printf "| sparse_maxscore segments | %d, %d with range data, %d with quantized weights; bytes per posting: postings %s, skip entries %s, dictionary %s, forward copy %s, range index and maxima %s, other %s (`sparse_maxscore_segments`) |\n",
			n, r, q, bp(a), bp(b), bp(c), bp(d), bp(e), bp(f) }'
}

# paired_report TIER: the paired runs of the tier (bench/paired.c, from
# paired.tsv): per query set, every index arm's latencies when the arms
# answer each query back to back, and auto over the fastest forced arm
paired_report() {
	local tier=$1
	[ -f "$DIR/paired.tsv" ] && grep -q "^$tier	" "$DIR/paired.tsv" || return 0
	echo "The same arms side by side (bench/paired.c, $PAIRED s per query set): two connections per arm,"
	echo "each warmed by answering every query once; then the set's recall queries in random orders,"
	echo "each answered by every arm back to back (the arm that goes first rotating, an arm's two"
	echo "connections taking turns), so that the arms share the machine's moment; latency is the"
	echo "client's, execute to last row, and higher than pgbench's on short queries (each backend"
	echo "waits while the others run, and probably finds its CPU caches used by them): compare the ratios:"
	echo
	echo "| set | arm | executions | p50 ms | p99 ms | mean ms | p50 / fastest p50 | mean / fastest mean | per query, median of time / \`index\`'s |"
	echo "|---|---|---|---|---|---|---|---|---|"
	awk -F'\t' -v t="$tier" '$1 == t { k = $2; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
			i = ++na[k]; arm[k, i] = $3; ex[k, i] = $4; p50[k, i] = $5; p99[k, i] = $7; mean[k, i] = $8; r[k, i] = $9 }
		END { for (j = 1; j <= n; j++) { k = order[j]; b50 = bm = ""
				for (i = 1; i <= na[k]; i++) {
					if (b50 == "" || p50[k, i] + 0 < b50 + 0) b50 = p50[k, i]
					if (bm == "" || mean[k, i] + 0 < bm + 0) bm = mean[k, i] }
				for (i = 1; i <= na[k]; i++)
					printf "| %s | %s | %s | %s | %s | %s | %.3fx | %.3fx | %.3f |\n", k, arm[k, i], ex[k, i], p50[k, i],
						p99[k, i], mean[k, i], p50[k, i] / b50, mean[k, i] / bm, r[k, i] } }' "$DIR/paired.tsv"
	echo
	paired_auto "$tier" | awk -F'\t' '{
		printf "- %s: `index` / the fastest forced arm, side by side: p50 %sx (`%s`), mean %sx (`%s`)\n", $1, $2, $3, $4, $5 }'
	echo
}

# paired_auto TIER: per query set of the tier's paired runs, tab-separated:
# set, index's p50 over the fastest forced arm's and that arm, the same
# for the mean
paired_auto() {
	[ -f "$DIR/paired.tsv" ] || return 0
	awk -F'\t' -v t="$1" '$1 == t && $3 != "index" { if (!(($2) in b50) || $5 + 0 < b50[$2] + 0) { b50[$2] = $5; a50[$2] = $3 }
			if (!(($2) in bm) || $8 + 0 < bm[$2] + 0) { bm[$2] = $8; am[$2] = $3 } }
		$1 == t && $3 == "index" { i50[$2] = $5; im[$2] = $8; if (!(($2) in seen)) { seen[$2] = 1; order[++n] = $2 } }
		END { for (j = 1; j <= n; j++) { k = order[j]; if (!(k in b50)) continue
				printf "%s\t%.3f\t%s\t%.3f\t%s\n", k, i50[k] / b50[k], a50[k], im[k] / bm[k], am[k] } }' "$DIR/paired.tsv"
}

# mixed_report TIER: the tier's "Mixed read/write" section
mixed_report() {
	local tier=$1 info=${MIXED_INFO[$1]:-} b a moved bs bd bp as ad ap
	[ -n "$info" ] || return 0
	local first=${QSETS[0]}
	echo "### Mixed read/write"
	echo
	echo "After the read-only arms, one pgbench client ran the \`index\` arm's statement ($first queries, LIMIT 10,"
	echo "a random query per transaction) while a second one inserted $MIXED_RATE rows/s into \`docs\` itself"
	echo "(\`--rate $MIXED_RATE\`: Poisson arrivals, one row per transaction), both for $DURATION s. New rows take ids"
	echo "above the corpus from a sequence and the vectors of the generator's next documents (a pool of"
	echo "$(field npool "$info") in a table \`mixed_pool\`, \`INSERT INTO docs SELECT ... FROM mixed_pool\`)."
	[ "$(field forced "$info")" = yes ] && echo "The reader ran with enable_seqscan=off (forced): the planner did not choose the index by itself."
	[ -n "$MIXED_PENDING_KB" ] &&
		echo "The inserting sessions ran with \`sparse_maxscore.pending_list_limit = ${MIXED_PENDING_KB}kB\` (--quick), so that a small corpus flushes and merges."
	echo
	echo "Queries: the read-only \`index\` arm against the same statement while the inserts ran:"
	echo
	echo "| run | p50 ms | p90 ms | p99 ms | mean ms | max ms | TPS | queries |"
	echo "|---|---|---|---|---|---|---|---|"
	awk -F'\t' -v t="$tier" 'NR == FNR { if ($1 == t && $2 == "index") { r = $0; split($0, x, "\t") } next }
		$1 == t && $2 == "mixed_query" { split($0, m, "\t") }
		function ratio(a, b) { return (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2fx", a / b) : "-" }
		END {
			if (r != "") printf "| `index` (read-only, 1 client, same run) | %s | %s | %s | %s | - | %.1f | %s |\n", x[6], x[7], x[8], x[9], x[10], x[11]
			if (m[2] == "") exit
			printf "| `mixed_query` (1 client, %s rows/s inserted meanwhile) | %s | %s | %s | %s | %s | %s | %s |\n", rate, m[3], m[4], m[5], m[6], m[7], m[8], m[9]
			if (r != "") printf "| mixed / read-only | %s | %s | %s | %s | | %s | |\n", ratio(m[3], x[6]), ratio(m[4], x[7]), ratio(m[5], x[8]), ratio(m[6], x[9]), ratio(m[8], x[10])
		}' rate="$MIXED_RATE" "$DIR/arms.tsv" "$MIXED_FILE"
	echo
	echo "Inserts (one row per transaction; latency is the statement's: pgbench's time minus the schedule lag of \`--rate\`):"
	echo
	echo "| run | into | rate | rows | rows/s | p50 ms | p90 ms | p99 ms | max ms | schedule lag p99 / max ms |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	awk -F'\t' -v t="$tier" -v rate="$MIXED_RATE" '$1 == t && $2 ~ /insert/ {
		if ($2 == "mixed_insert") { into = "`docs` (primary key + sparse_maxscore), reader running"; r = rate "/s"; lag = $10 " / " $11 }
		else if ($2 == "insert_index") { into = "a copy of the " t " documents, primary key + sparse_maxscore, alone"; r = "unthrottled"; lag = "-" }
		else { into = "a copy of the " t " documents, primary key only, alone"; r = "unthrottled"; lag = "-" }
		printf "| `%s` | %s | %s | %s | %.1f | %s | %s | %s | %s | %s |\n", $2, into, r, $12, $8, $3, $4, $5, $7, lag
		tps[$2] = $8 }
		END { if (tps["insert_index"] > 0 && tps["insert_noindex"] > 0)
			printf "\nUnthrottled, one client inserts %.2fx as many rows per second with the sparse_maxscore index as without it.\n",
				tps["insert_index"] / tps["insert_noindex"] }' "$MIXED_FILE"
	echo
	b=$(field before "$info") a=$(field after "$info")
	IFS=, read -r bs bd bp <<<"$b"
	IFS=, read -r as ad ap <<<"$a"
	moved=$(((ad - ap) - (bd - bp)))
	echo "The index (\`sparse_maxscore_info\`) before and after the mixed run:"
	echo
	echo "| | segments | documents | pending documents |"
	echo "|---|---|---|---|"
	echo "| before | $bs | $bd | $bp |"
	echo "| after | $as | $ad | $ap |"
	echo
	echo "$moved documents moved from the pending list into segments during the run; a poll five times a second"
	echo "saw the pending list shrink $(field flushes_seen "$info") time(s) (a flush each; flushes less than 0.2 s apart count once)."
	if [ -n "$(field ins_before "$info")" ]; then
		IFS=, read -r bs bd bp <<<"$(field ins_before "$info")"
		IFS=, read -r as ad ap <<<"$(field ins_after "$info")"
		echo "\`insert_index\`: segments $bs → $as, documents $bd → $ad ($ap pending at the end); sparse_maxscore_verify: \`$(field ins_verify "$info" | tr , ' ')\`."
	fi
	echo
	echo "Exactness afterwards: \`sparse_maxscore_verify('docs_v_idx')\`: \`$(field verify "$info" | tr , ' ')\`."
	echo "The first $NRECALL $first queries through the index, against a brute force (bench/truth.c) over the"
	echo "$(field final_rows "$info") documents \`docs\` then held ($(field inserted_rows "$info") inserted): recall@10 $(field recall "$info"), exact $(field exact "$info")."
	echo
	[ -f "$DIR/mixed_$tier.png" ] && { echo "![mixed read/write, $tier documents](mixed_$tier.png)"; echo; }
	return 0
}

# sharded_report TIER: the tier's "Sharded" section (--shards)
sharded_report() {
	local tier=$1 info=${SHARD_INFO[$1]:-}
	[ -n "$info" ] || return 0
	echo "### Sharded ($SHARDS shards on this machine)"
	echo
	echo "$SHARDS more clusters on this machine (shared_buffers=1GB each, otherwise the settings above) hold the"
	echo "corpus spread by hash on id: rows per shard $(field rows "$info" | tr , ' '), copied in $(field load_s "$info") s;"
	echo "their sparse_maxscore indexes took $(field build_s "$info") s to build (one after another) and"
	echo "$(fmt_bytes "$(field index_bytes "$info")") together. This cluster is the coordinator: \`docs_sharded\`, hash-partitioned"
	echo "on id, has one postgres_fdw foreign partition per shard (servers with extensions 'sparsevec',"
	echo "async_capable 'true', fetch_size '$SHARD_FETCH', parallel_commit 'true'; README \"Sharding\")."
	echo "\`sharded\` is the \`index\` arm's statement on \`docs_sharded\` (a Merge Append of the shards' ordered"
	echo "streams, which PostgreSQL 15 reads one shard after another); \`sharded_union\` asks each shard for its"
	echo "own top 10 in a UNION ALL (LIMIT shipped, the shards run at once) and sorts the $((SHARDS * 10)) rows."
	echo "All clusters and pgbench share the $CORES cores: this measures the overhead of sharding, not a speed-up."
	echo
	echo "| arm | p50 ms | p99 ms | p50 / index p50 | p99 / index p99 | recall@10 | exact |"
	echo "|---|---|---|---|---|---|---|"
	awk -F'\t' -v t="$tier" '$1 == t && $2 == "index" { i50 = $6; i99 = $8 }
		$1 == t && $2 ~ /^(index|sharded|sharded_union)$/ { n++; a[n] = $2; p50[n] = $6; p99[n] = $8; r[n] = $12; e[n] = $13 }
		function ratio(x, y) { return (x + 0 > 0 && y + 0 > 0) ? sprintf("%.2fx", x / y) : "-" }
		END { for (k = 1; k <= n; k++)
			printf "| `%s` | %s | %s | %s | %s | %s | %s |\n", a[k], p50[k], p99[k], ratio(p50[k], i50), ratio(p99[k], i99), r[k], e[k] }' "$DIR/arms.tsv"
	echo
}


# the --bm25-text section (bench/bm25_text.sh)
bm25_report() {
	local dir=$BM25_DIR stats=$BM25_STATS nq=$BM25_QUERIES load_s=$BM25_LOAD_S build_s=$BM25_BUILD_S gin_s=$BM25_GIN_S
	local forced=$BM25_FORCED exact=$BM25_EXACT overlap=$BM25_OVERLAP ts_opts=$BM25_TS_OPTS ts_ov=$BM25_TS_OV
	local lat_b=$BM25_LAT_B tps_b=$BM25_TPS_B lat_t=$BM25_LAT_T tps_t=$BM25_TPS_T lat_p=$BM25_LAT_P tps_p=$BM25_TPS_P
	local ov nb nqs same dmed dmax
	{
		echo "## BM25 from text against ts_rank (\`--bm25-text $dir\`)"
		echo
		echo "Corpus: the text files under \`$dir\` (one document each, cut at 100 kB): $stats."
		echo "$nq queries of 1 to 4 words drawn from the corpus; \`to_tsvector('english', ...)\` on both sides."
		echo "Loaded in $load_s s; the recipe (vocabulary, BM25 vectors, sparse_maxscore index) took $build_s s; the GIN index $gin_s s."
		[ $forced = yes ] && echo "The BM25 arm ran with enable_seqscan=off (forced): the planner did not choose the index by itself."
		echo
		echo "| arm | query | p50 ms | p90 ms | p99 ms | mean ms | TPS |"
		echo "|---|---|---|---|---|---|---|"
		[ -n "${lat_b:-}" ] && awk -v t="$tps_b" '{ printf "| `bm25_text` | `ORDER BY bm25 <#> (SELECT docs_bm25_query(q)) LIMIT 10` (sparse_maxscore) | %s | %s | %s | %s | %.1f |\n", $1, $2, $3, $4, t }' <<<"$lat_b"
		[ -n "${lat_t:-}" ] && awk -v t="$tps_t" '{ printf "| `ts_rank_gin` | `WHERE tsv @@ tq ORDER BY ts_rank(tsv, tq) DESC LIMIT 10` (GIN) | %s | %s | %s | %s | %.1f |\n", $1, $2, $3, $4, t }' <<<"$lat_t"
		[ -n "${lat_p:-}" ] && awk -v t="$tps_p" '{ printf "| `pg_textsearch` | `ORDER BY body <@> to_bm25query(q, idx) LIMIT 10` (pg_textsearch bm25) | %s | %s | %s | %s | %.1f |\n", $1, $2, $3, $4, t }' <<<"$lat_p"
		echo
		echo "- BM25 through the index equals a seq scan (distances bit for bit, LIMIT 10): $exact queries."
		echo "- ts_rank's top 10 and BM25's top 10 share on average $overlap of 10 rows (ties at ts_rank's 10th place broken by id)."
		echo "  They are different rankings (ts_rank does not use idf nor BM25's saturation): reported, not asserted."
		if [ -n "$TS_NOTE" ]; then
			echo "- pg_textsearch: $TS_NOTE."
		else
			echo "- pg_textsearch $TS_VERSION: its \`bm25\` index on \`body\` (\`text_config = 'english'\`, k1 $TS_K1, b $TS_B: the recipe's) built in $TS_BUILD_S s."
			[ -n "$ts_opts" ] && echo "  Its arm ran with enable_seqscan=off (forced): the planner did not choose its index by itself."
			if [ -n "$ts_ov" ]; then
				read -r ov nb nqs same dmed dmax <<<"$ts_ov"
				echo "- pg_textsearch's top 10 against the exact BM25 top 10 (rows of positive score on both sides): $ov rows shared"
				echo "  on average, of the $nb that BM25 returns ($nqs queries with a match); the same rows in the same order"
				echo "  for $same queries; the score of a row both return differs by $dmed% (median), $dmax% at most."
				echo "  Reported, not asserted: the two BM25 differ in details (doc/benchmarks.md \"pg_textsearch against exact BM25\")."
			fi
		fi
		echo
	}
}
# its summary lines (bench/run prints them when the arm is done, too)
bm25_summary() {
	local lat_b=$BM25_LAT_B tps_b=$BM25_TPS_B lat_t=$BM25_LAT_T tps_t=$BM25_TPS_T lat_p=$BM25_LAT_P tps_p=$BM25_TPS_P
	local overlap=$BM25_OVERLAP ts_ov=$BM25_TS_OV
	[ -n "${lat_b:-}" ] && awk -v t="$tps_b" '{ printf "arm=bm25_text p50_ms=%s p99_ms=%s tps=%.1f recall@10=n/a\n", $1, $3, t }' <<<"$lat_b"
	[ -n "${lat_t:-}" ] && awk -v t="$tps_t" -v o="${overlap%% *}" '{ printf "arm=ts_rank_gin p50_ms=%s p99_ms=%s tps=%.1f recall@10=n/a overlap_with_bm25@10=%s\n", $1, $3, t, o }' <<<"$lat_t"
	[ -n "${lat_p:-}" ] && awk -v t="$tps_p" -v o="${ts_ov%%[[:space:]]*}" '{ printf "arm=pg_textsearch p50_ms=%s p99_ms=%s tps=%.1f recall@10=n/a overlap_with_bm25@10=%s\n", $1, $3, t, (o == "" ? "n/a" : o) }' <<<"$lat_p"
	return 0
}

# What the run drew and checked, per query set (a --corpus run's sets have
# their files' numbers of queries, not --queries): pgbench's draw and the
# recall queries; one figure when every set has the same.
report_qid_draw() {
	local s list= n=${SET_NQ[${QSETS[0]}]:-$NQ} same=1
	for s in "${QSETS[@]}"; do
		[ "${SET_NQ[$s]}" = "$n" ] || same=0
		list+="${list:+, }\`$s\` ${SET_NQ[$s]}"
	done
	if [ $same = 1 ]; then
		echo "\`\\set qid random(1, $n)\`"
	else
		echo "\`\\set qid random(1, N)\`, N the set's number of queries: $list"
	fi
}
report_recall_first() {
	local s list= n=${SET_NRECALL[${QSETS[0]}]:-$NRECALL} same=1
	for s in "${QSETS[@]}"; do
		[ "${SET_NRECALL[$s]}" = "$n" ] || same=0
		list+="${list:+, }\`$s\` ${SET_NRECALL[$s]}"
	done
	if [ $same = 1 ]; then
		echo "first $n queries of the set"
	else
		echo "first queries of each set ($list)"
	fi
}

# the plots, into DIR (gnuplot; a plot gnuplot cannot draw is left out)
report_plots() {
	local tier files f a sep arms
	rm -f "$DIR"/latency_cdf_*.png "$DIR/p50_vs_docs.png" "$DIR"/mixed_*.png
	GP_TERM=png
	gnuplot -e "set terminal" 2>&1 | grep -q pngcairo && GP_TERM="pngcairo"
	PLOTS=()
	for tier in "${TIERS[@]}"; do
		files=()
		for f in "$DIR/latency/cdf_${tier}_"*.dat; do [ -f "$f" ] && files+=("$f"); done
		[ ${#files[@]} -gt 0 ] || continue
		{
			echo "set terminal $GP_TERM size 1000,640 noenhanced"
			echo "set output '$DIR/latency_cdf_$tier.png'"
			echo "set title 'Latency CDF per arm, $tier documents (pgbench -M prepared, per-transaction log)'"
			echo "set logscale x; set xlabel 'latency (ms, log scale)'; set ylabel 'fraction of queries'"
			echo "set yrange [0:1]; set grid; set key bottom right"
			printf 'plot '
			sep=
			for f in "${files[@]}"; do
				a=${f##*/cdf_${tier}_}
				a=${a%.dat}
				printf "%s'%s' using 1:2 with lines lw 2 title '%s'" "$sep" "$f" "$a"
				sep=', '
			done
			echo
		} >"$GP_DIR/cdf_$tier.gp"
		gnuplot "$GP_DIR/cdf_$tier.gp" && PLOTS+=("latency_cdf_$tier.png")
	done
	if [ ${#TIERS[@]} -gt 1 ]; then
		arms=$(awk -F'\t' '$4 == 1 { print $2 }' "$DIR/arms.tsv" | sort -u)
		{
			echo "set terminal $GP_TERM size 1000,640 noenhanced"
			echo "set output '$DIR/p50_vs_docs.png'"
			echo "set title 'p50 latency against corpus size (1 client)'"
			echo "set logscale xy; set xlabel 'documents'; set ylabel 'p50 latency (ms)'; set grid; set key top left"
			printf '%s\n' "${TIERS[@]}" | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } { t = t (NR > 1 ? ", " : "") "\"" $1 "\" " $1 }
				END { printf "set xrange [%g:%g]\nset xtics (%s)\n", lo / 1.5, hi * 1.5, t }'
			printf 'plot '
			sep=
			for a in $arms; do
				awk -F'\t' -v a="$a" '$2 == a { print $1, $6 }' "$DIR/arms.tsv" | sort -n >"$DIR/latency/p50_$a.dat"
				printf "%s'%s' using 1:2 with linespoints lw 2 title '%s'" "$sep" "$DIR/latency/p50_$a.dat" "$a"
				sep=', '
			done
			echo
		} >"$GP_DIR/p50.gp"
		gnuplot "$GP_DIR/p50.gp" && PLOTS+=("p50_vs_docs.png")
	fi

	# the timeline of the mixed run: the reader's p50/p99 per second, the slowest
	# insert statement per second, and the pending list
	for tier in "${TIERS[@]}"; do
		[ -f "$DIR/latency/mixed_${tier}_query.dat" ] || continue
		{
			echo "set terminal $GP_TERM size 1000,640 noenhanced"
			echo "set output '$DIR/mixed_$tier.png'"
			echo "set title 'Mixed read/write, $tier documents: 1 client querying, 1 client inserting $MIXED_RATE rows/s'"
			echo "set xlabel 'seconds'; set xrange [0:$((DURATION + 1))]; set ylabel 'latency (ms, log scale)'; set logscale y; set grid"
			echo "set y2label 'pending documents'; set y2tics; set ytics nomirror; set y2range [0:*]; set key below"
			printf "plot '%s' using 1:2 with lines lw 2 title 'query p50 per second', " "$DIR/latency/mixed_${tier}_query.dat"
			printf "'%s' using 1:3 with lines lw 2 title 'query p99 per second'" "$DIR/latency/mixed_${tier}_query.dat"
			[ -s "$DIR/latency/mixed_${tier}_insert.dat" ] &&
				printf ", '%s' using 1:4 with points pt 7 ps 0.8 title 'slowest insert statement per second'" "$DIR/latency/mixed_${tier}_insert.dat"
			[ -s "$DIR/latency/mixed_${tier}_state.dat" ] &&
				printf ", '%s' using 1:4 axes x1y2 with steps lw 1 title 'pending documents (polled 5 times a second)'" "$DIR/latency/mixed_${tier}_state.dat"
			echo
		} >"$GP_DIR/mixed_$tier.gp"
		gnuplot "$GP_DIR/mixed_$tier.gp" && PLOTS+=("mixed_$tier.png")
	done

	return 0
}

# what a query reads, relation by relation (bench/run --cold: touch.tsv,
# bench/lib/touch.sh)
touch_report() {	# touch_report TIER
	[ -f "$DIR/touch.tsv" ] && grep -q "^$1	" "$DIR/touch.tsv" || return 0
	echo "What a query reads (bench/lib/touch.sh): the \`index\` statement one query at a time; \`cold\`: once per recall query in the pass after the restart (\`--cold\`); \`settle\`: once per query of the set after pg_prewarm, before the arms (with \`--cold\`, or when the relations did not fit in shared buffers); \`warm\`: once per recall query after the arms (\`--cold\`); mean blocks per statement, hit in shared buffers / read from outside them (the OS page cache or the disk), over all of them and over the slowest tenth. The index's hits leave out pins through ReadRecentBuffer, which PostgreSQL does not count."
	echo
	echo "| pass | queries | p50 ms | p99 ms | of them | index | heap | TOAST | query table | index's share of the reads |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	awk -F'\t' -v t="$1" '$1 == t {
		for (k = 0; k < 2; k++) {
			o = 6 + 8 * k
			rd = $(o + 1) + $(o + 3) + $(o + 5) + $(o + 7)
			printf "| %s | %s | %s | %s | %s | %s / %s | %s / %s | %s / %s | %s / %s | %s |\n", (k ? "" : $2), (k ? "" : $3),
				(k ? "" : $4), (k ? "" : $5), (k ? "slowest tenth" : "all"), $o, $(o + 1), $(o + 2), $(o + 3), $(o + 4), $(o + 5),
				$(o + 6), $(o + 7), (rd > 0 ? sprintf("%.0f%%", 100 * $(o + 1) / rd) : "no reads") } }' "$DIR/touch.tsv"
	echo
}

report_md() {
	local tier info postings s
	{
		echo "# sparsevec benchmark, $REPORT_DATE"
		echo
		echo "Command: \`bench/run $ARGS\` — total run time $((DURATION_TOTAL / 60)) min $((DURATION_TOTAL % 60)) s."
		echo
		echo "## Machine and build"
		echo
		echo "| | |"
		echo "|---|---|"
		echo "| CPU | $CPU, $CORES cores |"
		echo "| RAM | $MEM |"
		echo "| load average (1, 5, 15 min) | $LOAD_START at the start, $LOAD_END at the end |"
		echo "| OS | Debian $OS, kernel $KERNEL |"
		echo "| commit | $COMMIT on $BRANCH |"
		echo "| PostgreSQL | $PGVERSION |"
		if [ $LOCAL = 1 ]; then
			echo "| server | throwaway cluster, extension built without assertions at the default optimisation |"
		else
			echo "| server | existing server (--dsn) |"
		fi
		echo "| settings | $SERVER_SETTINGS |"
		[ -z "$HUGE_NOTE" ] || echo "| memory pages | $HUGE_NOTE |"
		[ $HAVE_PGV = 0 ] ||
			echo "| pgvector | $PGV_VERSION in schema $PGV; HNSW with the default build parameters, hnsw.ef_search=100 |"
		echo "| pgbench | -M prepared, $DURATION s per arm and client count (slices below), a random query per transaction ($(report_qid_draw)), 1 and 2 clients (-j = -c) on the same machine |"
		echo "| sparse_maxscore index options | ${INDEX_OPTIONS:-none (the defaults)} |"
		if [ "$METRICS" != ip ]; then
			echo "| distances | \`<#>\` (sparsevec_ip_ops, index \`docs_v_idx\`)$([[ " $METRICS " = *" cosine "* ]] &&
				echo ", \`<=>\` (sparsevec_cosine_ops, index \`docs_v_cosine_idx\` on the same table: the \`*_cosine\` arms)")$([[ " $METRICS " = *" l2 "* ]] &&
				echo ", \`<->\` (sparsevec_l2_ops, index \`docs_v_l2_idx\` on the same table: the \`*_l2\` arms)"); --metric ${METRICS// /,} |"
		fi
		echo "| slices | $([ "$SLICES" -gt 1 ] && echo "each arm's $((SLICES * SLICE_T)) s at a client count in $SLICES runs of $SLICE_T s, the arms of a tier and query set taking turns run by run; the first transaction of each of those connections (it fills the backend's caches) not counted; the seq scan arms in one run of $DURATION s" || echo "none: each arm's run in one piece, one arm after another") |"
		echo "| warm-up | $([ "$WARMUP" -gt 0 ] && echo "$WARMUP s of pgbench at 1 client before each arm's measured runs, not measured (none for the seq scan arms)" || echo none) |"
		echo
		if awk -v l="${LOAD_START%% *}" 'BEGIN { exit !(l > 0.5) }'; then
			echo "**The machine was not idle when the run started** (1-minute load average ${LOAD_START%% *}): other"
			echo "processes competed for the CPUs, so treat these latencies as upper bounds."
			echo
		fi
		echo "Parallel query is off (max_parallel_workers_per_gather=0), so every arm is one backend per query."
		if [ $LOCAL = 1 ]; then
			echo "The cluster runs with fsync=off, synchronous_commit=off, full_page_writes=off and autovacuum=off:"
			echo "it is a throwaway bench cluster, the data is read-only during measurement, and none of these settings affects the read path."
			[ -s "$MIXED_FILE" ] &&
				echo "(Except in the mixed read/write arm, which inserts: its rows/s would be lower with durable commits, with and without the index.)"
		fi
		echo "All relations were read into shared buffers with pg_prewarm before measuring (where they did not fit, the notes say what was, and the settling pass answered every query once after it); each arm answered its"
		if [ "$WARMUP" -gt 0 ]; then
			echo "recall queries, and every arm but the seq scans ran pgbench for $WARMUP s at one client (not measured), before its measured runs."
		else
			echo "recall queries (a warm-up) before pgbench ran."
		fi
		echo
		echo "## Query sets"
		echo
		for s in "${QSETS[@]}"; do echo "- \`$s\`: ${QSTATS[$s]}"; done
		echo
		for tier in "${TIERS[@]}"; do
			info=${TIER_INFO[$tier]}
			postings=$(field postings "$info")
			echo "## $tier documents"
			echo
			echo "| corpus | |"
			echo "|---|---|"
			echo "| documents | $(field docs "$info"), shape \`$(field shape "$info")\`, weights \`$(field weights "$info")\` ($(corpus_origin)) |"
			echo "| postings (non-zeros) | $postings |"
			echo "| non-zeros per document | mean $(field nnz_mean "$info"), min $(field nnz_min "$info"), max $(field nnz_max "$info") |"
			echo "| most common term in | $(field top_term_df "$info") of documents |"
			echo "| load (COPY) | $(field load_s "$info") s |"
			echo "| table size (heap + TOAST) | $(fmt_bytes "$(field table_bytes "$info")"), $(per_posting "$(field table_bytes "$info")" "$postings") bytes per posting |"
			echo "| sparse_maxscore build | $(field build_s "$info") s |"
			echo "| sparse_maxscore size | $(fmt_bytes "$(field index_bytes "$info")"), $(per_posting "$(field index_bytes "$info")" "$postings") bytes per posting |"
			echo "| sparse_maxscore size / table size | $(awk -v i="$(field index_bytes "$info")" -v t="$(field table_bytes "$info")" 'BEGIN { if (i + 0 > 0 && t + 0 > 0) printf "%.2fx", i / t; else print "n/a" }') |"
			seg_row "$tier"
			if [ -n "$(field cosine_build_s "$info")" ]; then
				echo "| sparse_maxscore cosine build | $(field cosine_build_s "$info") s |"
				echo "| sparse_maxscore cosine size | $(fmt_bytes "$(field cosine_index_bytes "$info")"), $(per_posting "$(field cosine_index_bytes "$info")" "$postings") bytes per posting |"
			fi
			if [ -n "$(field l2_build_s "$info")" ]; then
				echo "| sparse_maxscore L2 build | $(field l2_build_s "$info") s |"
				echo "| sparse_maxscore L2 size | $(fmt_bytes "$(field l2_index_bytes "$info")"), $(per_posting "$(field l2_index_bytes "$info")" "$postings") bytes per posting |"
			fi
			if [ $HAVE_PGV = 1 ] && [ "$(field hnsw_build_s "$info")" != n/a ]; then
				echo "| hnsw build | $(field hnsw_build_s "$info") s |"
				echo "| hnsw size | $(fmt_bytes "$(field hnsw_bytes "$info")") |"
			fi
			echo
			echo "| arm | set | clients | LIMIT | p50 ms | p90 ms | p99 ms | mean ms | TPS | transactions | recall@10 | exact | seqscan p50 / p50 |"
			echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
			# the ratio is against the seqscan arm of the same set, client count and
			# distance (<#>, or <=> for the *_cosine arms, <-> for the *_l2 arms)
			awk -F'\t' -v t="$tier" 'function metric(a) { return a ~ /cosine/ ? 1 : a ~ /_l2(_|$)/ ? 2 : 0 }
				NR == FNR { if ($1 == t && $2 ~ /^seqscan/) s50[$3, $4, metric($2)] = $6; next }
				$1 == t {
				m = metric($2)
				ratio = (($3, $4, m) in s50 && $6 + 0 > 0 && $2 !~ /^pk_/) ? sprintf("%.1fx", s50[$3, $4, m] / $6) : "-"
				name = $2 ($14 == "yes" ? " (forced)" : "")
				printf "| %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %s | %s | %s | %s |\n",
					name, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, ratio }' "$DIR/arms.tsv" "$DIR/arms.tsv"
			echo
			# the fixed per-query cost (against the primary-key lookup through the
			# same pgbench) and 2-client throughput against pgvector's HNSW
			awk -F'\t' -v t="$tier" -v pgv="$HAVE_PGV" '$1 == t { p50[$2] = $6; tps[$2] = $10 }
				function r(a, b) { return (a in p50) && (b in p50) && p50[b] > 0 ? sprintf("%.2fx (%s / %s ms)", p50[a] / p50[b], p50[a], p50[b]) : "n/a" }
				END {
					if (!("index" in p50)) exit
					printf "- `index` p50 / `pk_lookup` p50: %s at 1 client, %s at 2 clients (issue 8 goal: <= 1.3x)\n", r("index", "pk_lookup"), r("index_c2", "pk_lookup_c2")
					if ("pk_floor" in p50)
						printf "- the same statement through the primary key, `pk_floor` p50 / `pk_lookup` p50: %s; `index` p50 / `pk_floor` p50: %s (what the index adds)\n", r("pk_floor", "pk_lookup"), r("index", "pk_floor")
					if (("hnsw_c2" in tps) && tps["hnsw_c2"] > 0)
						printf "- 2-client TPS, `index_c2` / `hnsw_c2`: %.2fx (%.1f / %.1f) (issue 8 goal: >= 2x)\n", tps["index_c2"] / tps["hnsw_c2"], tps["index_c2"], tps["hnsw_c2"]
					else
						printf "- 2-client TPS, `index_c2`: %.1f; `hnsw_c2`: %s\n", tps["index_c2"], pgv ? "did not run" : "not run: pgvector is not installed"
					print ""
				}' "$DIR/arms.tsv"
			if [ -f "$DIR/counters.tsv" ] && grep -q "^$tier	" "$DIR/counters.tsv"; then
				echo "Per-query counters of the index arms (\`sparse_maxscore_last_scan()\` after each recall query; mean / median):"
				echo
				echo "| arm | algorithm | rounds | postings decoded | blocks decoded | blocks skipped | candidates scored | rows returned |"
				echo "|---|---|---|---|---|---|---|---|"
				awk -F'\t' -v t="$tier" '$1 == t {
					k = $2; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
					v[k, $3] = $3 == "algorithm" ? $4 : $4 " / " $5 }
					END { for (i = 1; i <= n; i++) { k = order[i]
						printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", k, v[k, "algorithm"], v[k, "rounds"], v[k, "postings_decoded"],
							v[k, "blocks_decoded"], v[k, "blocks_skipped"], v[k, "candidates_scored"], v[k, "rows_returned"] } }' \
					"$DIR/counters.tsv"
				echo
			elif [ $HAVE_AM = 1 ]; then
				echo "Per-query counters: not available (no function sparse_maxscore_last_scan())."
				echo
			fi
			auto_report "$tier"
			cosine_report "$tier"
			l2_report "$tier"
			floor_report "$tier"
			touch_report "$tier"
			[ -f "$DIR/latency_cdf_$tier.png" ] && { echo "![latency CDF, $tier documents](latency_cdf_$tier.png)"; echo; }
			sharded_report "$tier"
			mixed_report "$tier"
		done
		if [ -f "$DIR/p50_vs_docs.png" ]; then
			echo "## p50 against corpus size"
			echo
			echo "![p50 against corpus size](p50_vs_docs.png)"
			echo
		fi
		[ "$BM25_RAN" = 1 ] && bm25_report
		if [ ${#NOTES[@]} -gt 0 ]; then
			echo "## Notes"
			echo
			printf -- '- %s\n' "${NOTES[@]}" | awk '!seen[$0]++'
			echo
		fi
		echo "## How to read this"
		echo
		echo "- p50/p90/p99 come from pgbench's per-transaction log (\`-l\`); a transaction is one statement."
		echo "- recall@10 is measured on the $(report_recall_first) (for seqscan: 50 above 100000 documents, 10 above 1000000)"
		echo "  against a brute force (bench/truth.c), tie-aware: a returned row among the first 10 counts"
		echo "  if its true score is at least the true 10th score."
		echo "- exact = queries whose returned rows have, rank by rank, the brute force's scores, and whose"
		echo "  distances equal the brute force's float8 bit for bit. An exact arm must show n/n."
		[[ " $METRICS " = *" cosine "* ]] &&
			echo "- The \`*_cosine\` arms are ranked and checked by \`<=>\` (score: minus the distance; a zero vector's NaN last)."
		[[ " $METRICS " = *" l2 "* ]] &&
			echo "- The \`*_l2\` arms are ranked and checked by \`<->\` (score: minus the distance)."
		echo "- \"(forced)\": the planner did not choose the arm's index by itself; the arm ran with enable_seqscan=off."
		[ -s "$MIXED_FILE" ] &&
			echo "- Mixed read/write: query latency with a steady insert stream against the read-only \`index\` arm; insert rows/s and statement latency with and without the index (raw numbers in mixed.tsv)."
		echo "- Query plans are in plans.txt, raw numbers in arms.tsv and counters.tsv. See bench/README.md."
	} >"$DIR/report.md"
	return 0
}

# the summary lines
report_summary() {
	local tier
	{
		echo "== shape=$SHAPE weights=$WEIGHTS"
		for tier in "${TIERS[@]}"; do
			[ ${#TIERS[@]} -gt 1 ] && echo "== docs=$tier"
			awk -F'\t' -v t="$tier" '$1 == t {
				printf "arm=%s p50_ms=%s p99_ms=%s tps=%.1f recall@10=%s\n", $2, $6, $8, $10, ($12 == "n/a" ? "n/a" : sprintf("%.4f", $12)) }' "$DIR/arms.tsv"
			# the mixed read/write arm (tps of the insert runs = rows/s)
			awk -F'\t' -v t="$tier" '$1 == t {
				printf "arm=%s p50_ms=%s p99_ms=%s tps=%.1f recall@10=n/a\n", $2, $3, $5, $8 }' "$MIXED_FILE"
			# the paired runs: auto over the fastest forced arm, side by side
			paired_auto "$tier" | awk -F'\t' '{
				printf "paired set=%s auto/fastest p50=%sx (%s) mean=%sx (%s)\n", $1, $2, $3, $4, $5 }'
		done
		[ "$BM25_RAN" = 1 ] && bm25_summary
	} >"$DIR/summary.txt"
	return 0
}

report_render() {	# report_render DIR
	DIR=$(cd "$1" && pwd)
	report_load "$DIR"
	MIXED_FILE=$DIR/mixed.tsv	# written only when a mixed run wrote rows
	[ -f "$MIXED_FILE" ] || MIXED_FILE=/dev/null
	GP_DIR=$(mktemp -d /tmp/sparsevec-report.XXXXXX)
	report_plots
	rm -rf "$GP_DIR"
	report_md
	report_summary
	echo
	[ ${#NOTES[@]} -eq 0 ] || printf 'note: %s\n' "${NOTES[@]}" | awk '!seen[$0]++'
	echo "report: $DIR/report.md ($((DURATION_TOTAL / 60)) min $((DURATION_TOTAL % 60)) s)"
	cat "$DIR/summary.txt"
}
