# bench/lib/setup.sh: bench/run's first stage (sourced by it): packages, the
# scratch directory and the cleanup that runs whatever happens, the C tools
# (and bench/selftest), the extension built into a private PostgreSQL
# installation, the throwaway cluster (or --dsn), the bench database's
# schema and extensions, and the --shards clusters.  Each setup_* function
# is one step, called in order by bench/run.

# Huge pages (--huge-pages): shared buffers of several GB in 4 KB pages
# cost a TLB miss, on a virtual machine a slow one, at the first touch of
# every page a query reads; with 2 MB pages the 10M topical index answered
# twice as fast on this project's machine (doc/decisions.md "Huge pages").
# As root, reserve what the cluster needs (PostgreSQL's own count,
# shared_memory_size_in_huge_pages, for these settings) on top of what the
# system already has; cleanup puts the old count back.  Sets HUGE_USED.
HUGE_USED=off HUGE_NOTE=
huge_pages_reserve() {
	local need old got
	[ "$HUGE" = on ] || { HUGE_NOTE="4 KB pages (--huge-pages off)"; return 0; }
	if [ "$(id -u)" -ne 0 ] || [ ! -w /proc/sys/vm/nr_hugepages ]; then
		HUGE_NOTE="4 KB pages: reserving huge pages needs root"
		return 0
	fi
	# the data directory pgenv_start would create, so that postgres -C can read it
	mkdir -p "$PGDATA_DIR"
	chown postgres "$PGDATA_DIR" "$(dirname "$PGDATA_DIR")"
	"${PGENV_RUNAS[@]}" "$PGBIN/initdb" -D "$PGDATA_DIR" -A trust -U postgres --no-sync >/dev/null
	need=$("${PGENV_RUNAS[@]}" "$PGBIN/postgres" -D "$PGDATA_DIR" -C shared_memory_size_in_huge_pages \
		$(printf -- '-c %s ' "${SETTINGS[@]}") 2>/dev/null) || need=
	[[ $need =~ ^[0-9]+$ ]] && [ "$need" -gt 0 ] ||
		{ HUGE_NOTE="4 KB pages: PostgreSQL gave no huge page count"; return 0; }
	old=$(cat /proc/sys/vm/nr_hugepages)
	HUGE_OLD=$old
	echo $((old + need)) >/proc/sys/vm/nr_hugepages 2>/dev/null || true
	got=$(cat /proc/sys/vm/nr_hugepages)
	if [ "$got" -lt $((old + need)) ]; then
		echo "$old" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
		HUGE_OLD=
		HUGE_NOTE="4 KB pages: the kernel found $((got - old)) of the $need huge pages asked for"
		return 0
	fi
	HUGE_USED=on
	HUGE_NOTE="huge pages: $need pages of 2 MB reserved for the run (vm.nr_hugepages $old -> $got, set back at the end)"
}

# shellcheck source=../../tools/pgenv.sh
. "$ROOT/tools/pgenv.sh"

# ---------------------------------------------------------------- packages
setup_packages() {
	awk -v l="${LOAD_START%% *}" 'BEGIN { exit !(l > 0.5) }' &&
		echo "bench/run: warning: the machine is busy (load average $LOAD_START); latencies will suffer" >&2
	log "packages"
	if [ -z "$DSN" ]; then
		pgenv_packages make gcc libc6-dev gnuplot-nox libpq-dev
		pgenv_server_packages	# PGMAJOR=18 bench/run: 18 built from source (tools/pgenv.sh)
	else
		pgenv_packages gcc libc6-dev gnuplot-nox libpq-dev postgresql-client-$PGMAJOR
	fi
}

# ------------------------------------------------------------ scratch area
# The scratch directory (WORK): the corpus, the truth, raw pgbench logs, the
# cluster.  Kept with --keep, and when the run failed after its server was
# up (SCRATCH_USEFUL), for post-mortems, but without the copies of the
# corpus (WORK/corpus.tsv, WORK/t*/docs.tsv: gigabytes at scale); removed
# otherwise (a --corpus run that stops at a bad line leaves nothing in /tmp).
SCRATCH_USEFUL=0
setup_scratch() {
	WORK=$(mktemp -d /tmp/sparsevec-bench.XXXXXX)
	chmod 755 "$WORK"
	mkdir -p "$OUT"
	OUT=$(cd "$OUT" && pwd)
	PGDATA_DIR=$WORK/cluster/data
	BG_PIDS=()
	LOCAL=1
	[ -n "$DSN" ] && LOCAL=0
	CREATED=()		# with --dsn: how to undo what we created, in order
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}
cleanup() {
	local rc=$? p
	trap - EXIT INT TERM
	for p in "${BG_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	if [ "$LOCAL" = 0 ] && [ "$KEEP" = 0 ] && [ "${SCHEMA_MADE:-0}" = 1 ]; then
		# leave an existing server as we found it
		psql -X -q -d "$DSN" -c "DROP SCHEMA IF EXISTS sparsevec_bench CASCADE" >/dev/null 2>&1 || true
		for p in "${CREATED[@]}"; do
			psql -X -q -d "$DSN" -c "$p" >/dev/null 2>&1 || true
		done
	fi
	# idempotent: also stops a cluster whose start timed out
	[ "$LOCAL" = 1 ] && [ -n "${PGBIN:-}" ] && pgenv_stop "$PGDATA_DIR"
	for p in "${SHARD_DIRS[@]}"; do pgenv_stop "$p"; done	# --shards
	# the huge pages reserved for the cluster, after it has stopped
	[ -z "${HUGE_OLD:-}" ] || echo "$HUGE_OLD" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
	if [ "$KEEP" = 1 ]; then
		echo "bench/run: scratch kept in $WORK"
	elif [ $rc -ne 0 ] && [ "$SCRATCH_USEFUL" = 1 ]; then
		rm -f "$WORK/corpus.tsv" "$WORK"/t*/docs.tsv
		echo "bench/run: scratch kept in $WORK (without the copies of the corpus)"
	else
		rm -rf "$WORK"
	fi
	exit $rc
}

# --------------------------------------------------------------- C tools
setup_tools() {
	log "compile bench/gen.c, bench/truth.c, bench/corpus.c, bench/floor.c and bench/paired.c"
	BIN=$ROOT/bench/bin
	mkdir -p "$BIN"
	CFLAGS_TOOLS="-O2 -Wall -Wextra -ffp-contract=off"
	cc $CFLAGS_TOOLS -o "$BIN/gen" "$ROOT/bench/gen.c" -lm
	cc $CFLAGS_TOOLS -o "$BIN/truth" "$ROOT/bench/truth.c" -lm
	cc $CFLAGS_TOOLS -o "$BIN/corpus" "$ROOT/bench/corpus.c" -lm
	cc $CFLAGS_TOOLS -o "$BIN/floor" "$ROOT/bench/floor.c"
	# Debian's libpq-dev (any server version answers it)
	cc $CFLAGS_TOOLS -I/usr/include/postgresql -o "$BIN/paired" "$ROOT/bench/paired.c" -lpq
	"$ROOT/bench/selftest" "$BIN" | tail -n 1
	# --corpus: the user's files, checked before anything is installed (bench/corpus.sh)
	[ "$CORPUS_MODE" = user ] && corpus_check "$CORPUS"
	return 0
}

# ------------------------------------------------- build, install, cluster
setup_server() {
	# memory by the largest tier: 4 GB of shared buffers hold table and index at
	# 1M documents; above 2M the index (~7 GB at 10M, 5.94 bytes/posting) and the
	# hot part of the table (~10.5 GB) get 12 GB of the 24 GB machine
	SHARED_BUFFERS=4GB MAINTENANCE_WORK_MEM=1GB
	MAX_TIER=$( (printf '%s\n' "${TIERS[@]}" | sort -n | tail -n 1) 2>/dev/null)
	if [ "${MAX_TIER:-0}" -gt 2000000 ]; then	# no tiers with --bm25-text alone
		SHARED_BUFFERS=12GB MAINTENANCE_WORK_MEM=2GB
	fi
	SETTINGS=(
		shared_buffers=$SHARED_BUFFERS maintenance_work_mem=$MAINTENANCE_WORK_MEM work_mem=64MB
		max_parallel_workers_per_gather=0 max_parallel_maintenance_workers=0
		jit=off fsync=off synchronous_commit=off full_page_writes=off
		wal_level=minimal max_wal_senders=0 max_wal_size=20GB checkpoint_timeout=1h
		autovacuum=off
	)
	# the commit the report names: the tree as it is now, when it is copied
	# and built (a commit made while the run goes on must not be reported)
	COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
	if [ "$COMMIT" != unknown ] && [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
		COMMIT="$COMMIT (dirty)"
	fi
	BRANCH=$(git -C "$ROOT" rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
	if [ -z "$DSN" ]; then
		log "private PostgreSQL $PGMAJOR installation in $WORK/pg"
		pgenv_private_install "$WORK/pg"

		log "build the extension (no assertions, default optimisation) and install it there"
		mkdir -p "$WORK/src"
		(cd "$ROOT" && tar --exclude=./.git --exclude=./bench/results --exclude=./bench/bin -cf - .) |
			tar -xf - -C "$WORK/src"
		# objects left in the tree (test/run builds there with assertions on)
		# would look up to date to make: build from scratch
		make -s -C "$WORK/src" clean PG_CONFIG="$PG_CONFIG" >/dev/null
		make -s -C "$WORK/src" PG_CONFIG="$PG_CONFIG"
		make -s -C "$WORK/src" install PG_CONFIG="$PG_CONFIG" >/dev/null

		# pg_textsearch (the --bm25-text arm's third ranking) only runs preloaded:
		# preload it when this installation has it (bench/README.md "BM25 from text")
		if [ -n "${BM25_TEXT_DIR:-}" ] && [ -f "$("$PG_CONFIG" --sharedir)/extension/pg_textsearch.control" ]; then
			SETTINGS+=(shared_preload_libraries=pg_textsearch)
			note "pg_textsearch: in this installation, preloaded for the --bm25-text arm"
		fi
		PORT=$(pgenv_free_port)
		huge_pages_reserve
		note "$HUGE_NOTE"
		log "throwaway cluster on 127.0.0.1:$PORT (${SETTINGS[*]} huge_pages=$HUGE_USED)"
		if ! pgenv_start "$PGDATA_DIR" "$PORT" "$WORK/cluster/server.log" "${SETTINGS[@]}" huge_pages=$HUGE_USED; then
			[ "$HUGE_USED" = on ] || die "the cluster did not start (see $WORK/cluster/server.log)"
			HUGE_NOTE="the cluster did not start with huge_pages=on: ran with 4 KB pages"
			note "$HUGE_NOTE"
			HUGE_USED=off
			# give the reservation back before the cluster takes the same memory again
			echo "$HUGE_OLD" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
			HUGE_OLD=
			pgenv_start "$PGDATA_DIR" "$PORT" "$WORK/cluster/server.log" "${SETTINGS[@]}" huge_pages=off
		fi
		DSN="host=127.0.0.1 port=$PORT user=postgres dbname=postgres"
	else
		command -v pgbench >/dev/null || PATH="/usr/lib/postgresql/$PGMAJOR/bin:$PATH"
	fi

	SCRATCH_USEFUL=1
}

# ------------------------------------------------ database and extensions
# create_extension NAME [SCHEMA]: create it unless it exists; remember to drop it
create_extension() {
	[ -n "$(sql -c "SELECT 1 FROM pg_extension WHERE extname = '$1'")" ] && return 0
	sql -c "CREATE EXTENSION $1${2:+ SCHEMA $2}" || return 1
	CREATED=("DROP EXTENSION IF EXISTS $1" "${CREATED[@]}")
}
setup_database() {
	log "database"
	create_extension sparsevec || die "CREATE EXTENSION sparsevec failed"
	EXTSCHEMA=$(sql -c "SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'sparsevec'")
	[ -n "$(sql -c "SELECT 1 FROM pg_type WHERE typname = 'sparsevec' AND typnamespace = '$EXTSCHEMA'::regnamespace")" ] ||
		die "the extension has no sparsevec type yet (merge the type branch first)"
	create_extension pg_prewarm || die "CREATE EXTENSION pg_prewarm failed"
	sql -c "SET client_min_messages = warning" -c "DROP SCHEMA IF EXISTS sparsevec_bench CASCADE" -c "CREATE SCHEMA sparsevec_bench"
	SCHEMA_MADE=1
	BASE_PGOPTIONS="-c search_path=sparsevec_bench,$EXTSCHEMA -c client_min_messages=warning"
	export PGOPTIONS=$BASE_PGOPTIONS
	PGVERSION=$(sql -c "SHOW server_version")

	HAVE_AM=0 HAVE_COUNTERS=0 HAVE_PGV=0 PGV=
	[ -n "$(sql -c "SELECT 1 FROM pg_am WHERE amname = 'sparse_maxscore'")" ] && HAVE_AM=1
	[ -n "$(sql -c "SELECT 1 FROM pg_proc WHERE proname = 'sparse_maxscore_last_scan'")" ] && HAVE_COUNTERS=1
	if [ -n "$(sql -c "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")" ]; then
		PGV=$(sql -c "SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'vector'")
		if [ -z "$PGV" ]; then
			if [ -z "$(sql -c "SELECT 1 FROM pg_namespace WHERE nspname = 'pgv'")" ]; then
				sql -c "CREATE SCHEMA pgv" && CREATED=("DROP SCHEMA IF EXISTS pgv" "${CREATED[@]}")
			fi
			create_extension vector pgv && PGV=pgv
		fi
		[ -n "$PGV" ] && HAVE_PGV=1
	fi
	PGV_VERSION=$([ $HAVE_PGV = 0 ] || sql -c "SELECT extversion FROM pg_extension WHERE extname = 'vector'")
	if [ $HAVE_AM = 1 ]; then note "index: sparse_maxscore available"; else note "index: not available (no access method sparse_maxscore): index arms will be skipped"; fi
	if [ $HAVE_PGV = 1 ]; then note "pgvector: installed in schema $PGV"; else note "pgvector: not available: hnsw arm will be skipped"; fi
}

# ------------------------------------------------------ shards (--shards N)
# N more throwaway clusters on this machine, the extension in the same
# schema as here.  This cluster is the coordinator: postgres_fdw servers
# shard1..N with the options of README "Sharding", and docs_sharded, hash-
# partitioned on id, with foreign partition docs_sharded_<i> on shard i's
# table docs.  Per tier, load_shards fills each shard (COPY of the rows of
# docs that hash into its partition) and builds its index.
SHARD_PORTS=() SHARD_FETCH=10 SHARD_DIRS=()
declare -A SHARD_INFO
shard_sql() {	# shard_sql I psql-args...
	local i=$1
	shift
	psql -X -q -v ON_ERROR_STOP=1 -At -F $'\t' -d "host=127.0.0.1 port=${SHARD_PORTS[$i]} user=postgres dbname=postgres" "$@"
}
setup_shards() {
	local i
	[ "$SHARDS" -gt 0 ] || return 0
	log "$SHARDS shard clusters (shared_buffers=1GB each) and the coordinator's docs_sharded"
	create_extension postgres_fdw || die "CREATE EXTENSION postgres_fdw failed"
	sql -c "CREATE TABLE docs_sharded (id bigint NOT NULL, v sparsevec) PARTITION BY HASH (id)"
	for ((i = 1; i <= SHARDS; i++)); do
		SHARD_DIRS+=("$WORK/shard$i/data")
		SHARD_PORTS[$i]=$(pgenv_free_port)
		pgenv_start "$WORK/shard$i/data" "${SHARD_PORTS[$i]}" "$WORK/shard$i/server.log" "${SETTINGS[@]}" shared_buffers=1GB huge_pages=off
		shard_sql "$i" -c "CREATE EXTENSION sparsevec SCHEMA $EXTSCHEMA" -c "CREATE EXTENSION pg_prewarm"
		sql -c "CREATE SERVER shard$i FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1',
				port '${SHARD_PORTS[$i]}', dbname 'postgres', extensions 'sparsevec', async_capable 'true',
				fetch_size '$SHARD_FETCH', parallel_commit 'true')" \
			-c "CREATE USER MAPPING FOR CURRENT_USER SERVER shard$i OPTIONS (user 'postgres')" \
			-c "CREATE FOREIGN TABLE docs_sharded_$i PARTITION OF docs_sharded
				FOR VALUES WITH (MODULUS $SHARDS, REMAINDER $((i - 1)))
				SERVER shard$i OPTIONS (schema_name 'public', table_name 'docs')"
		note "shard $i on 127.0.0.1:${SHARD_PORTS[$i]}"
	done
}
