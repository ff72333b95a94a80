# sparse_maxscore and WAL: crash recovery and a streaming standby.
#
#  * VACUUM reports the index's live rows, pages and removed rows.
#  * An index built and then VACUUMed (alive bits cleared) without a
#    checkpoint survives "pg_ctl stop -m immediate": after recovery its
#    scans equal a seq scan, and the deleted rows are skipped inside the
#    index (rows_returned = LIMIT).
#  * An unlogged table's index comes back empty from its init fork
#    (ambuildempty) and is usable: scans return nothing, REINDEX works,
#    inserts are refused as before.
#  * A standby that replays the same build and VACUUM answers the same
#    queries through the index with the same rows.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use SpmTest;

my $primary = PostgreSQL::Test::Cluster->new('spm_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "autovacuum = off\n");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION sparsevec');
$primary->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('spm_standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;

# the same rows in a logged and an unlogged table: ties, negative weights,
# NULL and empty vectors
my $rows = q{
SELECT i AS id, CASE WHEN i % 31 = 0 THEN NULL WHEN i % 37 = 0 THEN '{}/500'::sparsevec
	ELSE to_sparsevec(ARRAY(SELECT DISTINCT 1 + (i * j * 7919 + j * j) % 480 FROM generate_series(1, 1 + i % 17) j ORDER BY 1),
		ARRAY(SELECT (CASE WHEN (i + j) % 9 = 0 THEN -1 ELSE 1 END * (1 + (i + j) % 4) / 2.0)::real
			FROM (SELECT DISTINCT 1 + (i * j * 7919 + j * j) % 480 AS j FROM generate_series(1, 1 + i % 17) j ORDER BY 1) s),
		500) END AS v
FROM generate_series(1, 3000) i};
$primary->safe_psql('postgres', qq{
CREATE TABLE logged AS $rows;
CREATE UNLOGGED TABLE unlogged AS $rows;
CREATE INDEX logged_idx ON logged USING sparse_maxscore (v) WITH (ranges = on);
CREATE INDEX unlogged_idx ON unlogged USING sparse_maxscore (v) WITH (ranges = on);
});
is($primary->safe_psql('postgres',
		'SELECT count(*), count(*) FILTER (WHERE v IS NULL), count(*) FILTER (WHERE nnz(v) = 0) FROM logged'),
	'3000|96|79', 'the data has NULL and empty vectors');

my @queries = ("'{1:1,2:1,3:1}/500'", "'{5:1,7:-1,490:1}/500'", "'{}/500'",
	"(SELECT NULL::sparsevec)", "'{10:2,20:0.5,30:-0.5,40:1,50:1,60:1}/500'");

sub check
{
	my ($node, $table, $label) = @_;
	check_scans($node, $table, $label, queries => \@queries);
}

# delete the rows closest to a query (and those tied with the 40th), and
# VACUUM: from then on the index skips them itself
my $q0 = "'{1:1,2:1,3:1}/500'";
my $cut = $primary->safe_psql('postgres',
	"SELECT d FROM (SELECT v <#> $q0 AS d FROM logged ORDER BY 1 LIMIT 1 OFFSET 39) s");
my $deleted = $primary->safe_psql('postgres',
	"WITH d AS (DELETE FROM logged WHERE v <#> $q0 <= $cut RETURNING 1) SELECT count(*) FROM d");
cmp_ok($deleted, '>=', 40, "deleted the $deleted rows closest to $q0");
$deleted += $primary->safe_psql('postgres',
	'WITH d AS (DELETE FROM logged WHERE id % 10 = 3 RETURNING 1) SELECT count(*) FROM d');

# what VACUUM reports about the index (the DEBUG2 messages of
# vac_bulkdel_one_index and vac_cleanup_one_index)
sub vacuum_report
{
	my ($node, $table, $removed, $label) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"SET client_min_messages = debug2;
VACUUM $table;");
	is($ret, 0, "$label: VACUUM");
	my ($rows, $pages) = $stderr =~ /index "${table}_idx" now contains (\d+) row versions in (\d+) pages/;
	my ($gone) = $stderr =~ /index "${table}_idx" now contains .*\n.*?(\d+) index row versions were removed/;
	my $facts = $node->safe_psql('postgres',
		"SELECT count(*), pg_relation_size('${table}_idx') / current_setting('block_size')::int FROM $table");
	is(join('|', $rows // '?', $pages // '?', $gone // '?'), "$facts|$removed",
		"$label: VACUUM reports the live rows, the index pages and the removed rows")
	  or diag($stderr);
}
vacuum_report($primary, 'logged', $deleted, 'primary');

sub rows_returned_at_10
{
	my ($node) = @_;
	return $node->safe_psql('postgres', qq{
SET enable_seqscan = off;
SELECT count(*) FROM (SELECT id FROM logged ORDER BY v <#> $q0 LIMIT 10) s;
SELECT rows_returned FROM sparse_maxscore_last_scan();});
}
is(rows_returned_at_10($primary), "10\n10", 'after VACUUM the index skips the deleted rows');
check($primary, 'logged', 'primary, before the crash');
check($primary, 'unlogged', 'primary, unlogged table, before the crash');

# ------------------------------------------------------------ standby

$primary->wait_for_catchup($standby);
check($standby, 'logged', 'standby');
is(rows_returned_at_10($standby), "10\n10", 'standby: the index skips the deleted rows');

# ------------------------------------------------------------ crash

my $logstart = -s $primary->logfile;
$primary->stop('immediate');
$primary->start;
ok($primary->log_contains('redo starts at', $logstart), 'the restart replayed WAL');

check($primary, 'logged', 'after crash recovery');
is(rows_returned_at_10($primary), "10\n10", 'after crash recovery the index skips the deleted rows');

# the unlogged table is empty; its index, reset from the init fork, works
is($primary->safe_psql('postgres', 'SELECT count(*) FROM unlogged'), '0',
	'unlogged table empty after the crash');
is($primary->safe_psql('postgres', qq{
SET enable_seqscan = off;
SELECT count(*) FROM (SELECT id FROM unlogged ORDER BY v <#> '{1:1}/500' LIMIT 10) s;
SELECT count(*) FROM (SELECT id FROM unlogged ORDER BY v <#> (SELECT NULL::sparsevec)) s;
SELECT rows_returned FROM sparse_maxscore_last_scan();}),
	"0\n0\n0", 'the unlogged index scans, returning nothing');
like($primary->safe_psql('postgres', qq{
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM unlogged ORDER BY v <#> '{1:1}/500' LIMIT 10;}),
	qr/Index Scan using unlogged_idx/, 'by an index scan');
# the reset index takes inserts again
is($primary->safe_psql('postgres', qq{
INSERT INTO unlogged VALUES (1, '{1:1}/500');
SET enable_seqscan = off;
SELECT id FROM unlogged ORDER BY v <#> '{1:1}/500' LIMIT 10;}),
	'1', 'an insert after the crash is found by the index');
$primary->safe_psql('postgres', "REINDEX INDEX unlogged_idx;");
$primary->safe_psql('postgres',
	"TRUNCATE unlogged;\nINSERT INTO unlogged $rows;");
check($primary, 'unlogged', 'unlogged table reloaded after the crash');

# the standby follows the restarted primary
$deleted = $primary->safe_psql('postgres',
	'WITH d AS (DELETE FROM logged WHERE id % 10 = 4 RETURNING 1) SELECT count(*) FROM d');
vacuum_report($primary, 'logged', $deleted, 'primary after the crash');
$primary->wait_for_catchup($standby);
check($standby, 'logged', 'standby, after another DELETE and VACUUM');

$standby->stop;
$primary->stop;
done_testing();
