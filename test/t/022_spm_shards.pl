# Exact top-k over shards: a coordinator and three shard clusters joined by
# postgres_fdw (README "Sharding").
#
# Each shard has a table docs with a sparse_maxscore index; the coordinator
# has docs_sh, hash-partitioned on id, whose three partitions are foreign
# tables on the shards (servers with extensions 'sparsevec', async_capable,
# fetch_size 50), and docs_local, the same rows in one plain table.  The rows
# (random vectors with ties, negative weights, NULL and empty vectors) are
# loaded through the coordinator: INSERT INTO docs_sh routes each row to its
# shard.  Then, for 40 random queries (and an empty and a NULL one), LIMIT
# 1, 10, 100, 250 (beyond the first round, sparse_maxscore.initial_k = 100
# on the shards; later also 3) and none, without and with filters:
#
#   * ORDER BY v <#> q [LIMIT n] on docs_sh returns what a seq scan of
#     docs_local returns (SpmTest::compare: the distances position by
#     position, ties in any order, NULLs last);
#   * its plan is a Merge Append of foreign scans whose Remote SQL carries
#     the ORDER BY ... <#>, no Sort on the coordinator (with a filter: for
#     LIMITs up to 10, see check_sharded);
#   * the shards answer through their index (idx_scan grows);
#   * the UNION ALL form (one subquery per shard with its own ORDER BY and
#     LIMIT, README) ships the LIMIT too, runs the shards at once (Async
#     Foreign Scan under an Append) and is exact as well.
#
# Then a shard is stopped: a query that needs it fails with "could not
# connect to server", a query whose WHERE prunes it away still answers, and
# after a restart the answers are exact again.
#
# SPM_TAP_SEED=n sets the random seed.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use SpmTest;
use SpmwTest;	# spmw_node: a started node with the extension

my $seed = $ENV{SPM_TAP_SEED} // 20261130;
srand($seed);
note "random seed $seed (set SPM_TAP_SEED to repeat a run)";

my $dims = 400;
my $nrows = 4000;
my $nshards = 3;

# ----------------------------------------------------------------- nodes
my @shards;
for my $i (1 .. $nshards)
{
	my $s = spmw_node("shard$i", conf => "fsync = off\n");
	$s->safe_psql('postgres', qq{
CREATE TABLE docs (id int PRIMARY KEY, cat int NOT NULL, v sparsevec($dims));
CREATE INDEX docs_v_idx ON docs USING sparse_maxscore (v) WITH (ranges = on);
});
	push @shards, $s;
}

my $coord = spmw_node('coordinator', conf => "fsync = off\n");
my $setup = "CREATE EXTENSION postgres_fdw;\n"
  . "CREATE TABLE docs_sh (id int NOT NULL, cat int NOT NULL, v sparsevec($dims)) PARTITION BY HASH (id);\n";
for my $i (1 .. $nshards)
{
	my $s = $shards[ $i - 1 ];
	my $r = $i - 1;
	$setup .= sprintf(qq{
CREATE SERVER shard$i FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '%s', port '%s', dbname 'postgres',
	extensions 'sparsevec', async_capable 'true', fetch_size '50', batch_size '200', parallel_commit 'true');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard$i;
CREATE FOREIGN TABLE docs_sh_$i PARTITION OF docs_sh FOR VALUES WITH (MODULUS $nshards, REMAINDER $r)
	SERVER shard$i OPTIONS (table_name 'docs');
}, $s->host, $s->port);
}
$coord->safe_psql('postgres', $setup);

# ------------------------------------------------------------------ rows
# 3% NULL, 2% empty vectors, a third of the rows with tied weights, 10%
# negative weights
my @lines;
for my $id (1 .. $nrows)
{
	my $r = rand();
	my $v =
		$r < 0.03 ? '\N'
	  : $r < 0.05 ? "{}/$dims"
	  : random_vector($dims, 1 + int(rand(40)), $dims - 20, 0.33, 0.1);
	push @lines, join("\t", $id, $id % 11, $v);
}
$coord->safe_psql('postgres',
	"CREATE TABLE docs_local (id int PRIMARY KEY, cat int NOT NULL, v sparsevec($dims));\n"
	  . "COPY docs_local FROM STDIN;\n"
	  . join("\n", @lines)
	  . "\n\\.\n"
	  . "ANALYZE docs_local;\n"
	  # through the coordinator: each row goes to the shard of its hash
	  . "INSERT INTO docs_sh SELECT * FROM docs_local;\n");
$_->safe_psql('postgres', 'ANALYZE docs') for @shards;
$coord->safe_psql('postgres', 'ANALYZE docs_sh');

my @counts = map { $_->safe_psql('postgres', 'SELECT count(*) FROM docs') } @shards;
note "rows per shard: @counts";
is(eval { my $t = 0; $t += $_ for @counts; $t }, $nrows, 'every row is on a shard');
ok(!grep({ $_ < $nrows / $nshards / 2 } @counts), 'every shard has its share of the rows');
is( $coord->safe_psql('postgres', qq{
SELECT count(*) FROM (SELECT id FROM docs_local EXCEPT SELECT id FROM docs_sh) s}),
	'0', 'docs_sh has every row of docs_local');
# each shard holds only the ids of its remainder (OFFSET 0: postgres_fdw
# would ship satisfies_hash_partition with the coordinator's OID of docs_sh)
is( $coord->safe_psql('postgres', join(' UNION ALL ', map {
		my $i = $_;
		"SELECT count(*) FROM (SELECT id FROM docs_sh_$i OFFSET 0) s WHERE NOT satisfies_hash_partition('docs_sh'::regclass, $nshards, "
		  . ($i - 1) . ", id)"
	} 1 .. $nshards) . ';'),
	join("\n", (0) x $nshards), 'each shard holds the ids of its hash remainder');

# --------------------------------------------------------------- queries
my @queries = map { "'" . random_vector($dims, 1 + int(rand(50)), $dims, $_ % 5 == 0 ? 1 : 0,
		$_ % 3 == 0 ? 0.3 : 0) . "'::sparsevec" } 1 .. 40;
push @queries, "'{}/$dims'::sparsevec", '(SELECT NULL::sparsevec)';
my @limits = (1, 10, 100, 250, undef);

# the statement under test on the coordinator, in the plain form (the
# partitioned table) or the UNION ALL form (one subquery per shard, each
# with the LIMIT, in a materialized CTE so that the shards' subqueries
# run under an Append, asynchronously)
sub sharded_sql
{
	my ($form, $q, $filter, $lim) = @_;
	my $l = defined $lim ? " LIMIT $lim" : '';
	return "SELECT id, v <#> $q FROM docs_sh WHERE $filter ORDER BY v <#> $q$l" if $form eq 'plain';
	my $parts = join("\n  UNION ALL ",
		map { "(SELECT id, v <#> $q AS d FROM docs_sh_$_ WHERE $filter ORDER BY v <#> $q$l)" }
		  1 .. $nshards);
	return "WITH s AS MATERIALIZED (\n  $parts)\nSELECT id, d FROM s ORDER BY d$l";
}

# what the plan must show: [pattern, description] pairs
sub plan_problems
{
	my ($form, $plan, $lim) = @_;
	my @p;
	my $shipped = () = $plan =~ /Remote SQL: SELECT .* ORDER BY \(v OPERATOR\(public\.<#>\) .*\) ASC NULLS LAST/g;
	push @p, "$shipped of $nshards foreign scans ship the ORDER BY" if $shipped != $nshards;
	if ($form eq 'plain')
	{
		push @p, 'no Merge Append' unless $plan =~ /Merge Append/;
		push @p, 'a Sort on the coordinator' if $plan =~ /^\s*(->\s+)?Sort\s*$/m;
	}
	else
	{
		my $async = () = $plan =~ /Async Foreign Scan/g;
		push @p, "$async of $nshards foreign scans are asynchronous" if $async != $nshards;
		my $limited = () = $plan =~ /Remote SQL: .* LIMIT \d+::bigint/g;
		push @p, "$limited of $nshards foreign scans ship the LIMIT" if defined $lim && $limited != $nshards;
	}
	return @p;
}

# all queries x limits for one filter and form, in one session; compared
# with seq scans of docs_local.  The plans are checked for LIMITs up to
# $plan_upto (default: every LIMIT and none): with a filter, where the
# LIMIT reaches beyond the rows the coordinator expects the filter to
# leave on a shard, the planner may rather fetch those rows and sort them
# (also exact).  One assertion; returns the comparisons.
sub check_sharded
{
	my ($label, $form, $filter, $plan_upto) = @_;
	my (@problems, $n, $script);
	for my $qi (0 .. $#queries)
	{
		for my $li (0 .. $#limits)
		{
			my $sql = sharded_sql($form, $queries[$qi], $filter, $limits[$li]);
			$script .= "\\echo @@ $qi $li plan\nEXPLAIN (VERBOSE, COSTS OFF) $sql;\n\\echo @@ $qi $li rows\n$sql;\n";
		}
	}
	my $out = $coord->safe_psql('postgres', $script);
	my %got;
	for my $piece (split /^@@ /m, $out)
	{
		next if $piece eq '';
		my ($head, $body) = split /\n/, $piece, 2;
		my ($qi, $li, $what) = split / /, $head;
		$got{$qi}{$li}{$what} = $body // '';
	}
	for my $qi (0 .. $#queries)
	{
		my $ref = seq_scan_ref($coord, 'docs_local', $queries[$qi], $filter);
		for my $li (0 .. $#limits)
		{
			$n++;
			my $lim = $limits[$li];
			my @rows = map { my ($id, $d) = split /\|/, $_, 2; [ $id, $d // '' ] }
			  grep { $_ ne '' } split /\n/, $got{$qi}{$li}{rows} // '';
			my @p;
			@p = plan_problems($form, $got{$qi}{$li}{plan} // '', $lim)
			  if !defined $plan_upto || (defined $lim && $lim <= $plan_upto);
			my $c = compare(\@rows, $ref, $lim);
			push @p, $c if defined $c;
			push @problems, "query $qi, LIMIT " . ($lim // 'none') . ": " . join('; ', @p) if @p;
		}
	}
	is(scalar @problems, 0, "$label: $n sharded answers equal a seq scan of one table")
	  or diag(join("\n", @problems[ 0 .. ($#problems < 4 ? $#problems : 4) ]));
	return $n;
}

sub idx_scans
{
	my $t = 0;
	$t += $_->safe_psql('postgres',
		"SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'docs_v_idx'") for @shards;
	return $t;
}

my $comparisons = 0;
my $scans0 = idx_scans();
for my $filter ('true', 'cat = 3', 'v IS NULL OR id % 7 = 0')
{
	$comparisons += check_sharded("plain, WHERE $filter", 'plain', $filter, $filter eq 'true' ? undef : 10);
}
$comparisons += check_sharded('UNION ALL form', 'union', 'true');
$comparisons += check_sharded('UNION ALL form, WHERE cat = 3', 'union', 'cat = 3', 10);
sleep 1;	# the statistics collector is asynchronous
my $scans = idx_scans() - $scans0;
cmp_ok($scans, '>=', scalar(@queries) * $nshards, "the shards answered through their index ($scans index scans)");

# a small first round on the shards: LIMIT 10, 100 and 250 take many rounds
for my $s (@shards)
{
	$s->append_conf('postgresql.conf', "sparse_maxscore.initial_k = 3\n");
	$s->reload;
}
$comparisons += check_sharded('plain, initial_k = 3 on the shards', 'plain', 'true');
$comparisons += check_sharded('plain, initial_k = 3, WHERE cat = 3', 'plain', 'cat = 3', 10);
# one row per round trip
$coord->safe_psql('postgres', "ALTER SERVER shard$_ OPTIONS (SET fetch_size '1')") for 1 .. $nshards;
$comparisons += check_sharded('plain, fetch_size 1', 'plain', 'true');
$coord->safe_psql('postgres', "ALTER SERVER shard$_ OPTIONS (SET fetch_size '50')") for 1 .. $nshards;

# ------------------------------------------------------ a shard is down
$shards[1]->stop;
my ($ret, $stdout, $stderr) = $coord->psql('postgres',
	"SELECT id FROM docs_sh ORDER BY v <#> $queries[0] LIMIT 10");
isnt($ret, 0, 'shard 2 down: the query fails');
like($stderr, qr/could not connect to server "shard2"/, 'shard 2 down: the error names the server');
is($stdout, '', 'shard 2 down: no rows');
($ret, $stdout, $stderr) = $coord->psql('postgres',
	"SELECT id FROM (" . sharded_sql('union', $queries[0], 'true', 10) . ") s");
isnt($ret, 0, 'shard 2 down: the UNION ALL form fails too');
like($stderr, qr/could not connect to server "shard2"/, 'shard 2 down: UNION ALL form, the error names the server');
is($stdout, '', 'shard 2 down: UNION ALL form, no rows');
# a WHERE on the partition key that prunes shard 2 away does not need it
my @on_shard1 = grep { /^\d+$/ } split /\n/, $coord->safe_psql('postgres',
	"SELECT id FROM docs_local WHERE satisfies_hash_partition('docs_sh'::regclass, $nshards, 0, id) LIMIT 5");
my $pruned = $coord->safe_psql('postgres',
	"EXPLAIN (COSTS OFF) SELECT id FROM docs_sh WHERE id IN (" . join(',', @on_shard1)
	  . ") ORDER BY v <#> $queries[0] LIMIT 3");
unlike($pruned, qr/docs_sh_2/, 'a WHERE on ids of shard 1 prunes shard 2 from the plan');
($ret, $stdout, $stderr) = $coord->psql('postgres',
	"SELECT count(*) FROM (SELECT id FROM docs_sh WHERE id IN (" . join(',', @on_shard1)
	  . ") ORDER BY v <#> $queries[0] LIMIT 3) s");
is("$ret $stdout", '0 3', 'shard 2 down: a query pruned to shard 1 still answers');

# and back
$shards[1]->start;
my $bg_ok = $coord->safe_psql('postgres', "SELECT count(*) FROM (SELECT id FROM docs_sh ORDER BY v <#> $queries[1] LIMIT 10) s");
is($bg_ok, '10', 'shard 2 back: the query answers again');
$comparisons += check_sharded('plain, after the restart of shard 2', 'plain', 'cat = 3', 10);

note "$comparisons comparisons";
$coord->stop;
$_->stop for @shards;
done_testing();
