-- pgTAP: the ulid type's catalog shape and behaviour, as a user relies on it.
BEGIN;
SELECT plan(45);

-- the type and its representation
SELECT has_type('ulid');
SELECT is((SELECT typlen FROM pg_type WHERE typname = 'ulid'), 16::int2, 'ulid is 16 bytes');
SELECT is((SELECT typbyval FROM pg_type WHERE typname = 'ulid'), false, 'ulid is passed by reference');
SELECT is((SELECT typalign FROM pg_type WHERE typname = 'ulid'), 'c'::"char", 'ulid has char alignment, as uuid');

-- operators and operator classes
SELECT has_operator('ulid', '=', 'ulid', 'boolean');
SELECT has_operator('ulid', '<>', 'ulid', 'boolean');
SELECT has_operator('ulid', '<', 'ulid', 'boolean');
SELECT has_operator('ulid', '<=', 'ulid', 'boolean');
SELECT has_operator('ulid', '>', 'ulid', 'boolean');
SELECT has_operator('ulid', '>=', 'ulid', 'boolean');
SELECT ok((SELECT oprcanhash AND oprcanmerge FROM pg_operator
	WHERE oprname = '=' AND oprleft = 'ulid'::regtype AND oprright = 'ulid'::regtype),
	'= on ulid supports hash and merge joins');
SELECT has_opclass('ulid_ops');
SELECT has_opclass('ulid_minmax_ops');
SELECT is((SELECT count(*)::int FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
	WHERE c.opcintype = 'ulid'::regtype AND c.opcdefault AND a.amname IN ('btree', 'hash', 'brin')),
	3, 'default btree, hash and brin operator classes');
SELECT ok(EXISTS (SELECT 1 FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily
	JOIN pg_am a ON a.oid = f.opfmethod
	WHERE a.amname = 'btree' AND p.amproclefttype = 'ulid'::regtype AND p.amprocnum = 2),
	'btree sort support is registered');
SELECT ok(EXISTS (SELECT 1 FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily
	JOIN pg_am a ON a.oid = f.opfmethod
	WHERE a.amname = 'hash' AND p.amproclefttype = 'ulid'::regtype AND p.amprocnum = 2),
	'extended hash is registered');

-- casts: none implicit
SELECT has_cast('ulid', 'uuid');
SELECT has_cast('uuid', 'ulid');
SELECT has_cast('ulid', 'timestamp with time zone');
SELECT has_cast('text', 'ulid');
SELECT has_cast('ulid', 'text');
SELECT is((SELECT count(*)::int FROM pg_cast
	WHERE (castsource = 'ulid'::regtype OR casttarget = 'ulid'::regtype) AND castcontext = 'i'),
	0, 'no implicit cast to or from ulid');
SELECT cast_context_is('ulid', 'timestamp with time zone', 'explicit');

-- functions: volatility and parallel safety as documented
SELECT volatility_is('gen_ulid', ARRAY[]::text[], 'volatile');
SELECT volatility_is('gen_ulid_monotonic', ARRAY[]::text[], 'volatile');
SELECT volatility_is('ulid_time', ARRAY['ulid'], 'immutable');
SELECT volatility_is('ulid_from_time', ARRAY['timestamp with time zone'], 'immutable');
SELECT volatility_is('ulid_parts', ARRAY['ulid'], 'immutable');
SELECT function_returns('ulid_time', ARRAY['ulid'], 'timestamp with time zone');
SELECT function_returns('ulid_from_time', ARRAY['timestamp with time zone'], 'ulid');
SELECT is((SELECT count(*)::int FROM pg_proc WHERE proname IN ('gen_ulid', 'gen_ulid_monotonic') AND proparallel = 's'),
	2, 'both generators are parallel safe');

-- behaviour
SELECT is('01HTQW311N1KR5G0Y75M3EF00H'::ulid::text, '01HTQW311N1KR5G0Y75M3EF00H', 'the seed vector reads and prints');
SELECT is(ulid_from_time(to_timestamp(1469918176.385))::text, '01ARYZ6S410000000000000000', 'ulid_from_time gives the zero-random ULID of that millisecond');
SELECT throws_ok($$SELECT '80000000000000000000000000'::ulid$$, '22P02', NULL, '128-bit overflow is rejected');
SELECT throws_ok($$SELECT '01HTQW311N1KR5G0Y75M3EF0UH'::ulid$$, '22P02', NULL, 'U is not a Crockford digit');
SELECT throws_ok($$SELECT ulid_from_time('1960-01-01')$$, '22003', NULL, 'a time before 1970 does not fit');
SELECT results_eq($$SELECT time_part, random_part FROM ulid_parts('01HTQW311N1KR5G0Y75M3EF00H')$$,
	$$VALUES ('01HTQW311N'::text, '1KR5G0Y75M3EF00H'::text)$$, 'ulid_parts splits 10 + 16');
SELECT ok((SELECT bool_and(a < b) FROM (SELECT gen_ulid_monotonic() AS a, gen_ulid_monotonic() AS b
	FROM generate_series(1, 1000)) s), 'gen_ulid_monotonic() increases call after call');
SELECT isnt(gen_ulid(), gen_ulid(), 'gen_ulid() gives a new value each call');
SELECT ok(abs(extract(epoch FROM ulid_time(gen_ulid()) - clock_timestamp())) < 5, 'gen_ulid() carries the current time');

-- soft input errors (PostgreSQL 16 and newer): pg_input_is_valid() and
-- pg_input_error_info() answer without an error; older versions skip
CREATE FUNCTION pg_temp.soft_input_tests() RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE
	valid boolean;
	info record;
BEGIN
	IF current_setting('server_version_num')::int < 160000 THEN
		RETURN NEXT skip('soft input errors need PostgreSQL 16 or newer', 5);
		RETURN;
	END IF;
	EXECUTE $$SELECT pg_input_is_valid('01HTQW311N1KR5G0Y75M3EF00H', 'ulid')$$ INTO valid;
	RETURN NEXT ok(valid, 'pg_input_is_valid: a ULID is valid ulid input');
	EXECUTE $$SELECT pg_input_is_valid('01HTQW311N1KR5G0Y75M3EF0', 'ulid')$$ INTO valid;
	RETURN NEXT ok(NOT valid, 'pg_input_is_valid: 24 characters are not, without an error');
	EXECUTE $$SELECT pg_input_is_valid('81HTQW311N1KR5G0Y75M3EF00H', 'ulid')$$ INTO valid;
	RETURN NEXT ok(NOT valid, 'pg_input_is_valid: a first character above 7 (128-bit overflow) is not');
	EXECUTE $$SELECT * FROM pg_input_error_info('01HTQW311N1KR5G0Y75M3EF0UH', 'ulid')$$ INTO info;
	RETURN NEXT is(info.sql_error_code, '22P02', 'pg_input_error_info: a U is 22P02');
	RETURN NEXT ok(info.message LIKE 'invalid input syntax for type ulid%', 'pg_input_error_info: the message names the type');
END
$f$;
SELECT * FROM pg_temp.soft_input_tests();

SELECT * FROM finish();
ROLLBACK;
