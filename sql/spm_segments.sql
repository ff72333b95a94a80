--
-- sparse_maxscore_segments(index) (issue 38): one row per segment, what it
-- holds and how its pages divide.  Checked against sparse_maxscore_info and
-- the options the segments were written under: the rows add up to info's
-- segments, documents, NULL rows and postings; the page kinds add up to
-- the segment's pages, and the segments' pages, the pending list, the free
-- pages and the metapage to the index's size (verify: nothing unreachable);
-- quantized and range_data follow the reloptions quantize and ranges.
-- Uses spm_setup's spm_rand_sv.
--
SELECT setseed(0.5);
CREATE TABLE spm_sg (id int, v sparsevec(500)) WITH (autovacuum_enabled = off);
INSERT INTO spm_sg SELECT i,
	CASE WHEN i % 41 = 0 THEN NULL WHEN i % 43 = 0 THEN '{}/500' ELSE spm_rand_sv(500, 12) END
FROM generate_series(1, 3000) i;

-- what every check below compares, for one index
CREATE FUNCTION spm_sg_check(idx regclass)
RETURNS TABLE (segments bigint, rows_match_info boolean, kinds_add_up boolean,
	pages_add_up boolean, verify_clean boolean)
LANGUAGE sql AS $$
	SELECT count(s.*),
		count(s.*) = i.segments
			AND coalesce(sum(s.documents), 0) + i.pending_documents = i.documents
			AND coalesce(sum(s.dead_documents), 0) = i.dead_documents
			AND coalesce(sum(s.postings), 0) = i.postings
			AND coalesce(sum(s.null_documents), 0) <= i.null_documents,
		coalesce(bool_and(s.pages = s.posting_pages + s.skip_pages + s.dictionary_pages
			+ s.forward_pages + s.range_pages + s.other_pages
			AND s.posting_pages > 0 AND s.dictionary_pages > 0 AND s.other_pages >= 3
			AND s.terms > 0 AND s.terms <= 500), true),
		coalesce(sum(s.pages), 0) + i.pending_pages + i.free_pages + 1 = i.pages,
		sparse_maxscore_verify(idx) ~ ' unreachable=0$'
	FROM sparse_maxscore_info(idx) i
		LEFT JOIN sparse_maxscore_segments(idx) s ON true
	GROUP BY i.segments, i.documents, i.pending_documents, i.dead_documents,
		i.postings, i.null_documents, i.pending_pages, i.free_pages, i.pages
$$;

-- the defaults: one segment of quantized weights; range data only where
-- ranges = auto finds that it pays (not asserted here: spm_ranges)
CREATE INDEX spm_sg_idx ON spm_sg USING sparse_maxscore (v);
SELECT * FROM spm_sg_check('spm_sg_idx');
SELECT segment, documents, dead_documents, null_documents, quantized,
	(range_data = (forward_pages > 0)) AND (range_data = (range_pages > 0)) AS range_pages_iff_range_data
FROM sparse_maxscore_segments('spm_sg_idx');
SELECT documents = (SELECT count(*) FROM spm_sg) AS every_row,
	null_documents = (SELECT count(*) FROM spm_sg WHERE v IS NULL) AS every_null,
	postings = (SELECT sum(nnz(v)) FROM spm_sg) AS every_posting
FROM sparse_maxscore_segments('spm_sg_idx');
DROP INDEX spm_sg_idx;

-- each combination of the options
CREATE INDEX spm_sg_on ON spm_sg USING sparse_maxscore (v) WITH (ranges = on);
CREATE INDEX spm_sg_off ON spm_sg USING sparse_maxscore (v) WITH (ranges = off);
CREATE INDEX spm_sg_exact ON spm_sg USING sparse_maxscore (v) WITH (ranges = off, quantize = off);
CREATE INDEX spm_sg_exact_on ON spm_sg USING sparse_maxscore (v) WITH (ranges = on, quantize = off);
SELECT i AS index, s.quantized, s.range_data, s.forward_pages > 0 AS forward, s.range_pages > 0 AS range,
	(c).rows_match_info, (c).kinds_add_up, (c).pages_add_up, (c).verify_clean
FROM unnest('{spm_sg_on,spm_sg_off,spm_sg_exact,spm_sg_exact_on}'::regclass[]) i,
	sparse_maxscore_segments(i) s, spm_sg_check(i) c
ORDER BY 1;
-- the forward copy with 1-byte codes is the smaller
SELECT (SELECT forward_pages FROM sparse_maxscore_segments('spm_sg_on')) <
	(SELECT forward_pages FROM sparse_maxscore_segments('spm_sg_exact_on')) AS codes_smaller;
DROP INDEX spm_sg_on, spm_sg_off, spm_sg_exact_on;

-- several segments, a pending list, dead rows before and after VACUUM
ALTER INDEX spm_sg_exact SET (pending_list_limit = 256);
INSERT INTO spm_sg SELECT i, spm_rand_sv(500, 12) FROM generate_series(3001, 3400) i;
SELECT sparse_maxscore_flush('spm_sg_exact') > 0 AS flushed;
INSERT INTO spm_sg SELECT i, spm_rand_sv(500, 12) FROM generate_series(3401, 3450) i;
DELETE FROM spm_sg WHERE id % 7 = 0;
SELECT * FROM spm_sg_check('spm_sg_exact');
-- the pending list is not a segment; deleted rows count as documents
-- until VACUUM clears their alive bits
SELECT count(*) FILTER (WHERE quantized) AS quantized, bool_or(range_data) AS range_data,
	(SELECT pending_documents FROM sparse_maxscore_info('spm_sg_exact')) AS pending,
	sum(documents) + (SELECT pending_documents FROM sparse_maxscore_info('spm_sg_exact')) AS documents,
	sum(dead_documents) AS dead
FROM sparse_maxscore_segments('spm_sg_exact');
VACUUM spm_sg;
SELECT * FROM spm_sg_check('spm_sg_exact');
-- VACUUM flushed the pending list: its deleted rows were written dead
-- (holes, not counted), the segments' deleted rows are dead now
SELECT sum(dead_documents) AS dead,
	sum(dead_documents) = (SELECT count(*) FROM generate_series(1, 3400) i WHERE i % 7 = 0) AS dead_as_deleted,
	sum(documents) + (SELECT pending_documents FROM sparse_maxscore_info('spm_sg_exact')) =
		(SELECT count(*) FROM spm_sg) AS live_rows
FROM sparse_maxscore_segments('spm_sg_exact');
SELECT sparse_maxscore_compact('spm_sg_exact') > 0 AS compacted;
SELECT * FROM spm_sg_check('spm_sg_exact');
-- one segment under a new id (ids are never reused)
SELECT segment, dead_documents FROM sparse_maxscore_segments('spm_sg_exact');

-- an index with no segment yet: no rows
CREATE TABLE spm_sg_empty (v sparsevec(5));
CREATE INDEX spm_sg_empty_idx ON spm_sg_empty USING sparse_maxscore (v);
SELECT * FROM spm_sg_check('spm_sg_empty_idx');
INSERT INTO spm_sg_empty VALUES ('{1:1}/5');
SELECT count(*) AS segments FROM sparse_maxscore_segments('spm_sg_empty_idx');

-- strict; not a sparse_maxscore index
SELECT * FROM sparse_maxscore_segments(NULL);
SELECT * FROM sparse_maxscore_segments('spm_sg');

DROP TABLE spm_sg, spm_sg_empty;
DROP FUNCTION spm_sg_check(regclass);
