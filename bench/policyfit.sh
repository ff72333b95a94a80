#!/usr/bin/env bash
# bench/policyfit.sh: the unit costs of the scan's policy (src/spmpolicy.c,
# spm_costs), fitted on a server's own index and queries (issue 37).
#
#   bench/policyfit.sh --dsn DSN --table TABLE --column COL --queries QTABLE
#                      [--qcolumn QCOL] [--limit K] [--reps N] [--max N]
#
# Every query of QTABLE (QCOL, default q, sparsevec) runs as
#   SELECT 1 FROM TABLE ORDER BY COL <#> q LIMIT K
# under sparse_maxscore.algorithm = maxscore and = exhaustive, the two
# taking turns N times (default 3; the fastest run of each counts), and
# sparse_maxscore_last_scan() gives the postings each decoded.  Then two
# least-squares fits, in microseconds:
#   exhaustive  time = a  * postings + b  * terms * windows + c
#   maxscore    time = a' * decoded  + b' * terms * windows + c'
# where postings are the query terms' (what the exhaustive kernel decodes),
# decoded what MaxScore decoded, terms the query's and windows the index's
# documents / 16384 (SPM_WINDOW).  It prints them and the unit costs of
# spm_costs they give, in postings of the exhaustive kernel:
# posting_maxscore = a'/a, term_window_exhaustive = b/a,
# term_window_maxscore = b'/a.  Fit on an index of one segment (REINDEX
# first): windows are counted over the whole index.
#
# It reads and changes nothing of the database: the queries run in one
# session, whose settings and a temporary function (pg_temp) end with it.
# Needs psql and awk.  doc/decisions.md "A cost model per query (issue
# 37)" has what it printed on the real-text tier.
set -euo pipefail

DSN= TABLE= COLUMN= QTABLE= QCOLUMN=q LIMIT=10 REPS=3 MAX=1000
usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--dsn) DSN=${2:?}; shift ;;
	--table) TABLE=${2:?}; shift ;;
	--column) COLUMN=${2:?}; shift ;;
	--queries) QTABLE=${2:?}; shift ;;
	--qcolumn) QCOLUMN=${2:?}; shift ;;
	--limit) LIMIT=${2:?}; shift ;;
	--reps) REPS=${2:?}; shift ;;
	--max) MAX=${2:?}; shift ;;
	-h|--help) usage ;;
	*) echo "policyfit: unknown argument $1" >&2; usage ;;
	esac
	shift
done
[ -n "$DSN" ] && [ -n "$TABLE" ] && [ -n "$COLUMN" ] && [ -n "$QTABLE" ] || usage
for n in "$LIMIT" "$REPS" "$MAX"; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "policyfit: --limit, --reps and --max take a positive integer" >&2; exit 2; }
done

OUTF=$(mktemp "${TMPDIR:-/tmp}/policyfit.XXXXXX")
trap 'rm -f "$OUTF"' EXIT

# one line per query: terms, postings, decoded, maxscore ms, exhaustive ms;
# the names go through format('%s') as regclass and quote_ident, so a
# name cannot inject SQL
psql -X -q -v ON_ERROR_STOP=1 -At -F ' ' -d "$DSN" \
	-v tbl="$TABLE" -v col="$COLUMN" -v qtbl="$QTABLE" -v qcol="$QCOLUMN" \
	-v lim="$LIMIT" -v reps="$REPS" -v max="$MAX" >"$OUTF" <<'EOF'
CREATE FUNCTION pg_temp.policyfit(tbl regclass, col text, qtbl regclass, qcol text,
	lim int, reps int, maxq int)
RETURNS TABLE (terms int, postings bigint, decoded bigint, ms_maxscore float8, ms_exhaustive float8)
LANGUAGE plpgsql AS $$
DECLARE
	q sparsevec;
	algs text[] := ARRAY['maxscore', 'exhaustive'];
	best float8[];
	dec bigint[];
	t0 timestamptz;
	el float8;
	d bigint;
	sql text := format('SELECT count(*) FROM (SELECT 1 FROM %s ORDER BY %I <#> $1 LIMIT %s) s',
					   tbl, col, lim);
BEGIN
	FOR q IN EXECUTE format('SELECT %I FROM %s WHERE %I IS NOT NULL LIMIT %s', qcol, qtbl, qcol, maxq) LOOP
		best := ARRAY[1e300, 1e300];
		dec := ARRAY[0, 0];
		FOR r IN 1 .. reps LOOP
			FOR i IN 1 .. 2 LOOP
				PERFORM set_config('sparse_maxscore.algorithm', algs[i], true);
				t0 := clock_timestamp();
				EXECUTE sql USING q;
				el := extract(epoch FROM clock_timestamp() - t0) * 1000;
				best[i] := least(best[i], el);
				SELECT postings_decoded INTO STRICT d FROM sparse_maxscore_last_scan();
				dec[i] := d;
			END LOOP;
		END LOOP;
		terms := cardinality(regexp_split_to_array(split_part(q::text, '}', 1), ','));
		postings := dec[2];
		decoded := dec[1];
		ms_maxscore := best[1];
		ms_exhaustive := best[2];
		RETURN NEXT;
	END LOOP;
END $$;
SET enable_seqscan = off;
SELECT 'W', ceil(documents / 16384.0) FROM sparse_maxscore_info(
	(SELECT indexrelid::regclass FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	 JOIN pg_am a ON a.oid = c.relam
	 WHERE i.indrelid = :'tbl'::regclass AND a.amname = 'sparse_maxscore' LIMIT 1));
SELECT 'Q', * FROM pg_temp.policyfit(:'tbl'::regclass, :'col', :'qtbl'::regclass, :'qcol',
	:lim, :reps, :max);
EOF

# least squares of y on (x1, x2, 1) by the normal equations, in awk
awk '
function fit(n, X1, X2, Y, out,    i, a, b, c, d, e, f, g, h, k, det) {
	a = b = c = d = e = f = g = h = k = 0
	for (i = 1; i <= n; i++) {
		a += X1[i] * X1[i]; b += X1[i] * X2[i]; c += X1[i]
		d += X2[i] * X2[i]; e += X2[i]; f += 1
		g += X1[i] * Y[i]; h += X2[i] * Y[i]; k += Y[i]
	}
	# | a b c | |p|   |g|
	# | b d e | |q| = |h|
	# | c e f | |r|   |k|
	det = a * (d * f - e * e) - b * (b * f - c * e) + c * (b * e - c * d)
	if (det == 0) { print "policyfit: the fit is singular (too few or too alike queries)" > "/dev/stderr"; exit 1 }
	out[1] = (g * (d * f - e * e) - b * (h * f - e * k) + c * (h * e - d * k)) / det
	out[2] = (a * (h * f - e * k) - g * (b * f - c * e) + c * (b * k - h * c)) / det
	out[3] = (a * (d * k - h * e) - b * (b * k - h * c) + g * (b * e - c * d)) / det
}
$1 == "W" { W = $2 }
$1 == "Q" { n++; tw = $2 * W
	XE1[n] = $3; XM1[n] = $4; X2[n] = tw
	YM[n] = $5 * 1000; YE[n] = $6 * 1000 }
END {
	if (n < 10) { print "policyfit: fewer than 10 queries" > "/dev/stderr"; exit 1 }
	fit(n, XE1, X2, YE, E); fit(n, XM1, X2, YM, M)
	printf "queries %d, windows %d\n", n, W
	printf "exhaustive: %.3f ns/posting, %.1f ns/term-window, %.1f us fixed\n", E[1] * 1000, E[2] * 1000, E[3]
	printf "maxscore:   %.3f ns/decoded posting, %.1f ns/term-window, %.1f us fixed\n", M[1] * 1000, M[2] * 1000, M[3]
	printf "spm_costs: posting_maxscore %.2f, term_window_exhaustive %.0f, term_window_maxscore %.0f\n",
		M[1] / E[1], E[2] / E[1], M[2] / E[1]
}' "$OUTF"
