# Large documents as queries, with a small buffer pool: a scan must not
# need more pinned buffers than a few (PostgreSQL's rule for a backend),
# whatever the number of query terms.  And range pruning, whose pages'
# buffers the pool keeps reusing.  Fails at index f44a1ba ("no
# unpinned buffers available": the scan kept one page pinned per query
# term).

use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use SpmwTest;

my $node = spmw_node('spmw_bigquery', conf => "shared_buffers = 1MB\n");

# 300 documents with all 1000 terms (each term: 3 posting blocks), in a
# segment, and 100 more in the pending list; then documents of 1000 and
# 5000 non-zeros as queries
$node->safe_psql('postgres', qq{
CREATE TABLE wide (id int, v sparsevec);
INSERT INTO wide SELECT i, to_sparsevec(array_agg(j ORDER BY j), array_agg(((i * j) % 7 + 1)::real ORDER BY j), 5000)
FROM generate_series(1, 300) i, generate_series(1, 1000) j GROUP BY i;
CREATE INDEX wide_idx ON wide USING sparse_maxscore (v) WITH (ranges = on);
INSERT INTO wide SELECT i, spmw_vec(i, 5000, 5000) FROM generate_series(301, 400) i;
});
cmp_ok($node->safe_psql('postgres', "SELECT pages FROM sparse_maxscore_info('wide_idx')"),
	'>', 128, 'the index is larger than the buffer pool');

for my $step ('pending', 'flushed')
{
	$node->safe_psql('postgres', "SELECT sparse_maxscore_flush('wide_idx')") if $step eq 'flushed';
	for my $id (1, 301)
	{
		my ($ret, $out, $err) = $node->psql('postgres', qq{
SELECT coalesce(spmw_diff('wide', v, 10), 'ok'), coalesce(spmw_diff('wide', v), 'ok') FROM wide WHERE id = $id});
		is($out, 'ok|ok', "$step: row $id (" . ($id == 1 ? '1000' : 'about 3000')
			  . " terms) as the query") or diag($err);
	}
	spmw_exact_ok($node, 'wide', 5000, $step);
}

# Pages are pinned through the buffer this backend last found them in
# (spmsegment.c read_buffer), and through ReadBuffer when that buffer
# holds another page by then.  With 128 buffers both happen: one session
# runs five queries three times under algorithm = ranges, and one on the
# other index (MaxScore, its posting blocks sharing the block hints),
# reading the other table between the rounds, and compares every answer
# with a seq scan.
$node->safe_psql('postgres', q{
CREATE TABLE rp (id int, v sparsevec(300));
INSERT INTO rp SELECT i, spmw_vec(i, 30, 300) FROM generate_series(1, 20000) i;
CREATE INDEX rp_idx ON rp USING sparse_maxscore (v) WITH (ranges = on);
CREATE FUNCTION rp_check() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	msg text;
	ranged bool;
	n int := 0;
BEGIN
	PERFORM set_config('sparse_maxscore.algorithm', 'ranges', false);
	FOR r IN 1 .. 3 LOOP
		FOR k IN 1 .. 5 LOOP
			msg := spmw_diff('rp', spmw_vec(200000 + k, 8, 300), 10);
			IF msg IS NOT NULL THEN
				RETURN format('round %s query %s: %s', r, k, msg);
			END IF;
			SELECT blocks_decoded = 0 AND windows > 0 INTO ranged
			FROM sparse_maxscore_last_scan();
			IF NOT ranged THEN
				RETURN format('round %s query %s: not answered by range pruning', r, k);
			END IF;
			n := n + 1;
		END LOOP;
		-- MaxScore on the other index, whose block numbers share the
		-- backend's block hints (spmsegment.c read_buffer) with this one
		msg := spmw_diff('wide', spmw_vec(300000 + r, 50, 5000), 10);
		IF msg IS NOT NULL THEN
			RETURN format('round %s, the other index: %s', r, msg);
		END IF;
		PERFORM count(*) FROM wide WHERE v IS NOT NULL;
	END LOOP;
	RETURN format('ok: %s', n);
END $$;
});
cmp_ok($node->safe_psql('postgres', "SELECT pages FROM sparse_maxscore_info('rp_idx')"),
	'>', 256, 'the range-pruned index is twice the buffer pool');
is($node->safe_psql('postgres', 'SELECT rp_check()'), 'ok: 15',
	'range pruning reads the right pages when their last buffers were reused');

$node->stop;
done_testing();
