#!/usr/bin/env bash
# bench/fixedcost.sh: the fixed cost of one index query in a running server
# (issue 38): microseconds per statement at zero postings, next to
# `SELECT 1` and a primary-key lookup, and where the time goes.
#
#   bench/fixedcost.sh [--docs N] [--seconds S] [--no-perf] [--work DIR]
#
# Builds the extension (no assertions, default optimisation) into a private
# copy of the system's PostgreSQL 15 (tools/pgenv.sh, as bench/run does),
# starts a throwaway cluster as the `postgres` OS user on 127.0.0.1 and a
# free port (stopped with pg_ctl on exit, whatever happens), loads N
# documents of bench/gen's flat corpus (default 100,000; its three rarest
# terms taken out of every document) into a table with
# a primary key and a sparse_maxscore index, and runs, each with pgbench -n
# -M prepared -c 1 -T S (default 10), one client:
#   select1   SELECT 1
#   pk        SELECT id FROM docs WHERE id = :id (random id)
#   zero      SELECT id FROM docs ORDER BY v <#> Q LIMIT 10, Q = a query of
#             the three terms taken out: no posting decoded; the
#             scan returns rows of score 0 (the ZERO phase, docid order)
#             and the executor rechecks each one it returns
#   one       the same with Q = a single term held by a few documents
# Per arm: the mean latency pgbench reports (us), TPS, and the load average
# before the run.  Then, unless --no-perf, perf record -g on the backend
# that serves the zero arm for S seconds, and the top of perf report (self
# time by symbol, and by caller chain) into the work directory.  The plan
# of each index statement is checked to be an Index Scan on the index.
# bench/README.md "Per posting and per query".
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/.." && pwd)
DOCS=100000
SECS=10
PERF=1
WORK=/tmp/spv-fixedcost
while [ $# -gt 0 ]; do
	case $1 in
	--docs) DOCS=$2; shift 2 ;;
	--seconds) SECS=$2; shift 2 ;;
	--no-perf) PERF=0; shift ;;
	--work) WORK=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/fixedcost.sh: unknown option $1" >&2; exit 2 ;;
	esac
done

PGMAJOR=15
PGENV_NO_PGVECTOR=1
# shellcheck source=../tools/pgenv.sh
. "$ROOT/tools/pgenv.sh"

rm -rf "$WORK"
mkdir -p "$WORK"
chmod 755 "$WORK"
DATA=$WORK/cluster/data
cleanup() { pgenv_stop "$DATA"; }
trap cleanup EXIT

pgenv_private_install "$WORK/pg"
mkdir -p "$WORK/src"
(cd "$ROOT" && tar --exclude=./.git --exclude=./bench/results --exclude=./bench/bin -cf - .) |
	tar -xf - -C "$WORK/src"
make -s -C "$WORK/src" clean PG_CONFIG="$PG_CONFIG" >/dev/null
make -s -C "$WORK/src" PG_CONFIG="$PG_CONFIG" >/dev/null
make -s -C "$WORK/src" install PG_CONFIG="$PG_CONFIG" >/dev/null

PORT=$(pgenv_free_port)
pgenv_start "$DATA" "$PORT" "$WORK/cluster/server.log" shared_buffers=512MB \
	jit=off fsync=off synchronous_commit=off full_page_writes=off autovacuum=off \
	max_parallel_workers_per_gather=0
DSN="host=127.0.0.1 port=$PORT user=postgres dbname=postgres"
sql() { psql -X -q -v ON_ERROR_STOP=1 -At -d "$DSN" "$@"; }

cc -O2 -Wall -Wextra -ffp-contract=off -o "$WORK/gen" "$ROOT/bench/gen.c" -lm
"$WORK/gen" docs "$DOCS" >"$WORK/docs.tsv" 2>/dev/null
# term ids (1-based) by document frequency; the three rarest are taken out
# of every document (so that no document has them), the fourth rarest is
# the one term of the "one" arm
awk -F'\t' '{ s = $2; sub(/^\{/, "", s); sub(/\}.*/, "", s); n = split(s, a, ",");
		for (i = 1; i <= n; i++) { split(a[i], kv, ":"); df[kv[1]]++ } }
	END { for (t = 1; t <= 30522; t++) print t, df[t] + 0 }' "$WORK/docs.tsv" | sort -k2,2n -k1,1n >"$WORK/df.txt"
read -r -a ABSENT <<<"$(head -n 3 "$WORK/df.txt" | awk '{ printf "%s ", $1 }')"
read -r RARE RAREDF <<<"$(awk '$2 > 0' "$WORK/df.txt" | sed -n 4p)"
awk -F'\t' -v out="${ABSENT[*]}" 'BEGIN { n = split(out, o, " "); for (i = 1; i <= n; i++) drop[o[i]] = 1 }
	{ s = $2; dim = s; sub(/^\{/, "", s); sub(/\}.*/, "", s); sub(/^.*\}/, "", dim);
	  n = split(s, a, ","); r = "";
	  for (i = 1; i <= n; i++) { split(a[i], kv, ":"); if (!(kv[1] in drop)) r = r (r == "" ? "" : ",") a[i] }
	  print $1 "\t{" r "}" dim }' "$WORK/docs.tsv" >"$WORK/docs_load.tsv"
QZERO=$(printf '{%s:0.5,%s:1.25,%s:2}/30522' $(printf '%s\n' "${ABSENT[@]}" | sort -n))
QONE="{$RARE:1}/30522"

sql -c "CREATE EXTENSION sparsevec" -c "CREATE TABLE docs (id bigint PRIMARY KEY, v sparsevec)"
sql -c "\\copy docs FROM '$WORK/docs_load.tsv'"
sql -c "CREATE INDEX docs_v ON docs USING sparse_maxscore (v)" -c "VACUUM ANALYZE docs" \
	-c "CREATE EXTENSION pg_prewarm" -c "SELECT pg_prewarm('docs'), pg_prewarm('docs_v'), pg_prewarm('docs_pkey')" >/dev/null

cat >"$WORK/select1.sql" <<<'SELECT 1;'
printf '\\set id random(1, %s)\nSELECT id FROM docs WHERE id = :id;\n' "$DOCS" >"$WORK/pk.sql"
echo "SELECT id FROM docs ORDER BY v <#> '$QZERO'::sparsevec LIMIT 10;" >"$WORK/zero.sql"
echo "SELECT id FROM docs ORDER BY v <#> '$QONE'::sparsevec LIMIT 10;" >"$WORK/one.sql"
for a in zero one; do
	if ! sql -c "EXPLAIN (COSTS OFF) $(cat "$WORK/$a.sql")" | grep -q 'Index Scan using docs_v'; then
		echo "bench/fixedcost.sh: the $a statement does not scan the index:" >&2
		sql -c "EXPLAIN (COSTS OFF) $(cat "$WORK/$a.sql")" >&2
		exit 1
	fi
	sql -c "$(cat "$WORK/$a.sql")" >/dev/null
done
# what the scan did for each (one statement, then its counters)
for a in zero one; do
	echo "$a: $(sql -c "$(cat "$WORK/$a.sql")" -c "SELECT 'rounds ' || rounds || ', postings decoded ' || postings_decoded || ', rows returned ' || rows_returned FROM sparse_maxscore_last_scan()" | tail -n 1)"
done

echo "bench/fixedcost.sh: $DOCS documents (flat), commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo '+changes'), PostgreSQL $(sql -c 'SHOW server_version'), pgbench -n -M prepared -c 1 -T $SECS"
echo "zero: Q = $QZERO (terms in no document); one: Q = $QONE (df $RAREDF)"
printf '%-8s %12s %10s  %s\n' arm "us/stmt" TPS "load before (1, 5, 15 min)"
for a in select1 pk zero one; do
	l=$(cut -d' ' -f1-3 /proc/loadavg)
	out=$(pgbench -n -M prepared -c 1 -T "$SECS" -f "$WORK/$a.sql" "$DSN" 2>&1)
	lat=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$out")
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out")
	printf '%-8s %12.1f %10.0f  %s\n' "$a" "$(awk -v x="$lat" 'BEGIN { print x * 1000 }')" "$tps" "$l"
done

if [ "$PERF" = 1 ]; then
	if ! command -v perf >/dev/null; then
		echo "perf: not installed, no profile"
		exit 0
	fi
	pgbench -n -M prepared -c 1 -T $((SECS + 4)) -f "$WORK/zero.sql" "$DSN" >"$WORK/perf_pgbench.txt" 2>&1 &
	bg=$!
	sleep 2
	pid=$(sql -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench' LIMIT 1")
	perf record -g -p "$pid" -o "$WORK/perf.data" -- sleep "$SECS" >/dev/null 2>&1
	wait "$bg"
	perf report -i "$WORK/perf.data" --stdio --no-children --sort dso,symbol --percent-limit 0.7 -g none 2>/dev/null |
		grep -v '^$' >"$WORK/perf_self.txt"
	perf report -i "$WORK/perf.data" --stdio --children --sort symbol --percent-limit 3 -g none 2>/dev/null |
		grep -v '^$' >"$WORK/perf_children.txt"
	echo "perf (backend of the zero arm, $SECS s): self time by symbol, top 25; full reports in $WORK/perf_*.txt"
	grep -v '^#' "$WORK/perf_self.txt" | head -n 25
	echo "inclusive (children), top 25:"
	grep -v '^#' "$WORK/perf_children.txt" | head -n 25
fi
