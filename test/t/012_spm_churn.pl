# sparse_maxscore under churn (doc/design.md hazards 2 and 3): cycles of
# insert, delete, update and VACUUM, so that heap slots freed by VACUUM
# are reused by new rows while the index still holds (dead) documents of
# the old ones.  After every cycle index scans equal sequential scans (with and
# without LIMIT, NULL and negative weights included; the new rows in reused
# slots found with their own vectors), and sparse_maxscore_verify passes
# with no unreachable page.
#
# And the size bound of issue 4: after every row is updated three times
# (three statements) and one VACUUM, the index is at most 1.5 times the
# size of a fresh REINDEX -- with the default pending list, and with one
# of 64kB (the updates flush as they go).  Last, a VACUUM of a pending
# list whose rows are all deleted.

use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use SpmwTest;

my $node = spmw_node('spmw_churn');

my $dims = 300;
my $row = "CASE WHEN i % 29 = 0 THEN NULL WHEN i % 31 = 0 THEN spmw_vec(i, 0, $dims) "
  . "ELSE spmw_vec(i, 1 + i % 45, $dims, CASE WHEN i % 3 = 0 THEN 0.3 ELSE 0 END) END";

$node->safe_psql('postgres', qq{
CREATE TABLE churn (id int, v sparsevec);
INSERT INTO churn SELECT i, $row FROM generate_series(1, 3000) i;
CREATE INDEX churn_idx ON churn USING sparse_maxscore (v) WITH (ranges = on, pending_list_limit = 128);
CREATE SEQUENCE ids START 10000;
-- heap slots freed by the deletes so far
CREATE TABLE freed (tid tid);
});

my $reused_total = 0;
for my $cycle (1 .. 6)
{
	# new rows: in slots the last VACUUM freed, if any
	my $reused = $node->safe_psql('postgres', qq{
WITH n AS (INSERT INTO churn SELECT i, $row FROM (SELECT nextval('ids')::int AS i FROM generate_series(1, 400)) s
	RETURNING id, ctid)
SELECT count(*) FROM n WHERE ctid IN (SELECT tid FROM freed);
});
	$reused_total += $reused;
	spmw_exact_ok($node, 'churn', $dims, "cycle $cycle, inserted ($reused rows in freed slots)");

	# delete old and new rows, and update some
	$node->safe_psql('postgres', qq{
TRUNCATE freed;
WITH d AS (DELETE FROM churn WHERE hashint4(id * 7 + $cycle) % 6 = 0 RETURNING ctid)
INSERT INTO freed SELECT ctid FROM d;
UPDATE churn SET v = spmw_vec(id + $cycle * 100000, 9, $dims, 0.2) WHERE hashint4(id + $cycle) % 10 = 0;
});
	spmw_exact_ok($node, 'churn', $dims, "cycle $cycle, deleted and updated");

	$node->safe_psql('postgres', 'VACUUM churn');
	spmw_verify_ok($node, 'churn_idx', "cycle $cycle, VACUUM", unreachable => 0);
	spmw_exact_ok($node, 'churn', $dims, "cycle $cycle, VACUUM");
	is($node->safe_psql('postgres', qq{
SELECT documents = (SELECT count(*) FROM churn) FROM sparse_maxscore_info('churn_idx')}),
		't', "cycle $cycle: the index holds as many live documents as the table has rows");
}
cmp_ok($reused_total, '>', 100, "new rows took freed heap slots ($reused_total)");

# rows in reused slots, with their own vectors as queries
is($node->safe_psql('postgres', qq{
INSERT INTO churn SELECT i, $row FROM (SELECT nextval('ids')::int AS i FROM generate_series(1, 300)) s;
SELECT count(*) FILTER (WHERE spmw_diff('churn', v, 3) IS NOT NULL),
	count(*) FILTER (WHERE ctid IN (SELECT tid FROM freed)) > 0
FROM churn WHERE id >= 10000 AND v IS NOT NULL AND id % 7 = 0;}),
	"0|t", 'rows in reused slots: their own vectors find them');
$node->safe_psql('postgres', 'VACUUM churn');
spmw_verify_ok($node, 'churn_idx', 'after the cycles', unreachable => 0);

# ------------------------------------------------------------ size bound
for my $limit ('4096', '64')
{
	my $t = "upd_$limit";
	$node->safe_psql('postgres', qq{
CREATE TABLE $t (id int, v sparsevec);
INSERT INTO $t SELECT i, spmw_vec(i, 1 + i % 50, $dims) FROM generate_series(1, 3000) i;
CREATE INDEX ${t}_idx ON $t USING sparse_maxscore (v) WITH (ranges = on, pending_list_limit = $limit);
UPDATE $t SET v = spmw_vec(id + 100000, 1 + id % 50, $dims);
UPDATE $t SET v = spmw_vec(id + 200000, 1 + id % 50, $dims);
UPDATE $t SET v = spmw_vec(id + 300000, 1 + id % 50, $dims);
});
	my $before = $node->safe_psql('postgres', "SELECT pg_relation_size('${t}_idx')");
	$node->safe_psql('postgres', "VACUUM $t");
	my $after = $node->safe_psql('postgres', "SELECT pg_relation_size('${t}_idx')");
	spmw_verify_ok($node, "${t}_idx", "pending_list_limit $limit: three updates of every row, VACUUM",
		unreachable => 0);
	spmw_exact_ok($node, $t, $dims, "pending_list_limit $limit: three updates of every row, VACUUM");
	$node->safe_psql('postgres', "REINDEX INDEX ${t}_idx");
	my $fresh = $node->safe_psql('postgres', "SELECT pg_relation_size('${t}_idx')");
	cmp_ok($after, '<=', 1.5 * $fresh,
		"pending_list_limit $limit: after three updates and VACUUM the index ($after bytes, "
		  . "$before before the VACUUM) is at most 1.5 x a fresh REINDEX ($fresh)");
	spmw_exact_ok($node, $t, $dims, "pending_list_limit $limit: after REINDEX");
}

# ------------------------------------- a pending list of deleted rows only
# Everything inserted since the last flush deleted, then VACUUM: the
# cleanup's flush has no live document to write.  Each statement runs in
# a session of its own, so that a buffer left locked by one (as at
# f44a1ba, where such a flush left its buffer locked) cannot hang
# the next.  Last in this file, because at f44a1ba the second VACUUM ends
# in an assertion failure (reclaim meeting a new, uninitialised page).
$node->safe_psql('postgres', qq{
CREATE TABLE gone (id int, v sparsevec);
CREATE INDEX gone_idx ON gone USING sparse_maxscore (v) WITH (ranges = on);
INSERT INTO gone VALUES (1, spmw_vec(1, 5, $dims)), (2, NULL);
DELETE FROM gone;
});
my ($ret, $out, $err) = $node->psql('postgres', 'VACUUM gone');
is($ret, 0, 'pending rows all deleted: VACUUM');
unlike($err, qr/WARNING|ERROR/, 'pending rows all deleted: VACUUM without a warning') or diag($err);
spmw_verify_ok($node, 'gone_idx', 'pending rows all deleted, VACUUM');
spmw_exact_ok($node, 'gone', $dims, 'pending rows all deleted, VACUUM');
# the same behind a segment, then reinserted
$node->safe_psql('postgres', qq{
INSERT INTO gone SELECT i, $row FROM generate_series(1, 300) i;
SELECT sparse_maxscore_flush('gone_idx');
INSERT INTO gone SELECT i, $row FROM generate_series(301, 400) i;
DELETE FROM gone WHERE id > 300;
});
($ret, $out, $err) = $node->psql('postgres', 'VACUUM gone');
is($ret, 0, 'pending rows all deleted behind a segment: VACUUM');
unlike($err, qr/WARNING|ERROR/, 'pending rows all deleted behind a segment: VACUUM without a warning')
  or diag($err);
spmw_exact_ok($node, 'gone', $dims, 'pending rows all deleted behind a segment, VACUUM');
$node->safe_psql('postgres', "INSERT INTO gone SELECT i, $row FROM generate_series(301, 600) i");
($ret, $out, $err) = $node->psql('postgres', 'VACUUM gone');
is($ret, 0, 'reinserted, VACUUM again') or diag($err);
spmw_verify_ok($node, 'gone_idx', 'reinserted, VACUUM again', unreachable => 0);
spmw_exact_ok($node, 'gone', $dims, 'reinserted, VACUUM again');

$node->stop;
done_testing();
