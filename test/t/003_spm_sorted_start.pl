# sparse_maxscore scans whose rounds do not fit in work_mem.
#
# A round of k rows needs about 2 * 24 * k bytes; when k would exceed
# work_mem the scan switches to one sorted pass over all remaining
# positive rows (a tuplesort that may spill).  With initial_k above that
# limit the scan starts with the sorted pass.  Every query -- including an
# empty and a NULL one -- with every LIMIT and a selective filter must
# still equal a seq scan.
#
# The NULL query is checked last and on its own, in eval: it once crashed
# the backend (a segfault) when the scan started with the sorted pass.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use SpmTest;

my $node = PostgreSQL::Test::Cluster->new('spm_sorted');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION sparsevec');

# 4000 rows: weights from a small alphabet (ties), some negative, NULL and
# empty vectors
$node->safe_psql('postgres', q{
CREATE TABLE docs AS
SELECT i AS id, CASE WHEN i % 29 = 0 THEN NULL WHEN i % 41 = 0 THEN '{}/300'::sparsevec
	ELSE to_sparsevec(ARRAY(SELECT DISTINCT 1 + (i * j * 7907 + j * j * 31) % 290 AS t FROM generate_series(1, 1 + i % 23) j ORDER BY 1),
		ARRAY(SELECT (CASE WHEN (i + t) % 7 = 0 THEN -1 ELSE 1 END * (1 + (i * t) % 4) / 2.0)::real
			FROM (SELECT DISTINCT 1 + (i * j * 7907 + j * j * 31) % 290 AS t FROM generate_series(1, 1 + i % 23) j ORDER BY 1) s),
		300) END AS v
FROM generate_series(1, 4000) i;
CREATE INDEX docs_idx ON docs USING sparse_maxscore (v) WITH (ranges = on);
});
is($node->safe_psql('postgres',
		'SELECT count(*) FILTER (WHERE v IS NULL) > 0 AND count(*) FILTER (WHERE nnz(v) = 0) > 0 FROM docs'),
	't', 'the data has NULL and empty vectors');

my @queries = ("'{1:1}/300'", "'{1:1,2:1,3:1,4:1,5:1}/300'", "'{7:1,8:-1,295:2}/300'",
	"'{}/300'", "'{10:0.5,20:1,30:1.5,40:2,50:-0.5,60:1,70:1,80:1,90:1,100:1}/300'");
my @modes = (
	[ 'initial_k 1000000, default work_mem', "SET sparse_maxscore.initial_k = 1000000;\n" ],
	[ 'initial_k 5000, work_mem 64kB',
		"SET work_mem = '64kB';\nSET sparse_maxscore.initial_k = 5000;\n" ],
	[ 'initial_k 100, work_mem 64kB (rounds, then the sorted pass)',
		"SET work_mem = '64kB';\nSET sparse_maxscore.initial_k = 100;\n" ],
	[ 'initial_k 5000, work_mem 64kB, exhaustive',
		"SET work_mem = '64kB';\nSET sparse_maxscore.initial_k = 5000;\n"
		  . "SET sparse_maxscore.algorithm = exhaustive;\n" ]);

for my $mode (@modes)
{
	check_scans($node, 'docs', $mode->[0],
		queries => \@queries,
		filters => [ 'true', 'id % 53 = 0' ],
		limits => [ 1, 10, 1000, undef ],
		settings => $mode->[1]);
}

# the NULL query: every row, in any order
for my $mode (@modes)
{
	my $n = eval {
		check_scans($node, 'docs', "$mode->[0], NULL query",
			queries => ['(SELECT NULL::sparsevec)'],
			filters => [ 'true', 'id % 53 = 0' ],
			limits => [ 1, 10, 1000, undef ],
			settings => $mode->[1]);
	};
	if (!defined $n)
	{
		fail("$mode->[0], NULL query: the scan failed");
		diag($@);
		# after a backend crash the server shuts down (the TAP clusters run
		# with restart_after_crash = off): start it again for what follows
		my $pidfile = $node->data_dir . '/postmaster.pid';
		for (1 .. 100)
		{
			last unless -e $pidfile;
			select(undef, undef, undef, 0.1);
		}
		if (!-e $pidfile)
		{
			$node->_update_pid(0);
			$node->start;
		}
	}
}

$node->stop;
done_testing();
