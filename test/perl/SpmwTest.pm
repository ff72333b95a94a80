
=pod

=head1 NAME

SpmwTest - helpers for the write-path TAP tests of sparse_maxscore
(test/t/01x_spm_*.pl)

=head1 SYNOPSIS

  use SpmwTest;

  spmw_install($node);                      # helper functions, in database postgres
  spmw_exact_ok($node, 'docs', 200, 'after the flush');
  spmw_verify_ok($node, 'docs_idx', 'after the flush', unreachable => 0);

=head1 DESCRIPTION

spmw_install creates the SQL helpers of test/sql/spmw_helpers.sql (which
sql/spmw_setup.sql includes too): spmw_vec, spmw_queries, spmw_cmp,
spmw_diff, spmw_exact, spmw_verify.  spmw_exact compares, for nine
queries (six ordinary ones, one with negative weights, an empty one, one
on dimensions 1..3, and a NULL query) and LIMITs 1, 10, 100 and none, an
index scan (forced) with a sequential scan, tie-aware: the distances must
be equal position by position, the rows must be rows of the table at
those distances, none twice, and as many as the table has (up to the
LIMIT).

=cut

package SpmwTest;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use Test::More;

our @EXPORT = qw(spmw_node spmw_install spmw_exact_ok spmw_verify_ok spmw_verify
  spmw_same_answers_ok spmw_answers);

# the SQL helpers, shared with sql/spmw_setup.sql
use File::Basename qw(dirname);
my $helpers_file = dirname(__FILE__) . '/../sql/spmw_helpers.sql';
my $helpers = do
{
	open(my $fh, '<', $helpers_file) or die "cannot read $helpers_file: $!";
	local $/;
	<$fh>;
};

=pod

=over

=item spmw_node($name, conf => $lines, allows_streaming => 1, no_data_checksums => 1)

A started node with autovacuum off (plus the postgresql.conf lines
$lines), the extension and the helper functions in database postgres.
no_data_checksums: initdb without data checksums, which 18 turns on by
default (15's Cluster.pm ignores the option: its initdb never does).

=cut

sub spmw_node
{
	my ($name, %opts) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(allows_streaming => $opts{allows_streaming} // 0,
		no_data_checksums => $opts{no_data_checksums} // 0);
	$node->append_conf('postgresql.conf', "autovacuum = off\n" . ($opts{conf} // ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION sparsevec');
	spmw_install($node);
	return $node;
}

=pod

=item spmw_install($node, $db)

Create the helper functions (the extension must exist) in $db
(default postgres).

=cut

sub spmw_install
{
	my ($node, $db) = @_;
	$node->safe_psql($db // 'postgres', $helpers);
	return;
}

=pod

=item spmw_exact_ok($node, $table, $dims, $name, db => $db)

One test: the index on $table.v answers like a sequential scan for the
standard queries (spmw_exact), on $node.

=cut

sub spmw_exact_ok
{
	my ($node, $table, $dims, $name, %opts) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $r = $node->safe_psql($opts{db} // 'postgres',
		"SELECT spmw_exact('$table', $dims)");
	return like($r, qr/^ok: 36 comparisons$/, "$name: index scans equal a seq scan");
}

=pod

=item spmw_verify($node, $index, db => $db)

The summary of sparse_maxscore_verify as a hash (segments, documents,
postings, pending, pages, free, unreachable); dies if it fails.

=cut

sub spmw_verify
{
	my ($node, $index, %opts) = @_;
	my $out = $node->safe_psql($opts{db} // 'postgres',
		"SELECT sparse_maxscore_verify('$index')");
	my %h = $out =~ /(\w+)=(\d+)/g;
	die "unexpected verify output: $out" unless exists $h{unreachable};
	return \%h;
}

=pod

=item spmw_verify_ok($node, $index, $name, unreachable => $n, db => $db)

One test: sparse_maxscore_verify passes (and, if given, reports
$n unreachable pages).  Returns the summary hash.

=cut

sub spmw_verify_ok
{
	my ($node, $index, $name, %opts) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($ret, $out, $err) = $node->psql($opts{db} // 'postgres',
		"SELECT sparse_maxscore_verify('$index')");
	my %h = $out =~ /(\w+)=(\d+)/g;
	my $ok = $ret == 0 && exists $h{unreachable}
	  && (!defined $opts{unreachable} || $h{unreachable} == $opts{unreachable});
	ok($ok, "$name: sparse_maxscore_verify passes"
		  . (defined $opts{unreachable} ? " with $opts{unreachable} unreachable pages" : ''))
	  or diag("verify: $out $err");
	return \%h;
}

=pod

=item spmw_answers($node, $table, $dims, db => $db)

The answers of an index scan (forced) for the standard queries, a NULL
query excepted (its order is arbitrary), with LIMIT 10 and without, as
one string: used to compare two nodes or databases holding the same index.

=cut

sub spmw_answers
{
	my ($node, $table, $dims, %opts) = @_;
	my $sql = "SET enable_seqscan = off;\nSET enable_bitmapscan = off;\n";
	for my $k (1 .. 8)
	{
		for my $lim ('LIMIT 10', '')
		{
			$sql .= "\\echo query $k $lim\n"
			  . "SELECT id, v <#> (spmw_queries($dims))[$k] FROM $table "
			  . "ORDER BY v <#> (spmw_queries($dims))[$k] $lim;\n";
		}
	}
	return $node->safe_psql($opts{db} // 'postgres', $sql);
}

=pod

=item spmw_same_answers_ok($node1, $node2, $table, $dims, $name, db1 => .., db2 => .., ties => 1)

One test: both nodes give the same answers (spmw_answers), and they are
not empty.  Two copies of one index (a standby) must give identical
output; two builds of an index (a restored dump) may order tied rows
differently (ties come in docid order), so with ties => 1 only the
distances of the LIMIT 10 answers, and the sets of rows of the complete
answers, must be equal.

=cut

sub _canonical
{
	my ($answers) = @_;
	my @out;
	for my $part (split /^(?=query \d+)/m, $answers)
	{
		my ($head, @lines) = split /\n/, $part;
		if ($head =~ /LIMIT/)
		{
			push @out, $head, map { (split /\|/, $_, 2)[1] // '' } @lines;
		}
		else
		{
			push @out, $head, sort @lines;
		}
	}
	return join("\n", @out);
}

sub spmw_same_answers_ok
{
	my ($n1, $n2, $table, $dims, $name, %opts) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $a1 = spmw_answers($n1, $table, $dims, db => $opts{db1});
	my $a2 = spmw_answers($n2, $table, $dims, db => $opts{db2});
	my $rows = () = $a1 =~ /\|/g;
	($a1, $a2) = (_canonical($a1), _canonical($a2)) if $opts{ties};
	return ok($a1 eq $a2 && $rows > 0, "$name: the same answers ($rows rows)")
	  || diag("first:\n" . substr($a1, 0, 2000) . "\nsecond:\n" . substr($a2, 0, 2000));
}

=pod

=back

=cut

1;
