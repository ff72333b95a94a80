# sparse_maxscore under concurrent writes and reads, randomly interleaved
# (pgbench, 6 clients, 8 s by default): inserts that flush by themselves (64kB
# pending list), deletes, updates, VACUUM, explicit flushes and
# compactions, and readers that check, in a REPEATABLE READ snapshot, that
# an index scan equals a sequential scan -- with and without LIMIT, and
# through a cursor read one row at a time from a scan started with
# initial_k = 3 (so that its rounds interleave with the writers).  Any
# error, or any difference (raised as an error), aborts a client and fails
# the test.  Afterwards verify passes, and after a VACUUM no page is
# unreachable.
#
# Then the same on a quantized index with range data (format 6): its scans
# may raise SQLSTATE 40001 when a flush or merge publishes while they read
# past every row of positive score (src/README "Structure changes during a
# scan"), so pgbench retries those (--max-tries); every other error, and any
# difference, still fails, and so does a transaction that used up its
# tries.  Its rows have no negative weight (range pruning runs only on
# segments without).  No cursor clients there: a no-LIMIT scan held open
# across many publishes is what raises 40001 by design.

use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use SpmwTest;

my $node = spmw_node('spmw_stress', conf => "max_connections = 20\n");

my $dims = 1500;
$node->safe_psql('postgres', qq{
CREATE TABLE st (id int, v sparsevec);
INSERT INTO st SELECT i, CASE WHEN i % 29 = 0 THEN NULL ELSE spmw_vec(i, 1 + i % 40, $dims, 0.1) END
FROM generate_series(1, 2000) i;
-- exact weights (quantize = off): a scan that reads past the rows of
-- positive score never meets SQLSTATE 40001 (src/README "Structure
-- changes during a scan"), so any error is a failure
CREATE INDEX st_idx ON st USING sparse_maxscore (v) WITH (ranges = on, quantize = off, pending_list_limit = 64, compact_segments = 2);
CREATE SEQUENCE ids START 100000;

-- raise if an index scan of query q (1..8 of spmw_queries, 9: NULL)
-- differs from a sequential scan
CREATE FUNCTION st_check(q int, lim int) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE
	msg text := spmw_diff('st', (spmw_queries($dims))[q], lim);
BEGIN
	IF msg IS NOT NULL THEN
		RAISE EXCEPTION 'query % limit %: %', q, lim, msg;
	END IF;
END \$\$;

-- the same through a cursor, one row per FETCH, rounds of 3, 6, 12 ...
CREATE FUNCTION st_cursor_check(q int) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE
	qv sparsevec := (spmw_queries($dims))[q];
	c refcursor;
	r record;
	ti bigint[] := '{}';
	td float8[] := '{}';
	ri bigint[];
	rd float8[];
	msg text;
BEGIN
	PERFORM set_config('sparse_maxscore.initial_k', '3', true);
	PERFORM set_config('enable_seqscan', 'off', true);
	OPEN c FOR SELECT id::bigint AS id, v <#> qv AS d FROM st ORDER BY v <#> qv;
	LOOP
		FETCH c INTO r;
		EXIT WHEN NOT FOUND;
		ti := ti || r.id;
		td := td || r.d;
		IF cardinality(ti) % 200 = 0 THEN
			PERFORM pg_sleep(0.005);
		END IF;
	END LOOP;
	CLOSE c;
	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'off', true);
	SELECT array_agg(id), array_agg(v <#> qv) INTO ri, rd FROM st;
	PERFORM set_config('enable_indexscan', 'on', true);
	msg := spmw_cmp(ti, td, ri, rd, NULL);
	IF msg IS NOT NULL THEN
		RAISE EXCEPTION 'cursor, query %: %', q, msg;
	END IF;
END \$\$;
});

# SPMW_STRESS_SECONDS runs it longer (by hand)
my $seconds = $ENV{SPMW_STRESS_SECONDS} // 8;
my %scripts = (
		'spmw_insert@6' => q{
\set n random(1, 30)
\set s random(1, 1000000)
INSERT INTO st SELECT nextval('ids'), CASE WHEN i % 13 = 0 THEN NULL
	WHEN i % 17 = 0 THEN spmw_vec(:s + i, 2500, 1500)
	ELSE spmw_vec(:s + i, 1 + i % 40, 1500, 0.1) END FROM generate_series(1, :n) i;
},
		'spmw_delete@2' => q{
\set k random(0, 96)
DELETE FROM st WHERE id % 97 = :k AND random() < 0.3;
},
		'spmw_update@1' => q{
\set k random(0, 50)
\set s random(1, 1000000)
UPDATE st SET v = spmw_vec(:s, 12, 1500, 0.3) WHERE id % 51 = :k AND random() < 0.2;
},
		'spmw_vacuum@1' => q{
VACUUM st;
},
		'spmw_flush@1' => q{
SELECT sparse_maxscore_flush('st_idx');
},
		'spmw_compact@1' => q{
SELECT sparse_maxscore_compact('st_idx');
},
		'spmw_read@4' => q{
\set q random(1, 9)
\set l random(1, 3)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT st_check(:q, CASE :l WHEN 1 THEN 10 WHEN 2 THEN 100 END);
COMMIT;
},
		'spmw_cursor@2' => q{
\set q random(1, 8)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT st_cursor_check(:q);
COMMIT;
},
);

# every kind of client ran, the checking ones included
sub ran_all
{
	return map { qr{$_\n - weight: \d+ [^\n]*\n - [1-9]\d* transactions} } @_;
}

sub checks_after
{
	my ($what) = @_;
	spmw_verify_ok($node, 'st_idx', "after the stress$what");
	spmw_exact_ok($node, 'st', $dims, "after the stress$what");
	$node->safe_psql('postgres', 'VACUUM st');
	spmw_verify_ok($node, 'st_idx', "after the stress$what, VACUUM", unreachable => 0);
	spmw_exact_ok($node, 'st', $dims, "after the stress$what, VACUUM");
	note("index$what: " . $node->safe_psql('postgres', "SELECT sparse_maxscore_verify('st_idx')")
		  . ', table: ' . $node->safe_psql('postgres', 'SELECT count(*) FROM st') . ' rows');
}

$node->pgbench(
	"--no-vacuum --client=6 --jobs=2 --time=$seconds",
	0,
	[
		qr{actually processed},
		ran_all(qw(spmw_compact spmw_cursor spmw_delete spmw_flush spmw_insert spmw_read spmw_update spmw_vacuum))
	],
	[qr{^$}],
	'concurrent writes and exact reads',
	\%scripts);
checks_after('');

# the quantized index with range data (format 6), on non-negative weights
# only (range pruning does not run on segments with negative weights)
$node->safe_psql('postgres', q{
DROP INDEX st_idx;
TRUNCATE st;
INSERT INTO st SELECT i, CASE WHEN i % 29 = 0 THEN NULL ELSE spmw_vec(i, 1 + i % 40, 1500) END
FROM generate_series(1, 2000) i;
CREATE INDEX st_idx ON st USING sparse_maxscore (v) WITH (ranges = on, pending_list_limit = 64, compact_segments = 2);
});
# range data (with quantize on by default: format 6), which range pruning
# reads, on every segment (no negative weight got in)
sub ranges_read_ok
{
	my ($name) = @_;
	is($node->safe_psql('postgres', qq{
SET sparse_maxscore.algorithm = ranges;
SET enable_seqscan = off;
SELECT count(*) FROM (SELECT id FROM st ORDER BY v <#> (spmw_queries($dims))[1] LIMIT 10) s;
SELECT segments_ranges > 0 AND segments_ranges = segments_maxscore + segments_ranges FROM sparse_maxscore_last_scan();
}), "10\nt", $name);
}
ranges_read_ok('the quantized index: range pruning reads every segment');
# the same clients under other names (pgbench's script files stay in the
# node's directory), writing non-negative weights, the readers taking the
# cursor clients' place
my %quant;
for my $name (keys %scripts)
{
	next if $name eq 'spmw_cursor@2';
	(my $script = $scripts{$name}) =~ s/, 1500, 0\.\d\)/, 1500)/g;
	(my $qname = $name) =~ s/^spmw_/spmq_/;
	$qname = 'spmq_read@6' if $qname eq 'spmq_read@4';
	$quant{$qname} = $script;
}
$node->pgbench(
	"--no-vacuum --client=6 --jobs=2 --time=$seconds --max-tries=1000",
	0,
	[
		qr{actually processed},
		qr{number of failed transactions: 0 },
		ran_all(qw(spmq_compact spmq_delete spmq_flush spmq_insert spmq_read spmq_update spmq_vacuum))
	],
	[qr{^$}],
	'concurrent writes and exact reads, quantized with range data (40001 retried)',
	\%quant);
ranges_read_ok('after the stress, quantized: range pruning reads every segment');
checks_after(', quantized');

$node->stop;
done_testing();
