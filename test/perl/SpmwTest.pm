
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

spmw_install creates the SQL helpers of sql/spmw_setup.sql (a copy: TAP
tests run from a copy of test/ only): spmw_vec, spmw_queries, spmw_cmp,
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
use Test::More;

our @EXPORT = qw(spmw_install spmw_exact_ok spmw_verify_ok spmw_verify
  spmw_same_answers_ok spmw_answers);

my $helpers = <<'SQL';
CREATE FUNCTION spmw_vec(seed bigint, nnz int, dims int, neg float8 DEFAULT 0)
RETURNS sparsevec LANGUAGE sql IMMUTABLE STRICT AS $$
	SELECT to_sparsevec(coalesce(array_agg(i ORDER BY i), '{}'),
		coalesce(array_agg(w ORDER BY i), '{}'), dims)
	FROM (
		SELECT DISTINCT ON (i) i, w FROM (
			SELECT 1 + (hashint8(seed * 1000003 + j) & 2147483647) % dims AS i,
				((1 + (hashint8(seed * 7919 + j * 31 + 1) & 2147483647) % 8) / 4.0
				 * CASE WHEN (hashint8(seed * 104729 + j * 17 + 2) & 1023) < neg * 1024
					THEN -1 ELSE 1 END)::real AS w
			FROM generate_series(1, nnz) j) s
		ORDER BY i, w) s2
$$;

CREATE FUNCTION spmw_queries(dims int) RETURNS sparsevec[]
LANGUAGE sql IMMUTABLE STRICT AS $$
	SELECT array_agg(q ORDER BY k) FROM (
		SELECT k, spmw_vec(100000 + k, 4 + 3 * k, dims, CASE WHEN k = 3 THEN 0.4 ELSE 0 END) AS q
		FROM generate_series(1, 6) k
		UNION ALL SELECT 7, to_sparsevec('{}', '{}', dims)
		UNION ALL SELECT 8, to_sparsevec('{1,2,3}', '{1,0.5,-0.25}', dims)) s
$$;

CREATE FUNCTION spmw_cmp(ti bigint[], td float8[], ri bigint[], rd float8[], lim int)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
	WITH t AS (
		SELECT id, d, k FROM unnest(ti, td) WITH ORDINALITY AS u(id, d, k)
	), r AS (
		SELECT id, d, row_number() OVER (ORDER BY d NULLS LAST) AS k
		FROM unnest(ri, rd) AS u(id, d)
	), problems AS (
		SELECT 1 AS o, 0::bigint AS k,
			format('%s rows, expected %s', cardinality(ti),
				coalesce(least(lim, cardinality(ri)), cardinality(ri))) AS msg
		WHERE cardinality(ti) <> coalesce(least(lim, cardinality(ri)), cardinality(ri))
		UNION ALL
		SELECT 2, t.k, format('row %s: id %s at distance %s, expected distance %s',
			t.k, t.id, coalesce(t.d::text, 'NULL'),
			CASE WHEN r.k IS NULL THEN 'none' ELSE coalesce(r.d::text, 'NULL') END)
		FROM t LEFT JOIN r ON r.k = t.k
		WHERE r.k IS NULL OR t.d IS DISTINCT FROM r.d
		UNION ALL
		SELECT 3, min(k), format('id %s returned %s times', id, count(*))
		FROM t GROUP BY id HAVING count(*) > 1
		UNION ALL
		SELECT 4, t.k, format('row %s: id %s at distance %s is not a row at that distance',
			t.k, t.id, coalesce(t.d::text, 'NULL'))
		FROM t WHERE NOT EXISTS (SELECT FROM r WHERE r.id = t.id AND r.d IS NOT DISTINCT FROM t.d)
	)
	SELECT p.msg FROM problems p ORDER BY o, k LIMIT 1
$$;

CREATE FUNCTION spmw_diff(tbl text, q sparsevec, lim int DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	qexpr text := CASE WHEN q IS NULL THEN '(SELECT $1)' ELSE '$1' END;
	sql text := format('SELECT id::bigint AS id, v <#> %s AS d FROM %s ORDER BY v <#> %s',
		qexpr, tbl, qexpr) || CASE WHEN lim IS NULL THEN '' ELSE ' LIMIT ' || lim END;
	old_seqscan text := current_setting('enable_seqscan');
	old_indexscan text := current_setting('enable_indexscan');
	old_bitmapscan text := current_setting('enable_bitmapscan');
	line text;
	scans boolean := false;
	sorts boolean := false;
	r record;
	ti bigint[] := '{}';
	td float8[] := '{}';
	ri bigint[];
	rd float8[];
BEGIN
	PERFORM set_config('enable_seqscan', 'off', true);
	PERFORM set_config('enable_bitmapscan', 'off', true);
	PERFORM set_config('enable_indexscan', 'on', true);
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || sql USING q LOOP
		scans := scans OR line ~ 'Index Scan using \S+ on ';
		sorts := sorts OR line ~ '^\s*(->\s+)?Sort\M';
	END LOOP;
	IF NOT scans OR sorts THEN
		PERFORM set_config('enable_seqscan', old_seqscan, true);
		PERFORM set_config('enable_indexscan', old_indexscan, true);
		PERFORM set_config('enable_bitmapscan', old_bitmapscan, true);
		RETURN 'the plan does not scan the index in order';
	END IF;
	FOR r IN EXECUTE sql USING q LOOP
		ti := ti || r.id;
		td := td || r.d;
	END LOOP;

	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'off', true);
	EXECUTE format('SELECT coalesce(array_agg(id), ''{}''), coalesce(array_agg(v <#> $1), ''{}'') FROM %s', tbl)
		INTO ri, rd USING q;
	PERFORM set_config('enable_seqscan', old_seqscan, true);
	PERFORM set_config('enable_indexscan', old_indexscan, true);
	PERFORM set_config('enable_bitmapscan', old_bitmapscan, true);

	RETURN spmw_cmp(ti, td, ri, rd, lim);
END $$;

CREATE FUNCTION spmw_exact(tbl text, dims int) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	qs sparsevec[] := spmw_queries(dims) || NULL::sparsevec;
	lims int[] := '{1,10,100,NULL}';
	n int := 0;
	msg text;
BEGIN
	FOR i IN 1 .. cardinality(qs) LOOP
		FOR j IN 1 .. cardinality(lims) LOOP
			msg := spmw_diff(tbl, qs[i], lims[j]);
			IF msg IS NOT NULL THEN
				RETURN format('query %s limit %s: %s', i, coalesce(lims[j]::text, 'none'), msg);
			END IF;
			n := n + 1;
		END LOOP;
	END LOOP;
	RETURN format('ok: %s comparisons', n);
END $$;
SQL

=pod

=over

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
