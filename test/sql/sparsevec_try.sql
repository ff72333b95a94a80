--
-- try(sql): 'ok', or the SQLSTATE, message and detail of the error sql
-- raises.  Shared by the sparsevec_* tests, which include this file.
--
CREATE FUNCTION pg_temp.try(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	state text;
	msg text;
	detail text;
BEGIN
	EXECUTE sql;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
		detail = PG_EXCEPTION_DETAIL;
	RETURN state || ' ' || msg || CASE WHEN detail <> '' THEN ' | ' || detail ELSE '' END;
END
$$;
