# sparse_maxscore and crashes: "pg_ctl stop -m immediate" in the middle
# of writes (src/README, "Flush and compaction" and "WAL").
#
#  * An insert stream (one row per transaction, some documents larger than
#    a page, pending_list_limit at 64kB so that inserts flush every ~150
#    rows) is stopped at three points.  After each restart: every row the
#    client saw committed is in the table, sparse_maxscore_verify passes,
#    index scans equal sequential scans (the queries without LIMIT cover
#    every row), and after a VACUUM no page is unreachable.
#  * A flush, a compaction and a VACUUM are each stopped at a known point:
#    after they published the new version of the index, while their drain
#    step waits for a scan round (held open by debug_round_delay), before
#    they freed the old pages; a commit in another session makes their WAL
#    durable first.  After the restart the new version is there, the old
#    pages are unreachable (verify counts them), scans are exact, and
#    VACUUM reclaims them.
#  * Afterwards the index takes inserts and stays exact.

use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use SpmwTest;

my $node = spmw_node('spmw_crash');

my $dims = 5000;
# row i: a NULL, an empty vector, a document of ~2000 non-zeros (larger
# than a page), or an ordinary one
my $row = "CASE WHEN i % 17 = 0 THEN NULL WHEN i % 23 = 0 THEN spmw_vec(i, 0, $dims) "
  . "WHEN i % 40 = 0 THEN spmw_vec(i, 2500, $dims) "
  . "ELSE spmw_vec(i, 1 + i % 60, $dims, 0.1) END";
$node->safe_psql('postgres', qq{
CREATE TABLE docs (id int, v sparsevec);
INSERT INTO docs SELECT i, $row FROM generate_series(1, 1500) i;
CREATE INDEX docs_idx ON docs USING sparse_maxscore (v) WITH (ranges = on, pending_list_limit = 64);
CREATE SEQUENCE ids START 100000;
CREATE TABLE wal_flush (x int);
});

sub crash_restart
{
	my ($label) = @_;
	$node->stop('immediate');
	$node->start;
	note("$label: restarted");
	return;
}

# the checks after a restart; $unreachable: undef (any), '>0', or a number
sub after_restart
{
	my ($label, $unreachable) = @_;
	my $v = spmw_verify_ok($node, 'docs_idx', $label);
	if (defined $unreachable && $unreachable eq '>0')
	{
		cmp_ok($v->{unreachable} // 0, '>', 0, "$label: the old pages are unreachable");
	}
	note("$label: verify " . join(' ', map { "$_=$v->{$_}" } sort keys %$v));
	spmw_exact_ok($node, 'docs', $dims, $label);
	$node->safe_psql('postgres', 'VACUUM docs');
	spmw_verify_ok($node, 'docs_idx', "$label, then VACUUM", unreachable => 0);
	spmw_exact_ok($node, 'docs', $dims, "$label, then VACUUM");
	return $v;
}

# ------------------------------------------------- an insert stream, stopped
for my $ms (400, 900, 1500)
{
	my $bg = $node->background_psql('postgres', on_error_stop => 0);
	$bg->query_until(qr/started/, qq{\\echo started
DO \$\$
DECLARE
	i int;
BEGIN
	FOR n IN 1 .. 1000000 LOOP
		i := nextval('ids');
		INSERT INTO docs VALUES (i, $row);
		COMMIT;
		RAISE NOTICE 'committed %', i;
	END LOOP;
END \$\$;
});
	# collect the notices as they come
	for (my $t = 0; $t < $ms; $t += 50)
	{
		usleep(50_000);
		$bg->{run}->pump_nb;
	}
	crash_restart("insert stream stopped after $ms ms");
	eval { $bg->{run}->pump_nb for 1 .. 5; $bg->quit; };
	my @done = $bg->{stderr} =~ /NOTICE:  committed (\d+)/g;
	cmp_ok(scalar(@done), '>', 10, "insert stream ($ms ms): rows were committed");
	my $ids = join(',', @done);
	my $missing = $node->safe_psql('postgres',
		"SELECT count(*) FROM unnest('{$ids}'::int[]) c(id) WHERE NOT EXISTS (SELECT FROM docs d WHERE d.id = c.id)");
	is($missing, '0', "insert stream ($ms ms): no committed row is missing");
	after_restart("insert stream stopped after $ms ms");
}

# ------------------------------------------- stopped while waiting to drain
# hold a scan round open (10 s) in one session, start $writer in another,
# wait until the writer waits for the round, then stop
sub stop_in_drain
{
	my ($label, $writer) = @_;
	my $reader = $node->background_psql('postgres', on_error_stop => 0);
	$reader->query_safe('SET enable_seqscan = off; SET sparse_maxscore.debug_round_delay = 10000;');
	$reader->query_until(qr/reading/,
		"\\echo reading\nSELECT id FROM docs ORDER BY v <#> spmw_vec(1, 10, $dims) LIMIT 1;\n");
	$node->poll_query_until('postgres', qq{
SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'page' AND relation = 'docs_idx'::regclass
	AND page = 1 AND mode = 'ShareLock' AND granted)})
	  or die "$label: the round did not start";
	my $w = $node->background_psql('postgres', on_error_stop => 0);
	$w->query_until(qr/writing/, "\\echo writing\n$writer;\n");
	# wait (up to 30 s) until it waits for the round, unless it failed
	my $waits = 'f';
	for (my $i = 0; $i < 300 && $waits ne 't'; $i++)
	{
		$waits = $node->safe_psql('postgres', qq{
SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'page' AND relation = 'docs_idx'::regclass
	AND page = 1 AND mode = 'ExclusiveLock' AND NOT granted)});
		$w->{run}->pump_nb;
		last if $w->{stderr} =~ /ERROR/;
		usleep(100_000) if $waits ne 't';
	}
	is($waits, 't', "$label: waits for the scan round") or diag($w->{stderr});
	# make what it wrote so far durable: the commit of a transaction that
	# wrote WAL flushes all WAL before it
	$node->safe_psql('postgres', 'INSERT INTO wal_flush VALUES (1)');
	crash_restart($label);
	eval { $reader->quit; };
	eval { $w->quit; };
	return;
}

# a flush: the new segment is published, the old pending pages not freed
$node->safe_psql('postgres', qq{
ALTER INDEX docs_idx SET (pending_list_limit = 4096);
INSERT INTO docs SELECT nextval('ids'), $row FROM generate_series(1, 600) i;
});
my $pending = $node->safe_psql('postgres', "SELECT pending_documents FROM sparse_maxscore_info('docs_idx')");
cmp_ok($pending, '>=', 600, 'rows pending before the flush');
stop_in_drain('flush stopped in its drain step', "SELECT sparse_maxscore_flush('docs_idx')");
is($node->safe_psql('postgres', "SELECT pending_documents FROM sparse_maxscore_info('docs_idx')"), '0',
	'flush stopped in its drain step: the flush was published');
after_restart('flush stopped in its drain step', '>0');

# a compaction: the merged segment is published, the old segments' pages
# not freed.  How many segments the VACUUM leaves depends on how many rows
# the timed insert streams above wrote (fewer on a loaded machine), and
# the tiered policy merges four small segments into one, so flush batches
# until there are several (at most four batches: from one segment, the
# next flush makes two).
$node->safe_psql('postgres', qq{
DELETE FROM docs WHERE id % 9 = 0;
VACUUM docs;
});
my $segments = 0;
for (my $i = 0; $i < 4 && $segments <= 1; $i++)
{
	$node->safe_psql('postgres', qq{
INSERT INTO docs SELECT nextval('ids'), $row FROM generate_series(1, 300) i;
SELECT sparse_maxscore_flush('docs_idx');
});
	$segments = $node->safe_psql('postgres', "SELECT segments FROM sparse_maxscore_info('docs_idx')");
}
cmp_ok($segments, '>', 1, 'several segments before the compaction');
stop_in_drain('compaction stopped in its drain step', "SELECT sparse_maxscore_compact('docs_idx')");
is($node->safe_psql('postgres', "SELECT segments FROM sparse_maxscore_info('docs_idx')"), '1',
	'compaction stopped in its drain step: the merged segment was published');
after_restart('compaction stopped in its drain step', '>0');

# a VACUUM: dead rows' bits cleared, then stopped in its cleanup's flush
$node->safe_psql('postgres', qq{
INSERT INTO docs SELECT nextval('ids'), $row FROM generate_series(1, 500) i;
DELETE FROM docs WHERE id % 4 = 1;
});
stop_in_drain('VACUUM stopped in its drain step', 'VACUUM docs');
after_restart('VACUUM stopped in its drain step', '>0');

# ------------------------------------------------------------ and goes on
$node->safe_psql('postgres', qq{
ALTER INDEX docs_idx SET (pending_list_limit = 64);
INSERT INTO docs SELECT nextval('ids'), $row FROM generate_series(1, 1000) i;
UPDATE docs SET v = spmw_vec(id, 7, $dims) WHERE id % 13 = 0;
});
spmw_exact_ok($node, 'docs', $dims, 'inserts after the crashes');
$node->safe_psql('postgres', 'VACUUM docs');
spmw_verify_ok($node, 'docs_idx', 'inserts after the crashes, then VACUUM', unreachable => 0);
spmw_exact_ok($node, 'docs', $dims, 'inserts after the crashes, then VACUUM');

$node->stop;
done_testing();
