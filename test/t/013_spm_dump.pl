# sparse_maxscore after writes, through the operations that rebuild,
# copy or reset an index:
#
#  * pg_dump and restore (custom format, into another database): the
#    restored index answers like the original, its reloptions are kept;
#  * REINDEX and REINDEX CONCURRENTLY, and CREATE INDEX CONCURRENTLY, with
#    rows inserted by another session while they run: afterwards every
#    row is found;
#  * an unlogged table: after a crash (immediate stop) the table is empty
#    and its index, reset from the init fork, works and takes new rows;
#  * TRUNCATE, also rolled back, then inserts;
#  * the maintenance functions refuse another session's temporary index.

use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use SpmwTest;

my $node = spmw_node('spmw_dump');

my $dims = 250;
my $row = "CASE WHEN i % 29 = 0 THEN NULL WHEN i % 31 = 0 THEN spmw_vec(i, 0, $dims) "
  . "ELSE spmw_vec(i, 1 + i % 45, $dims, CASE WHEN i % 3 = 0 THEN 0.3 ELSE 0 END) END";

# a table whose index has segments, dead rows and a pending list
$node->safe_psql('postgres', qq{
CREATE TABLE docs (id int, v sparsevec);
INSERT INTO docs SELECT i, $row FROM generate_series(1, 2000) i;
CREATE INDEX docs_idx ON docs USING sparse_maxscore (v)
	WITH (ranges = on, pending_list_limit = 128, compact_segments = 4);
INSERT INTO docs SELECT i, $row FROM generate_series(2001, 3000) i;
DELETE FROM docs WHERE id % 10 = 3;
VACUUM docs;
INSERT INTO docs SELECT i, $row FROM generate_series(3001, 3200) i;
});
my $v = spmw_verify_ok($node, 'docs_idx', 'before the dump');
cmp_ok($v->{pending}, '>', 0, 'the index has a pending list');
spmw_exact_ok($node, 'docs', $dims, 'before the dump');

# ---------------------------------------------------------- dump, restore
my $dump = $node->basedir . '/docs.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-d', $node->connstr('postgres'), '-f', $dump ], 'pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('restored'), $dump ], 'pg_restore');
spmw_same_answers_ok($node, $node, 'docs', $dims, 'restored index', db1 => 'postgres',
	db2 => 'restored', ties => 1);
spmw_exact_ok($node, 'docs', $dims, 'restored index', db => 'restored');
is($node->safe_psql('restored', "SELECT reloptions FROM pg_class WHERE relname = 'docs_idx'"),
	'{ranges=on,pending_list_limit=128,compact_segments=4}', 'restored index: reloptions kept');
$v = spmw_verify_ok($node, 'docs_idx', 'restored index', db => 'restored', unreachable => 0);
is("$v->{segments} $v->{pending}", '1 0', 'restored index: built as one segment');
# and it takes writes
$node->safe_psql('restored', qq{
INSERT INTO docs SELECT i, $row FROM generate_series(5001, 5800) i;
DELETE FROM docs WHERE id % 7 = 0;
VACUUM docs;
});
spmw_exact_ok($node, 'docs', $dims, 'restored index, written to', db => 'restored');

# ------------------------------------------------- rebuilds under inserts
# a session inserting one row per transaction until told to stop
sub start_inserter
{
	my ($from) = @_;
	$node->safe_psql('postgres', 'CREATE TABLE IF NOT EXISTS stop_inserting (x int); TRUNCATE stop_inserting;');
	my $bg = $node->background_psql('postgres', on_error_stop => 0);
	$bg->query_until(qr/inserting/, qq{\\echo inserting
DO \$\$
DECLARE
	i int := $from;
BEGIN
	LOOP
		INSERT INTO docs SELECT i, $row;
		COMMIT;
		i := i + 1;
		EXIT WHEN EXISTS (SELECT FROM stop_inserting);
		PERFORM pg_sleep(0.002);
	END LOOP;
END \$\$;
});
	return $bg;
}

sub stop_inserter
{
	my ($bg) = @_;
	$node->safe_psql('postgres', 'INSERT INTO stop_inserting VALUES (1)');
	$bg->query_safe('SELECT 1');
	$bg->quit;
	return;
}

my %seen;
for my $how ('REINDEX INDEX docs_idx', 'REINDEX INDEX CONCURRENTLY docs_idx',
	'DROP INDEX docs_idx; CREATE INDEX CONCURRENTLY docs_idx ON docs USING sparse_maxscore (v) WITH (ranges = on)')
{
	my $from = $node->safe_psql('postgres', 'SELECT max(id) + 1 FROM docs');
	my $before = $node->safe_psql('postgres', 'SELECT count(*) FROM docs');
	my $bg = start_inserter($from);
	usleep(300_000);
	$node->safe_psql('postgres', $how =~ s/; /;\n/r);
	usleep(300_000);
	stop_inserter($bg);
	my $added = $node->safe_psql('postgres', "SELECT count(*) FROM docs WHERE id >= $from");
	cmp_ok($added, '>', 0, "$how: rows were inserted meanwhile ($added)");
	spmw_exact_ok($node, 'docs', $dims, $how);
	spmw_verify_ok($node, 'docs_idx', $how);
	is($node->safe_psql('postgres', qq{
SELECT indisvalid AND indisready FROM pg_index WHERE indexrelid = 'docs_idx'::regclass}),
		't', "$how: the index is valid");
	# the rows inserted meanwhile, with their own vectors as queries
	is($node->safe_psql('postgres', qq{
SELECT count(*) FILTER (WHERE spmw_diff('docs', v, 3) IS NOT NULL) FROM docs WHERE id >= $from;}),
		'0', "$how: the rows inserted meanwhile as queries");
}
$node->safe_psql('postgres', 'VACUUM docs');
spmw_verify_ok($node, 'docs_idx', 'after the rebuilds, VACUUM', unreachable => 0);

# ------------------------------------------------------------ unlogged
$node->safe_psql('postgres', qq{
CREATE UNLOGGED TABLE ul (id int, v sparsevec);
INSERT INTO ul SELECT i, $row FROM generate_series(1, 1000) i;
CREATE INDEX ul_idx ON ul USING sparse_maxscore (v) WITH (ranges = on, pending_list_limit = 64);
INSERT INTO ul SELECT i, $row FROM generate_series(1001, 2000) i;
DELETE FROM ul WHERE id % 5 = 0;
VACUUM ul;
INSERT INTO ul SELECT i, $row FROM generate_series(2001, 2100) i;
});
spmw_exact_ok($node, 'ul', $dims, 'unlogged table');
spmw_verify_ok($node, 'ul_idx', 'unlogged table');
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*) FROM ul'), '0', 'unlogged table: empty after a crash');
is($node->safe_psql('postgres', qq{
SELECT segments, documents, pending_documents FROM sparse_maxscore_info('ul_idx')}),
	'0|0|0', 'unlogged table: its index is empty');
spmw_verify_ok($node, 'ul_idx', 'unlogged table after the crash', unreachable => 0);
spmw_exact_ok($node, 'ul', $dims, 'unlogged table after the crash');
$node->safe_psql('postgres', qq{
INSERT INTO ul SELECT i, $row FROM generate_series(1, 1500) i;
DELETE FROM ul WHERE id % 4 = 0;
VACUUM ul;
INSERT INTO ul SELECT i, $row FROM generate_series(1501, 1600) i;
});
spmw_exact_ok($node, 'ul', $dims, 'unlogged table, written after the crash');
spmw_verify_ok($node, 'ul_idx', 'unlogged table, written after the crash');
# the logged table came through the crash as it was
spmw_exact_ok($node, 'docs', $dims, 'logged table after the crash');

# ------------------------------------------------------------ TRUNCATE
$node->safe_psql('postgres', qq{
CREATE TABLE tr (id int, v sparsevec);
INSERT INTO tr SELECT i, $row FROM generate_series(1, 800) i;
CREATE INDEX tr_idx ON tr USING sparse_maxscore (v) WITH (ranges = on, pending_list_limit = 64);
INSERT INTO tr SELECT i, $row FROM generate_series(801, 1600) i;
});
spmw_exact_ok($node, 'tr', $dims, 'before TRUNCATE');
# rolled back: the old index is back
$node->safe_psql('postgres', qq{
BEGIN;
TRUNCATE tr;
INSERT INTO tr SELECT i, $row FROM generate_series(5000, 5100) i;
ROLLBACK;
});
is($node->safe_psql('postgres', 'SELECT count(*) FROM tr'), '1600', 'TRUNCATE rolled back');
spmw_exact_ok($node, 'tr', $dims, 'TRUNCATE rolled back');
spmw_verify_ok($node, 'tr_idx', 'TRUNCATE rolled back');
$node->safe_psql('postgres', 'TRUNCATE tr');
is($node->safe_psql('postgres', qq{
SELECT segments, documents, pending_documents FROM sparse_maxscore_info('tr_idx')}),
	'0|0|0', 'TRUNCATE empties the index');
spmw_exact_ok($node, 'tr', $dims, 'after TRUNCATE');
$node->safe_psql('postgres', qq{
INSERT INTO tr SELECT i, $row FROM generate_series(1, 1200) i;
DELETE FROM tr WHERE id % 6 = 0;
});
spmw_exact_ok($node, 'tr', $dims, 'TRUNCATE, then inserts');
$node->safe_psql('postgres', 'VACUUM tr');
spmw_verify_ok($node, 'tr_idx', 'TRUNCATE, then inserts, VACUUM', unreachable => 0);
spmw_exact_ok($node, 'tr', $dims, 'TRUNCATE, then inserts, VACUUM');
# TRUNCATE and inserts in one transaction
$node->safe_psql('postgres', qq{
BEGIN;
TRUNCATE tr;
INSERT INTO tr SELECT i, $row FROM generate_series(1, 300) i;
COMMIT;
});
spmw_exact_ok($node, 'tr', $dims, 'TRUNCATE and inserts in one transaction');
spmw_verify_ok($node, 'tr_idx', 'TRUNCATE and inserts in one transaction');

# ------------------------------------- another session's temporary index
my $tmp = $node->background_psql('postgres');
my $oid = $tmp->query_safe(qq{
CREATE TEMP TABLE tmp_docs (id int, v sparsevec);
INSERT INTO tmp_docs SELECT i, $row FROM generate_series(1, 100) i;
CREATE INDEX tmp_docs_idx ON tmp_docs USING sparse_maxscore (v) WITH (ranges = on);
INSERT INTO tmp_docs SELECT i, $row FROM generate_series(101, 150) i;
SELECT 'tmp_docs_idx'::regclass::oid;});
for my $f ('sparse_maxscore_flush', 'sparse_maxscore_compact', 'sparse_maxscore_info',
	'sparse_maxscore_verify')
{
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT $f($oid)",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($err, qr/ERROR:  0A000: cannot access temporary indexes of other sessions/,
		"$f refuses another session's temporary index");
}
is($tmp->query_safe("SELECT sparse_maxscore_flush('tmp_docs_idx')"), '50',
	'its own session flushes it');
$tmp->quit;

$node->stop;
done_testing();
