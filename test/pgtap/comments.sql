-- pgTAP: every function of the extension says what it does (\df+, \da+,
-- \dd): each one, aggregates, trigger and type support functions too, has a
-- COMMENT of one line (1.4; under 1.3, 38 of the 84 had one).  A failure
-- lists the functions at fault by signature.
BEGIN;
SELECT plan(4);

CREATE TEMPORARY VIEW cosid_functions AS
	SELECT p.oid, CASE p.prokind WHEN 'a' THEN 'aggregate ' ELSE 'function ' END || p.oid::regprocedure::text AS signature,
		   obj_description(p.oid, 'pg_proc') AS comment
	FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
	WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
	  AND d.refclassid = 'pg_extension'::regclass
	  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'cosid');

-- not vacuous: the view sees the extension's functions, its aggregates and
-- those of schema cosid
SELECT cmp_ok((SELECT count(*)::int FROM cosid_functions), '>=', 84,
	'the extension has at least the 84 functions of 1.4 (aggregates included)');
SELECT ok((SELECT count(*) FILTER (WHERE signature LIKE 'aggregate %') = 2
			  AND count(*) FILTER (WHERE signature LIKE 'function cosid.%') > 0 FROM cosid_functions),
	'they include the aggregates min(ulid) and max(ulid), and the functions of schema cosid');

SELECT is_empty($$SELECT signature FROM cosid_functions WHERE comment IS NULL OR btrim(comment) = '' ORDER BY 1$$,
	'every function of the extension has a comment');
SELECT is_empty($$SELECT signature FROM cosid_functions WHERE comment ~ '[\n\r]' ORDER BY 1$$,
	'every comment is one line');

SELECT * FROM finish();
ROLLBACK;
