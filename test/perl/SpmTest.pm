# SpmTest: helpers shared by the sparse_maxscore TAP tests (test/t).
#
# The contract (doc/design.md, "The contract"): an index scan for
# ORDER BY v <#> q returns the rows a seq scan followed by a sort returns, in
# non-decreasing distance with NULL distances last; rows with equal
# distances may come in any order.  compare() checks exactly that: the
# seq scan's distance at every position (float8 equality), only rows the
# seq scan has at that distance, none twice, and as many as the seq scan
# has up to the LIMIT.
#
# Distances are the strings psql prints (shortest exact float8), NULL as
# the empty string.

package SpmTest;

use strict;
use warnings;

use Exporter 'import';
use Test::More;

our @EXPORT = qw(dist_cmp dist_eq make_ref compare index_scan seq_scan_ref check_scans
  random_vector);

# order of distances: ascending, NULL last
sub dist_cmp
{
	my ($x, $y) = @_;
	return ($x eq '') <=> ($y eq '') || ($x eq '' ? 0 : $x <=> $y);
}

# equal distances (numerically: -0 = 0)
sub dist_eq
{
	my ($x, $y) = @_;
	return ($x eq '' && $y eq '') || ($x ne '' && $y ne '' && $x == $y);
}

# a reference from id => distance: the map and the distances sorted
sub make_ref
{
	my (%d) = @_;
	return { dist => \%d, sorted => [ sort { dist_cmp($a, $b) } values %d ] };
}

# $got: [[id, distance], ...] in the order returned; $lim: LIMIT or undef.
# Returns undef or the first difference.
sub compare
{
	my ($got, $ref, $lim) = @_;
	my $n = scalar @{ $ref->{sorted} };
	my $want = defined $lim && $lim < $n ? $lim : $n;
	return sprintf('%d rows, expected %d', scalar @$got, $want)
	  if @$got != $want;
	my %seen;
	for my $k (0 .. $#$got)
	{
		my ($id, $d) = @{ $got->[$k] };
		return "row $k: id $id twice" if $seen{$id}++;
		return "row $k: id $id at distance '$d', expected '$ref->{sorted}[$k]'"
		  unless dist_eq($d, $ref->{sorted}[$k]);
		return "row $k: id $id at distance '$d' is not in the reference at that distance"
		  unless exists $ref->{dist}{$id} && dist_eq($ref->{dist}{$id}, $d);
	}
	return undef;
}

# Run "SELECT id, v <#> $qexpr FROM $table WHERE $filter ORDER BY ...
# [LIMIT $lim]" with seq scans off and the given settings (SET lines).
# Returns (rows, problem): problem if the plan does not scan index
# "${table}_idx" or sorts.
sub index_scan
{
	my ($node, $table, $qexpr, $filter, $lim, $settings) = @_;
	my $sql = "SELECT id, v <#> $qexpr FROM $table WHERE $filter ORDER BY v <#> $qexpr"
	  . (defined $lim ? " LIMIT $lim" : '');
	my $out = $node->safe_psql('postgres',
		"SET enable_seqscan = off;\n" . ($settings // '')
		  . "EXPLAIN (COSTS OFF) $sql;\n\\echo @@\n$sql;");
	my ($plan, $rows) = split /^@@\n?/m, $out, 2;
	my @got = map { my ($id, $d) = split /\|/, $_, 2; [ $id, $d // '' ] }
	  grep { $_ ne '' } split /\n/, $rows // '';
	return (\@got, "no index scan:\n$plan") unless $plan =~ /Index Scan using ${table}_idx /;
	return (\@got, "the plan sorts:\n$plan") if $plan =~ /^\s*(->\s+)?Sort\s*$/m;
	return (\@got, undef);
}

# the seq scan's rows of a query, as a reference
sub seq_scan_ref
{
	my ($node, $table, $qexpr, $filter) = @_;
	my %d = map { my ($id, $d) = split /\|/, $_, 2; ($id, $d // '') }
	  grep { $_ ne '' } split /\n/,
	  $node->safe_psql('postgres',
		"SET enable_indexscan = off;\nSELECT id, v <#> $qexpr FROM $table WHERE $filter;");
	return make_ref(%d);
}

# Compare the index scan with the seq scan for every query expression,
# filter and limit; one assertion.  Returns the number of comparisons.
sub check_scans
{
	my ($node, $table, $label, %o) = @_;
	my $queries = $o{queries};
	my $limits = $o{limits} // [ 10, 500, undef ];
	my $filters = $o{filters} // ['true'];
	my (@problems, $n);
	for my $q (@$queries)
	{
		for my $f (@$filters)
		{
			my $ref = seq_scan_ref($node, $table, $q, $f);
			for my $lim (@$limits)
			{
				$n++;
				my ($got, $problem) = index_scan($node, $table, $q, $f, $lim, $o{settings});
				$problem //= compare($got, $ref, $lim);
				push @problems, "$q, WHERE $f, LIMIT " . ($lim // 'none') . ": $problem"
				  if $problem;
			}
		}
	}
	is(scalar @problems, 0, "$label: $n scans equal a seq scan")
	  or diag(join("\n", @problems[ 0 .. ($#problems < 4 ? $#problems : 4) ]));
	return $n;
}

# a random weight: from {0.5, 1, 1.5, 2} if $tied, else uniform in
# [0.01, 2.01) with 6 digits; negative with probability $negfrac
sub random_weight
{
	my ($tied, $negfrac) = @_;
	my $w = $tied ? (1 + int(rand(4))) / 2 : sprintf('%.6g', 0.01 + 2 * rand());
	return rand() < $negfrac ? -$w : $w;
}

# a random vector as text (Perl's rand, so srand repeats it): up to $nnz
# indices 1 .. $maxterm skewed towards small ones (long posting lists for
# those), repeated draws collapse; all weights tied with probability
# $tiedfrac, each negative with probability $negfrac
sub random_vector
{
	my ($dims, $nnz, $maxterm, $tiedfrac, $negfrac) = @_;
	my $tied = rand() < $tiedfrac;
	my %e;
	for (1 .. $nnz)
	{
		$e{ 1 + int($maxterm * rand()**2) } = random_weight($tied, $negfrac);
	}
	return '{' . join(',', map { "$_:$e{$_}" } sort { $a <=> $b } keys %e) . "}/$dims";
}

1;
