# Randomized exactness of sparse_maxscore index scans for ORDER BY v <-> q
# (sparsevec_l2_ops; src/README "Cosine and L2").
#
# A random corpus (4000 rows of up to 40 terms over 400 dimensions, a
# third with tied weights, 15% negative weights, multiples of one vector,
# copies of one vector, NULL and empty vectors) in a table with an L2
# index whose pending list is small, so that inserts flush and merge
# segments.  32 random queries (negative weights, terms no row has, the
# empty query: every distance |d|; the copied vector: distance 0) run with
# LIMIT 1, 10, 100, with and without a WHERE that keeps about 1% of the
# rows, under sparse_maxscore.algorithm auto, maxscore and exhaustive, and
# with initial_k 1 (many rounds), and without a LIMIT under auto, and are
# compared with a seq scan of the same statement:
#
#   * the same distance at every position (float8 equality; NULL last),
#   * only rows the seq scan has at that distance, none twice, as many as
#     the seq scan has up to the LIMIT (ties in any order),
#   * every plan an Index Scan on the L2 index, unsorted.
#
# The matrix runs after CREATE INDEX, after inserts that flush and merge
# (with rows left pending), after DELETE and VACUUM, after
# sparse_maxscore_compact, and over a LATERAL join (a rescan per query).
#
# SPM_TAP_SEED=n sets the random seed (printed at the start).
#
# The test itself is test/perl/SpmDistanceTest.pm, shared with test/t/023_spm_cosine.pl.

use strict;
use warnings;

use Test::More;

use SpmDistanceTest;

my $seed = $ENV{SPM_TAP_SEED} // 20261204;
srand($seed);
note "random seed $seed (set SPM_TAP_SEED to repeat a run)";

run_distance_test(
	name => 'spm_l2',
	opclass => 'sparsevec_l2_ops',
	op => '<->',
	copy => '{1:0.5,7:-1.25,300:2}',
	extra_queries => [ '{1:0.5,7:-1.25,300:2}', '{1:2,2:4,3:6}' ]);
