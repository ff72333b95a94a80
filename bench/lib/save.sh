# bench/lib/save.sh: the results folder (--out) of bench/run (sourced by it).
# results_init empties it of an earlier run's files and names the tables the
# arms append to; results_save writes everything the report needs into it,
# so that bench/report DIR renders the report from the folder alone (and
# bench/run renders its own that way).  The folder's layout is in
# bench/README.md "The results folder".

declare -A SET_NRECALL	# set -> how many of its queries answered for recall

results_init() {
	ARMS_TSV=$WORK/arms.tsv		# one row per (tier, arm, clients): bench/lib/arms.sh
	: >"$ARMS_TSV"
	MIXED_TSV=$WORK/mixed.tsv	# one row per mixed run: bench/lib/mixed.sh
	: >"$MIXED_TSV"
	rm -f "$WORK/touch.tsv"		# one row per pass of bench/lib/touch.sh
	rm -f "$WORK/paired.tsv"	# one row per paired arm: bench/lib/arms.sh paired_set
	NOTES=("${CORPUS_NOTES[@]}")
	FAILED=0
	rm -rf "$OUT/latency" "$OUT/plans.txt" "$OUT/run.env" "$OUT/notes.txt" "$OUT/report.md" "$OUT/summary.txt" \
		"$OUT/arms.tsv" "$OUT/mixed.tsv" "$OUT/counters.tsv" "$OUT/touch.tsv" "$OUT/paired.tsv" "$OUT"/*.png
	mkdir -p "$OUT/latency"
}

# The scalar settings and facts of the run in run.env (one KEY=value a line,
# the value to the end of the line; lists space-separated; per tier, set
# or tier.set: NAME.KEY=value).  bench/lib/report.sh REPORT_KEYS lists the
# keys it reads.
results_save() {
	local k v s t
	DURATION_TOTAL=$(($(date +%s) - START_TS))
	REPORT_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
	LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
	CPU=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
	CORES=$(nproc)
	MEM=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
	OS=$(cat /etc/debian_version 2>/dev/null || echo '?')
	KERNEL=$(uname -r)
	SERVER_SETTINGS=$(sql -c "SELECT name || '=' || current_setting(name) FROM pg_settings
		WHERE name IN ('shared_buffers', 'work_mem', 'maintenance_work_mem', 'max_parallel_workers_per_gather',
		               'max_parallel_maintenance_workers', 'jit', 'fsync', 'synchronous_commit', 'full_page_writes',
		               'wal_level', 'autovacuum', 'random_page_cost', 'effective_cache_size', 'huge_pages')
		ORDER BY name" | paste -sd ' ')
	CORPUS_INFO=
	[ "$CORPUS_MODE" = text ] && CORPUS_INFO=$(cat "$(dirname "$TEXT_DOCS")/info")
	for s in "${QSETS[@]}"; do
		SET_NQ[$s]=$(set_nq "$s")
		SET_NRECALL[$s]=$NRECALL
		[ "$NRECALL" -le "${SET_NQ[$s]}" ] || SET_NRECALL[$s]=${SET_NQ[$s]}
	done
	{
		for k in $REPORT_KEYS; do
			case $k in
			TIERS) v=${TIERS[*]} ;;
			QSETS) v=${QSETS[*]} ;;
			*) v=${!k-} ;;
			esac
			printf '%s=%s\n' "$k" "${v//$'\n'/ }"
		done
		for s in "${QSETS[@]}"; do
			printf 'QSTATS.%s=%s\nSET_NQ.%s=%s\nSET_NRECALL.%s=%s\n' "$s" "${QSTATS[$s]}" "$s" "${SET_NQ[$s]}" "$s" "${SET_NRECALL[$s]}"
		done
		for t in "${TIERS[@]}"; do
			[ -z "${TIER_INFO[$t]:-}" ] || printf 'TIER_INFO.%s=%s\n' "$t" "${TIER_INFO[$t]}"
			[ -z "${MIXED_INFO[$t]:-}" ] || printf 'MIXED_INFO.%s=%s\n' "$t" "${MIXED_INFO[$t]}"
			[ -z "${SHARD_INFO[$t]:-}" ] || printf 'SHARD_INFO.%s=%s\n' "$t" "${SHARD_INFO[$t]}"
			for s in "${QSETS[@]}"; do
				[ -z "${FLOOR_CPU[$t.$s]:-}" ] || printf 'FLOOR_CPU.%s.%s=%s\n' "$t" "$s" "${FLOOR_CPU[$t.$s]}"
			done
		done
	} >"$OUT/run.env"
	[ ${#NOTES[@]} -eq 0 ] || printf '%s\n' "${NOTES[@]//$'\n'/ }" >"$OUT/notes.txt"
	cp "$ARMS_TSV" "$OUT/arms.tsv"
	[ -s "$MIXED_TSV" ] && cp "$MIXED_TSV" "$OUT/mixed.tsv"
	[ -f "$WORK/counters.tsv" ] && cp "$WORK/counters.tsv" "$OUT/counters.tsv"
	[ -f "$WORK/touch.tsv" ] && cp "$WORK/touch.tsv" "$OUT/touch.tsv"
	[ -f "$WORK/paired.tsv" ] && cp "$WORK/paired.tsv" "$OUT/paired.tsv"
	return 0
}
