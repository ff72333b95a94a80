# SpmDistanceTest: the randomized exactness test of sparse_maxscore index
# scans for a distance whose index rechecks (ORDER BY v <=> q through
# sparsevec_cosine_ops, v <-> q through sparsevec_l2_ops: src/README
# "Cosine and L2"), shared by test/t/023_spm_cosine.pl and
# test/t/024_spm_l2.pl, which say what it checks.
#
# run_distance_test(name => node name, opclass => operator class, op =>
# operator, copy => a vector (without "/dims") that 2% of the rows are
# copies of (optional), extra_queries => vectors (without "/dims") added to
# the random queries (optional)).  Runs every test and done_testing.

package SpmDistanceTest;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use SpmTest;

our @EXPORT = qw(run_distance_test);

my $dims = 400;
my (%o, $op, $node, @queries, @filters, @modes);

sub random_row
{
	my $r = rand();
	return '\N' if $r < 0.02;
	return "{}/$dims" if $r < 0.04;
	return "$o{copy}/$dims" if defined $o{copy} && $r < 0.06;
	if ($r < 0.1)
	{
		my $m = 1 + int(rand(5));
		return '{' . join(',', map { "$_:" . ($_ * $m) } 1 .. 3) . "}/$dims";
	}
	return random_vector($dims, 1 + int(rand(40)), 360, 0.3, 0.15);
}

sub insert_rows
{
	my ($from, $to) = @_;
	$node->safe_psql('postgres',
		"COPY docs FROM STDIN;\n"
		  . join("\n", map { "$_\t" . random_row() } $from .. $to)
		  . "\n\\.\n");
}

# distances as psql prints them: '' for NULL, 'NaN' (<=> only), or a number
sub key_of
{
	my ($d) = @_;
	return $d eq '' ? 2 : $d eq 'NaN' ? 1 : 0;
}

sub cmp_dist
{
	my ($x, $y) = @_;
	return key_of($x) <=> key_of($y) || (key_of($x) == 0 ? $x <=> $y : 0);
}

sub eq_dist
{
	my ($x, $y) = @_;
	return key_of($x) == key_of($y) && (key_of($x) != 0 || $x == $y);
}

# a psql script's output cut into pieces by lines "@@ key"
sub run_pieces
{
	my ($script) = @_;
	my $out = $node->safe_psql('postgres', $script);
	my (%pieces, $key);
	for my $line (split /\n/, $out)
	{
		if ($line =~ /^@@ (.*)$/) { $key = $1; $pieces{$key} = []; }
		elsif (defined $key) { push @{ $pieces{$key} }, $line; }
	}
	return \%pieces;
}

sub check_rows
{
	my ($got, $ref, $lim) = @_;
	my @sorted = sort { cmp_dist($a, $b) } values %$ref;
	my $want = defined $lim && $lim < @sorted ? $lim : scalar @sorted;
	return sprintf('%d rows, expected %d', scalar @$got, $want) if @$got != $want;
	my %seen;
	for my $k (0 .. $#$got)
	{
		my ($id, $d) = @{ $got->[$k] };
		return "row $k: id $id twice" if $seen{$id}++;
		return "row $k: id $id at distance '$d', expected '$sorted[$k]'"
		  unless eq_dist($d, $sorted[$k]);
		return "row $k: id $id at '$d', the seq scan has it at '" . ($ref->{$id} // 'none') . "'"
		  unless exists $ref->{$id} && eq_dist($ref->{$id}, $d);
	}
	return undef;
}

sub check_matrix
{
	my ($label) = @_;
	# the seq scan's distances of every (query, filter)
	my $script = "SET enable_indexscan = off;\n";
	for my $qi (0 .. $#queries)
	{
		for my $fi (0 .. $#filters)
		{
			$script .= "\\echo @@ $qi $fi\n"
			  . "SELECT id, v $op '$queries[$qi]' FROM docs WHERE $filters[$fi];\n";
		}
	}
	my $refp = run_pieces($script);
	my %refs;
	for my $key (keys %$refp)
	{
		$refs{$key} = { map { my ($id, $d) = split /\|/, $_, 2; ($id, $d // '') } @{ $refp->{$key} } };
	}

	for my $mode (@modes)
	{
		my ($mname, $settings, $limits) = @$mode;
		my $s = "SET enable_seqscan = off;\n$settings";
		for my $qi (0 .. $#queries)
		{
			for my $fi (0 .. $#filters)
			{
				for my $lim (@$limits)
				{
					my $sql = "SELECT 'T', id, v $op '$queries[$qi]' FROM docs WHERE $filters[$fi] "
					  . "ORDER BY v $op '$queries[$qi]'" . (defined $lim ? " LIMIT $lim" : '');
					$s .= "\\echo @@ $qi $fi " . ($lim // 'none') . "\n"
					  . "EXPLAIN (COSTS OFF) $sql;\n$sql;\n";
				}
			}
		}
		my $pieces = run_pieces($s);
		my @problems;
		my $n = 0;
		for my $qi (0 .. $#queries)
		{
			for my $fi (0 .. $#filters)
			{
				for my $lim (@$limits)
				{
					my $key = "$qi $fi " . ($lim // 'none');
					my (@plan, @got);
					for my $l (@{ $pieces->{$key} // [] })
					{
						if ($l =~ /^T\|(\d+)\|(.*)$/) { push @got, [ $1, $2 ]; }
						else { push @plan, $l; }
					}
					$n++;
					my $plan = join("\n", @plan);
					my $problem =
					    $plan !~ /Index Scan using docs_idx on / ? "no index scan:\n$plan"
					  : $plan =~ /^\s*(->\s+)?Sort\s*$/m ? "the plan sorts:\n$plan"
					  : check_rows(\@got, $refs{"$qi $fi"}, $lim);
					push @problems, "query $qi ($queries[$qi]) filter $filters[$fi] limit "
					  . ($lim // 'none') . ": $problem"
					  if $problem;
				}
			}
		}
		is(scalar @problems, 0, "$label, $mname: $n index scans equal the seq scan")
		  or diag(join("\n", @problems[ 0 .. ($#problems < 3 ? $#problems : 3) ]));
	}
}

sub info
{
	return $node->safe_psql('postgres',
		"SELECT segments || ' segments, ' || pending_documents || ' pending' "
		  . "FROM sparse_maxscore_info('docs_idx')");
}

sub run_distance_test
{
	%o = @_;
	$op = $o{op};
	$node = PostgreSQL::Test::Cluster->new($o{name});
	$node->init;
	$node->append_conf('postgresql.conf', qq{
fsync = off
autovacuum = off
});
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION sparsevec');

	$node->safe_psql('postgres', 'CREATE TABLE docs (id int NOT NULL, v sparsevec)');
	insert_rows(1, 4000);
	$node->safe_psql('postgres',
		"CREATE INDEX docs_idx ON docs USING sparse_maxscore (v $o{opclass})\n"
		  . "  WITH (pending_list_limit = 64);\nANALYZE docs;");

	@queries = ();
	for my $i (1 .. 29)
	{
		push @queries,
		  random_vector($dims, 1 + int(rand(30)), $i % 4 == 0 ? $dims : 360,
			$i % 5 == 0 ? 1 : 0, $i % 3 == 1 ? 0.3 : 0);
	}
	push @queries, "{}/$dims";
	push @queries, map { "$_/$dims" } @{ $o{extra_queries} // [] };

	@filters = ('true', 'id % 97 = 0');
	# mode: name, settings, LIMITs
	@modes = (
		[ 'auto', "SET sparse_maxscore.algorithm = auto;\n", [ 1, 10, 100, undef ] ],
		[ 'maxscore', "SET sparse_maxscore.algorithm = maxscore;\n", [ 1, 10, 100 ] ],
		[ 'exhaustive', "SET sparse_maxscore.algorithm = exhaustive;\n", [ 1, 10, 100 ] ],
		[ 'initial_k 1', "SET sparse_maxscore.initial_k = 1;\n", [ 1, 10, 100 ] ]);

	note 'after CREATE INDEX: ' . info();
	check_matrix('after CREATE INDEX');

	# inserts that flush (pending_list_limit 64 kB) and merge, some left pending
	insert_rows($_ * 500 + 1, $_ * 500 + 500) for 8 .. 12;
	like(info(), qr/^\d+ segments, [1-9]\d* pending$/, 'inserts flushed, rows pending: ' . info());
	check_matrix('after inserts');

	$node->safe_psql('postgres', 'DELETE FROM docs WHERE id % 5 = 0; VACUUM docs;');
	check_matrix('after DELETE and VACUUM');

	$node->safe_psql('postgres', "SELECT sparse_maxscore_compact('docs_idx')");
	is(info(), '1 segments, 0 pending', 'compacted');
	is($node->safe_psql('postgres', "SELECT sparse_maxscore_verify('docs_idx') LIKE 'segments=1 %'"),
		't', 'verify after compaction');
	check_matrix('after compaction');

	# a rescan per query: LATERAL over every query, LIMIT 7
	$node->safe_psql('postgres',
		"CREATE TABLE qs (qid int, q sparsevec);\nCOPY qs FROM STDIN;\n"
		  . join("\n", map { "$_\t$queries[$_]" } 0 .. $#queries)
		  . "\n\\.\n");
	my $lateral = "SELECT qs.qid, x.id, x.d FROM qs CROSS JOIN LATERAL "
	  . "(SELECT id, v $op qs.q AS d FROM docs ORDER BY v $op qs.q LIMIT 7) x ORDER BY qs.qid, x.d, x.id";
	my $with_index = $node->safe_psql('postgres', "SET enable_seqscan = off;\n$lateral");
	my $without = $node->safe_psql('postgres', "SET enable_indexscan = off;\n$lateral");
	like($node->safe_psql('postgres', "SET enable_seqscan = off;\nEXPLAIN (COSTS OFF) $lateral"),
		qr/Index Scan using docs_idx/, 'LATERAL: index scans');
	# ties may pick other rows at the LIMIT: compare the distances
	my $dists = sub { join("\n", map { (split /\|/)[0, 2] } split /\n/, shift) };
	is($dists->($with_index), $dists->($without),
		'LATERAL over ' . scalar(@queries) . ' queries: the distances of the seq scan');

	$node->stop;
	done_testing();
}

1;
