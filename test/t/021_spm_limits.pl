# sparse_maxscore at its limits: huge queries, cancellation, small memory.
#
#  * A query with 100,000 terms (and one with every one of 200,000
#    dimensions) answers exactly, with LIMIT and without, also under
#    work_mem = 64kB (the sorted pass instead of growing rounds).
#  * Statements cancelled mid-way -- by statement_timeout at a spread of
#    delays, so that each phase of a scan (rounds, sorted pass, zero and
#    negative rows, NULL rows, a NULL query), CREATE INDEX (load, sort,
#    write), the pending-list flush, the merge of every segment and VACUUM
#    get interrupted somewhere, and by pg_cancel_backend during a round --
#    end with "canceling statement" and nothing else: afterwards, in the
#    same session, the backend holds no lock on the index and no pin on any
#    of its buffers (pg_buffercache), the index verifies, and the next
#    query is exact.  Every kind of statement must actually be cancelled at
#    least once (else the delays are wrong, and the test says so).
#  * The server log shows no leaked pin or lock warning, crash or failed
#    assertion.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

use SpmwTest;

my $DIMS = 200000;
my $node = spmw_node('spm_limits', conf => "log_min_messages = warning\n");
$node->safe_psql('postgres', 'CREATE EXTENSION pg_buffercache');

# 8000 documents of 1..40 terms over 200000 dimensions (a third of them
# negative), NULL rows, empty vectors; then 1000 more in the pending list
$node->safe_psql('postgres', qq{
CREATE TABLE big (id int, v sparsevec($DIMS));
INSERT INTO big SELECT i, CASE WHEN i % 101 = 0 THEN NULL WHEN i % 103 = 0 THEN '{}/$DIMS'
	ELSE spmw_vec(i, 1 + i % 40, $DIMS, 0.3) END FROM generate_series(1, 8000) i;
CREATE INDEX big_idx ON big USING sparse_maxscore (v) WITH (ranges = on, pending_list_limit = 65536);
INSERT INTO big SELECT i, spmw_vec(i, 1 + i % 40, $DIMS, 0.3) FROM generate_series(8001, 9000) i;
});

my $q100k = "to_sparsevec(ARRAY(SELECT generate_series(1, $DIMS, 2)),
	ARRAY(SELECT ((k % 7) - 2.5)::real FROM generate_series(1, $DIMS, 2) k), $DIMS)";
my $qall = "to_sparsevec(ARRAY(SELECT generate_series(1, $DIMS)),
	ARRAY(SELECT (1 + k % 5)::real FROM generate_series(1, $DIMS) k), $DIMS)";

# ---- huge queries ----

is($node->safe_psql('postgres', "SELECT nnz($q100k)"), '100000', 'the query has 100000 terms');
for my $wm ('4MB', '64kB')
{
	for my $lim (10, 'NULL')
	{
		is($node->safe_psql('postgres', "SET work_mem = '$wm'; SELECT coalesce(spmw_diff('big', $q100k, $lim), 'same')"),
			'same', "100000 terms, LIMIT $lim, work_mem $wm: exact");
	}
	is($node->safe_psql('postgres', "SET work_mem = '$wm'; SELECT coalesce(spmw_diff('big', $qall, 100), 'same')"),
		'same', "all $DIMS terms, LIMIT 100, work_mem $wm: exact");
}

# ---- cancellation ----

# what a session must look like right after a cancelled statement.  The
# statements that lift the timeout run under it too, and on a loaded
# machine even a SET can outlast 1 ms: lift it several times, so that the
# checks never run under it (they did once, cancelled, under load)
my $after = qq{
SET statement_timeout = 0;
SET statement_timeout = 0;
SET statement_timeout = 0;
SET statement_timeout = 0;
RESET ALL;
SELECT 'locks=' || count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'relation'
	AND relation IN (SELECT oid FROM pg_class WHERE relname IN ('big', 'big_idx'));
SELECT 'pins=' || count(*) FROM pg_buffercache WHERE pinning_backends > 0
	AND relfilenode IN (SELECT pg_relation_filenode(oid) FROM pg_class WHERE relname IN ('big', 'big_idx'));
SELECT 'verify=' || CASE WHEN sparse_maxscore_verify('big_idx') LIKE 'segments=%' THEN 'ok' ELSE 'bad' END;
SELECT 'exact=' || coalesce(spmw_diff('big', spmw_vec(7, 30, $DIMS, 0.3), 50), 'same');
};

# run $sql in one session with statement_timeout = $ms, then the checks;
# returns 1 if the statement was cancelled, 0 if it completed
sub cancel_run
{
	my ($label, $setup, $sql, $ms) = @_;
	my ($out, $err) = ('', '');
	$node->psql('postgres', "$setup;\nSET statement_timeout = '${ms}ms';\n$sql;\n$after",
		stdout => \$out, stderr => \$err, on_error_stop => 0);
	my @errors = grep { /ERROR/ } split /\n/, $err;
	my $cancelled = grep { /canceling statement due to statement timeout/ } @errors;
	my @other = grep { !/canceling statement due to statement timeout/ } @errors;
	is("@other", '', "$label, timeout ${ms}ms: no error but the cancel");
	like($out, qr/locks=0\npins=0\nverify=ok\nexact=same/, "$label, timeout ${ms}ms: no lock, no pin, verified, exact")
	  or diag("out: $out\nerr: $err");
	return $cancelled ? 1 : 0;
}

my @delays = (1, 10, 50, 200, 1000);

my %scans = (
	'rounds (delayed)' => [ "SET sparse_maxscore.debug_round_delay = 50", "SELECT count(*) FROM (SELECT id FROM big ORDER BY v <#> spmw_vec(3, 40, $DIMS) LIMIT 20000) s" ],
	'sorted pass' => [ "SET work_mem = '64kB'", "SELECT count(*) FROM (SELECT id FROM big ORDER BY v <#> $q100k) s" ],
	'zero rows' => [ "SET work_mem = '64kB'", "SELECT count(*) FROM (SELECT id FROM big ORDER BY v <#> '{1:1}/$DIMS') s" ],
	'negative rows' => [ "SET work_mem = '64kB'", "SELECT count(*) FROM (SELECT id FROM big ORDER BY v <#> spmw_vec(5, 200, $DIMS, 0.5)) s" ],
	'NULL query' => [ "SET work_mem = '64kB'", "SELECT count(*) FROM (SELECT id FROM big ORDER BY v <#> (SELECT NULL::sparsevec)) s" ],
);
for my $name (sort keys %scans)
{
	my ($setup, $sql) = @{ $scans{$name} };
	$setup .= "; SET enable_seqscan = off";
	my $n = 0;
	$n += cancel_run("scan: $name", $setup, $sql, $_) for @delays;
	cmp_ok($n, '>', 0, "scan: $name: cancelled at least once");
}

# CREATE INDEX: cancelled builds leave no index behind
my $n = 0;
for my $ms (@delays)
{
	$n += cancel_run('CREATE INDEX', "SET maintenance_work_mem = '1MB'",
		"CREATE INDEX big_idx2 ON big USING sparse_maxscore (v) WITH (ranges = on)", $ms);
	$node->safe_psql('postgres', 'DROP INDEX IF EXISTS big_idx2');
}
cmp_ok($n, '>', 0, 'CREATE INDEX: cancelled at least once');

# flush of the pending list, and merging: several segments first
$n = 0;
for my $ms (@delays)
{
	$node->safe_psql('postgres', qq{
INSERT INTO big SELECT i, spmw_vec(i, 1 + i % 40, $DIMS, 0.3) FROM generate_series(100000 + $ms * 1000, 100999 + $ms * 1000) i;
});
	$n += cancel_run('flush', '', "SELECT sparse_maxscore_flush('big_idx')", $ms);
}
cmp_ok($n, '>', 0, 'flush: cancelled at least once');

$n = 0;
for my $ms (@delays)
{
	$node->safe_psql('postgres', qq{
INSERT INTO big SELECT i, spmw_vec(i, 1 + i % 40, $DIMS, 0.3) FROM generate_series(2000000 + $ms * 1000, 2000499 + $ms * 1000) i;
SELECT sparse_maxscore_flush('big_idx');
});
	$n += cancel_run('merge', '', "SELECT sparse_maxscore_compact('big_idx')", $ms);
}
cmp_ok($n, '>', 0, 'merge: cancelled at least once');

$n = 0;
for my $ms (@delays)
{
	$node->safe_psql('postgres', "DELETE FROM big WHERE id % 53 = $ms % 53");
	$n += cancel_run('VACUUM', '', "VACUUM (INDEX_CLEANUP ON) big", $ms);
}
cmp_ok($n, '>', 0, 'VACUUM: cancelled at least once');

# pg_cancel_backend during a round
{
	my $psql = $node->background_psql('postgres', on_error_stop => 0);
	$psql->query_until(qr/started/, qq{SET sparse_maxscore.debug_round_delay = 60000;
SET enable_seqscan = off;
\\echo started
SELECT id FROM big ORDER BY v <#> spmw_vec(11, 20, $DIMS) LIMIT 5;
});
	my $waited = 0;
	until ($node->safe_psql('postgres',
			"SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT id FROM big ORDER BY%' AND state = 'active'") eq '1')
	{
		usleep(100_000);
		die 'the delayed scan did not start' if ++$waited > 600;
	}
	sleep(1);
	is($node->safe_psql('postgres',
			"SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'SELECT id FROM big ORDER BY%' AND state = 'active'"),
		't', 'pg_cancel_backend during a round');
	my $out = $psql->query($after);
	like($psql->{stderr}, qr/canceling statement due to user request/, 'pg_cancel_backend: the scan was cancelled');
	like($out, qr/locks=0\npins=0\nverify=ok\nexact=same/, 'pg_cancel_backend: no lock, no pin, verified, exact');
	$psql->quit;
}

# ---- the log ----
my $log = slurp_file($node->logfile);
unlike($log, qr/(buffer refcount leak|resource was not closed|lock .* leaked|TRAP:|terminated by signal|PANIC)/,
	'no leaked pin or lock, no crash in the log');

$node->stop;
done_testing();
