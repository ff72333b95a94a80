# sparse_maxscore writes and WAL: a streaming standby answers like the
# primary (src/README "WAL"; doc/design.md hazards 9 and 11).
#
# After each step on the primary -- build, inserts into the pending list,
# flush, inserts that flush by themselves, DELETE + VACUUM, compaction,
# documents larger than a page, a VACUUM that shrinks the index -- the
# standby, caught up, must give the same answers (index scans forced, the
# standard queries with and without LIMIT), its index scans must equal its
# own sequential scans, and sparse_maxscore_info, _segments and _verify
# must agree on both.  On the standby the maintenance functions that write
# refuse to run (recovery is in progress).  Finally a standby scan round
# that overlaps the replay of a flush (hot_standby_feedback on) gives the
# right rows.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use SpmwTest;

my $primary = spmw_node('spmw_primary', allows_streaming => 1);
$primary->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('spmw_standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;

my $dims = 200;
my $rows = sub {
	my ($from, $to, $neg) = @_;
	$neg //= 0.1;
	return "SELECT i, CASE WHEN i % 31 = 0 THEN NULL WHEN i % 37 = 0 THEN spmw_vec(i, 0, $dims) "
	  . "ELSE spmw_vec(i, 1 + i % 40, $dims, $neg) END FROM generate_series($from, $to) i";
};

# compare the two nodes; returns the primary's verify summary
sub compare
{
	my ($label, %opts) = @_;
	$primary->wait_for_catchup($standby);
	spmw_same_answers_ok($primary, $standby, 'docs', $dims, $label);
	spmw_exact_ok($standby, 'docs', $dims, "$label, standby");
	my $info = 'SELECT * FROM sparse_maxscore_info(\'docs_idx\')';
	is($standby->safe_psql('postgres', $info), $primary->safe_psql('postgres', $info),
		"$label: sparse_maxscore_info is the same");
	my $segs = 'SELECT * FROM sparse_maxscore_segments(\'docs_idx\') ORDER BY segment';
	is($standby->safe_psql('postgres', $segs), $primary->safe_psql('postgres', $segs),
		"$label: sparse_maxscore_segments is the same");
	my $v1 = spmw_verify_ok($primary, 'docs_idx', "$label, primary", %opts);
	my $v2 = spmw_verify_ok($standby, 'docs_idx', "$label, standby", %opts);
	is(join(' ', map { "$_=" . ($v2->{$_} // '?') } sort keys %$v1),
		join(' ', map { "$_=$v1->{$_}" } sort keys %$v1),
		"$label: verify reports the same on both");
	return $v1;
}

# build
$primary->safe_psql('postgres', qq{
CREATE TABLE docs (id int, v sparsevec);
INSERT INTO docs @{[ $rows->(1, 2000) ]};
CREATE INDEX docs_idx ON docs USING sparse_maxscore (v) WITH (ranges = on);
});
compare('build');

# inserts into the pending list (several pages)
$primary->safe_psql('postgres', "INSERT INTO docs @{[ $rows->(2001, 3000) ]}");
my $v = compare('pending inserts');
is($v->{pending}, 1000, 'the inserts are pending');

# flush
is($primary->safe_psql('postgres', "SELECT sparse_maxscore_flush('docs_idx')"), '1000',
	'flush moves the pending rows');
compare('flush');

# inserts that flush by themselves (64kB limit), and fastupdate = off
$primary->safe_psql('postgres', qq{
ALTER INDEX docs_idx SET (pending_list_limit = 64);
INSERT INTO docs @{[ $rows->(3001, 4500, 0.3) ]};
});
$v = compare('inserts over the pending list limit');
cmp_ok($v->{segments}, '>', 2, 'the inserts flushed');
$primary->safe_psql('postgres', qq{
ALTER INDEX docs_idx SET (fastupdate = off);
INSERT INTO docs @{[ $rows->(4501, 4520) ]};
ALTER INDEX docs_idx SET (fastupdate = on);
});
$v = compare('inserts with fastupdate off');

# DELETE + VACUUM: alive bits, pending flags, compaction, reclaim
$primary->safe_psql('postgres', qq{
INSERT INTO docs @{[ $rows->(4521, 4700) ]};
DELETE FROM docs WHERE id % 3 = 0;
});
compare('delete');
$primary->safe_psql('postgres', 'VACUUM docs');
compare('delete + VACUUM', unreachable => 0);

# updates, then compaction
$primary->safe_psql('postgres', qq{
UPDATE docs SET v = spmw_vec(id + 100000, 12, $dims, 0.5) WHERE id % 5 = 1;
DELETE FROM docs WHERE id % 7 = 0;
VACUUM docs;
INSERT INTO docs @{[ $rows->(5001, 5100) ]};
});
is($primary->safe_psql('postgres', "SELECT sparse_maxscore_compact('docs_idx') > 0"), 't',
	'compaction');
$v = compare('compaction');
is("$v->{segments} $v->{pending}", '1 0', 'one segment after the compaction');

# documents larger than a page, while pending, flushed, deleted
$primary->safe_psql('postgres', qq{
INSERT INTO docs SELECT 9000 + k, to_sparsevec(array_agg(j ORDER BY j), array_agg(((1 + (j * k) % 7) / 4.0)::real ORDER BY j), $dims)
FROM generate_series(1, 3) k, generate_series(1, $dims, k) j GROUP BY k;
});
$primary->safe_psql('postgres', qq{
CREATE TABLE big (id int, v sparsevec) WITH (autovacuum_enabled = off);
INSERT INTO big SELECT i, spmw_vec(i, 20, 300000) FROM generate_series(1, 200) i;
CREATE INDEX big_idx ON big USING sparse_maxscore (v) WITH (ranges = on);
INSERT INTO big SELECT 1000 + k, to_sparsevec(array_agg(j ORDER BY j), array_agg((((j % 9) + 1) / 4.0)::real ORDER BY j), 300000)
FROM (VALUES (1, 5000), (2, 100000), (3, 1015)) s(k, n), generate_series(k, n * 3, 3) j GROUP BY k;
});
$primary->wait_for_catchup($standby);
for my $step ('pending', 'flushed', 'deleted and vacuumed')
{
	if ($step eq 'flushed')
	{
		$primary->safe_psql('postgres', "SELECT sparse_maxscore_flush('big_idx')");
	}
	elsif ($step eq 'deleted and vacuumed')
	{
		$primary->safe_psql('postgres', 'DELETE FROM big WHERE id IN (1002, 7); VACUUM big;');
	}
	$primary->wait_for_catchup($standby);
	spmw_same_answers_ok($primary, $standby, 'big', 300000, "big documents $step");
	spmw_exact_ok($standby, 'big', 300000, "big documents $step, standby");
	my $q = "SET enable_seqscan = off;\n"
	  . "SELECT b.id, (SELECT x.id FROM big x ORDER BY x.v <#> b.v LIMIT 1) FROM big b WHERE b.id IN (1001, 1003) ORDER BY 1";
	is($standby->safe_psql('postgres', $q), $primary->safe_psql('postgres', $q),
		"big documents $step: the big documents as queries");
	spmw_verify_ok($standby, 'big_idx', "big documents $step, standby");
}
compare('after the big documents');

# most rows deleted: VACUUM shrinks the index (truncation is replayed)
my $size = $primary->safe_psql('postgres', "SELECT pg_relation_size('docs_idx')");
$primary->safe_psql('postgres', 'DELETE FROM docs WHERE id % 10 <> 0; VACUUM docs;');
$v = compare('shrink', unreachable => 0);
cmp_ok($primary->safe_psql('postgres', "SELECT pg_relation_size('docs_idx')"), '<', $size / 2,
	'the index shrank');
is($standby->safe_psql('postgres', "SELECT pg_relation_size('docs_idx')"),
	$primary->safe_psql('postgres', "SELECT pg_relation_size('docs_idx')"),
	'on the standby too');
$primary->safe_psql('postgres', "INSERT INTO docs @{[ $rows->(6001, 6500) ]}");
compare('inserts after the shrink');

# on the standby: the functions that write refuse, the others work
for my $f ('sparse_maxscore_flush', 'sparse_maxscore_compact')
{
	my ($ret, $out, $err) = $standby->psql('postgres', "SELECT $f('docs_idx')",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($err, qr/ERROR:  55000: recovery is in progress/, "standby: $f refuses (55000)");
	like($err, qr/cannot be (flushed|compacted) during recovery/, "standby: $f hint");
}
like($standby->safe_psql('postgres', "SELECT segments FROM sparse_maxscore_info('docs_idx')"),
	qr/^\d+$/, 'standby: sparse_maxscore_info works');

# A standby round that overlaps the replay of a flush: the round copies
# the metapage, then (debug_round_delay) sleeps 3 s before it reads the
# pending list; meanwhile the primary flushes it, freeing its pages, and
# the standby replays that.  With hot_standby_feedback on, the primary
# cannot reuse those pages while the standby's query runs (xid stamps,
# src/README "Page recycling"), so the round must still find them intact
# and return the right rows.  (Fails at index f44a1ba: freeing rewrites
# the page type at once, so the round met a conflict with recovery despite
# the feedback.)
# Wrong rows would be worse than the retryable error, so both are told
# apart.
$standby->append_conf('postgresql.conf', "hot_standby_feedback = on\n");
$standby->reload;
$primary->safe_psql('postgres', "INSERT INTO docs @{[ $rows->(7001, 7400) ]}");
$primary->wait_for_catchup($standby);
my $q = "SELECT id, v <#> (spmw_queries($dims))[2] FROM docs ORDER BY v <#> (spmw_queries($dims))[2] LIMIT 20";
my $expect = $primary->safe_psql('postgres', "SET enable_seqscan = off; $q");
my $bg = $standby->background_psql('postgres', on_error_stop => 0);
$bg->query_safe("SET enable_seqscan = off; SET sparse_maxscore.debug_round_delay = 3000;");
$bg->query_until(qr/started/, "\\echo started\n$q;\n");
usleep(300_000);
$primary->safe_psql('postgres', "SELECT sparse_maxscore_flush('docs_idx')");
$primary->wait_for_catchup($standby);
my ($out, $failed) = $bg->query('SELECT 1 AS done');
my $err = $bg->{stderr};
$out =~ s/\n?1$//;
unlike($err, qr/ERROR/, 'standby round overlapping a flush (hot_standby_feedback on): no error')
  or diag($err);
is($out, $failed ? '' : $expect, 'standby round overlapping a flush: no wrong rows');
$bg->quit;
compare('after the overlapping flush');

$standby->stop;
$primary->stop;
done_testing();
