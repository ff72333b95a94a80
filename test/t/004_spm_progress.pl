# CREATE INDEX progress of sparse_maxscore (pg_stat_progress_create_index).
#
# The build is paused while it loads rows: the index is on an expression
# whose function waits for an advisory lock this test holds.  Meanwhile
# pg_stat_progress_create_index must show the access method's phase
# ("building index: loading tuples", from ambuildphasename) and the heap
# blocks; after the lock is released the build finishes and the index
# answers like a seq scan.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use SpmTest;

my $node = PostgreSQL::Test::Cluster->new('spm_progress');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION sparsevec;
CREATE TABLE docs AS
SELECT i AS id, ('{' || (1 + i % 50) || ':1,' || (51 + i % 7) || ':' || (i % 3 + 1) || '}/100')::sparsevec AS v
FROM generate_series(1, 2000) i;
-- the identity, after waiting for advisory lock 4242 (IMMUTABLE only so
-- that it can be indexed)
CREATE FUNCTION waiting(v sparsevec) RETURNS sparsevec LANGUAGE sql IMMUTABLE AS $$
	SELECT pg_advisory_lock_shared(4242);
	SELECT pg_advisory_unlock_shared(4242);
	SELECT v;
$$;
});

my $holder = $node->background_psql('postgres');
$holder->query_safe('SELECT pg_advisory_lock(4242)');

my $builder = $node->background_psql('postgres');
$builder->query_until(qr/started/, qq{
\\echo started
CREATE INDEX docs_idx ON docs USING sparse_maxscore (waiting(v));
\\echo built
});

ok( $node->poll_query_until('postgres', q{
SELECT phase = 'building index: loading tuples' AND blocks_total > 0
FROM pg_stat_progress_create_index WHERE relid = 'docs'::regclass}),
	'pg_stat_progress_create_index shows the loading phase');
is($node->safe_psql('postgres', q{
SELECT command FROM pg_stat_progress_create_index WHERE relid = 'docs'::regclass}),
	'CREATE INDEX', 'for a CREATE INDEX');

$holder->query_safe('SELECT pg_advisory_unlock(4242)');
$builder->query_until(qr/built/, '');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_progress_create_index}), '0', 'the build finished');

# the index works (on waiting(v), which equals v)
my $n = 0;
my @problems;
for my $q ("'{1:1,51:1}/100'", "'{2:-1,52:2}/100'", '(SELECT NULL::sparsevec)')
{
	my $ref = seq_scan_ref($node, 'docs', $q, 'true');
	for my $lim (10, undef)
	{
		$n++;
		my $sql = "SELECT id, waiting(v) <#> $q FROM docs ORDER BY waiting(v) <#> $q"
		  . (defined $lim ? " LIMIT $lim" : '');
		my $out = $node->safe_psql('postgres',
			"SET enable_seqscan = off;\nEXPLAIN (COSTS OFF) $sql;\n\\echo @@\n$sql;");
		my ($plan, $rows) = split /^@@\n?/m, $out, 2;
		push @problems, "$q: no index scan:\n$plan" unless $plan =~ /Index Scan using docs_idx/;
		my @got = map { my ($id, $d) = split /\|/, $_, 2; [ $id, $d // '' ] }
		  grep { $_ ne '' } split /\n/, $rows // '';
		my $problem = compare(\@got, $ref, $lim);
		push @problems, "$q LIMIT " . ($lim // 'none') . ": $problem" if $problem;
	}
}
is(scalar @problems, 0, "$n scans of the index built meanwhile equal a seq scan")
  or diag(join("\n", @problems));

$holder->quit;
$builder->quit;
$node->stop;
done_testing();
