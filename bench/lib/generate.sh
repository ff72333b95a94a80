# bench/lib/generate.sh: bench/run's corpus and queries (sourced by it).
# bench/gen.c writes them (--shape, --weights, --seed); with --corpus or
# --shape text they come from files through bench/corpus.sh instead.
#   generate_queries    every query set's queries, once: WORK/q_<set>.tsv,
#                       their statistics in QSTATS[set]
#   generate_tier TIER  the tier's documents: WORK/t<tier>/docs.tsv, their
#                       statistics in DSTATS (and POSTINGS), after a check
#                       that the file system has room for them

declare -A QSTATS	# set -> the generator's (or bench/corpus.c's) statistics line

generate_queries() {
	local s
	[ -z "$CORPUS_MODE" ] || return 0
	log "generate queries: $NQ per set (${QSETS[*]}), seed $SEED, shape $SHAPE, weights $WEIGHTS"
	for s in "${QSETS[@]}"; do
		"$BIN/gen" --shape "$SHAPE" --weights "$WEIGHTS" queries "$s" "$NQ" "$SEED" >"$WORK/q_$s.tsv" 2>"$WORK/q_$s.err"
		QSTATS[$s]=$(tail -n 1 "$WORK/q_$s.err" | sed 's/^gen: //')
		note "${QSTATS[$s]}"
	done
}

generate_tier() {	# generate_tier TIER; sets T, DSTATS, POSTINGS
	local tier=$1 avail per_doc t0
	T=$WORK/t$tier
	mkdir -p "$T"
	log "tier: $tier documents"
	# disk: the corpus text (~1.5 KB per document) and the table and index
	# (~1.9 KB) go to /tmp; 10M documents need ~34 GB
	avail=$(df --output=avail -B1 "$WORK" | tail -n 1)
	per_doc=$([ $LOCAL = 1 ] && echo 3400 || echo 1500)
	[ "$avail" -gt $((tier * per_doc)) ] ||
		die "$tier documents need ~$((tier * per_doc / 1000000000 + 1)) GB in $WORK's file system, $((avail / 1000000000)) GB free"

	# corpus
	t0=$(now)
	if [ -n "$CORPUS_MODE" ]; then
		corpus_tier "$tier" "$T"	# the first $tier documents of the corpus file
		note "the first $tier documents of the corpus in $(elapsed "$t0") s: $DSTATS"
	else
		"$BIN/gen" --shape "$SHAPE" --weights "$WEIGHTS" docs "$tier" "$SEED" 2>&1 >"$T/docs.tsv" | tee "$T/gen.err" | sed "s/^/    /"
		DSTATS=$(grep '^gen: docs=' "$T/gen.err" | sed 's/^gen: //')
		note "generated in $(elapsed "$t0") s: $DSTATS"
	fi
	POSTINGS=$(field postings "$DSTATS")
}
