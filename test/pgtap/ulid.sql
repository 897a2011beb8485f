-- pgTAP: the ulid type's catalog shape and behaviour, as a user relies on it.
BEGIN;
SELECT plan(83);

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

-- ulid next to uuid (1.2): operators with uuid and text, both families
-- complete, uuid text as input, varchar parameters
SELECT ok((SELECT count(*) = 12 FROM pg_operator
	WHERE oprname IN ('=', '<>', '<', '<=', '>', '>=') AND oprresult = 'boolean'::regtype
	  AND (oprleft, oprright) IN (('ulid'::regtype, 'uuid'::regtype), ('uuid'::regtype, 'ulid'::regtype))),
	'six comparison operators each way between ulid and uuid');
SELECT ok((SELECT count(*) = 12 FROM pg_operator
	WHERE oprname IN ('=', '<>', '<', '<=', '>', '>=') AND oprresult = 'boolean'::regtype
	  AND (oprleft, oprright) IN (('ulid'::regtype, 'text'::regtype), ('text'::regtype, 'ulid'::regtype))),
	'six comparison operators each way between ulid and text');
SELECT ok((SELECT bool_and(oprcanhash AND oprcanmerge AND oprcom <> 0 AND oprnegate <> 0) FROM pg_operator
	WHERE oprname = '=' AND (oprleft, oprright) IN (('ulid'::regtype, 'uuid'::regtype), ('uuid'::regtype, 'ulid'::regtype))),
	'ulid = uuid and uuid = ulid hash and merge, with commutator and negator');
SELECT ok((SELECT bool_and(amvalidate(oid)) AND count(*) = 3 FROM pg_opclass WHERE opcname ~ 'ulid'),
	'amvalidate: every ulid operator class (btree, hash, brin) is valid');
SELECT is((SELECT count(*)::int FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily
	JOIN pg_am a ON a.oid = f.opfmethod
	WHERE f.opfname = 'ulid_ops' AND a.amname = 'btree' AND o.amoplefttype <> o.amoprighttype),
	10, 'the btree family has < <= = >= > for (ulid, uuid) and (uuid, ulid)');
SELECT is((SELECT count(*)::int FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily
	JOIN pg_am a ON a.oid = f.opfmethod
	WHERE f.opfname = 'ulid_ops' AND a.amname = 'btree' AND p.amprocnum = 1),
	4, 'the btree family has a comparison support function for each of its four type pairs');
SELECT is((SELECT count(*)::int FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily
	JOIN pg_am a ON a.oid = f.opfmethod
	WHERE f.opfname = 'ulid_ops' AND a.amname = 'hash'),
	4, 'the hash family has = for ulid, uuid and both cross-type pairs');
SELECT is((SELECT count(*)::int FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily
	WHERE f.opfname = 'uuid_ops' AND 'ulid'::regtype IN (o.amoplefttype, o.amoprighttype)),
	0, 'core''s uuid_ops families are left alone');
SELECT has_cast('character varying', 'ulid');
SELECT cast_context_is('character varying', 'ulid', 'assignment');
SELECT is('018eafc1-8435-0cf0-5803-c72d06e78011'::ulid::text, '01HTQW311N1KR5G0Y75M3EF00H',
	'uuid text reads as the ulid of the same bytes, printed as ULID text');
SELECT is('018EAFC1-8435-0CF0-5803-C72D06E78011'::ulid, '01HTQW311N1KR5G0Y75M3EF00H'::ulid, 'upper-case uuid text reads too');
SELECT ok('01HTQW311N1KR5G0Y75M3EF00H'::ulid = '018eafc1-8435-0cf0-5803-c72d06e78011'::uuid
	AND '018eafc1-8435-0cf0-5803-c72d06e78011'::uuid = '01HTQW311N1KR5G0Y75M3EF00H'::ulid
	AND '01HTQW311N1KR5G0Y75M3EF00H'::ulid < '018eafc1-8435-0cf0-5803-c72d06e78012'::uuid
	AND '018eafc1-8435-0cf0-5803-c72d06e78012'::uuid > '01HTQW311N1KR5G0Y75M3EF00H'::ulid
	AND NOT ('01HTQW311N1KR5G0Y75M3EF00H'::ulid <> '018eafc1-8435-0cf0-5803-c72d06e78011'::uuid),
	'ulid and uuid compare byte for byte, either way round');
SELECT ok((SELECT bool_and(ulid_hash(u) = uuid_hash(u::uuid) AND ulid_hash_extended(u, 7) = uuid_hash_extended(u::uuid, 7))
	FROM (SELECT gen_ulid() AS u FROM generate_series(1, 1000)) s),
	'a ulid hashes as the uuid of the same bytes');
SELECT ok('01HTQW311N1KR5G0Y75M3EF00H'::ulid = '01htqw311n1kr5g0y75m3ef00h'::varchar
	AND '018eafc1-8435-0cf0-5803-c72d06e78011'::text = '01HTQW311N1KR5G0Y75M3EF00H'::ulid,
	'ulid compares with varchar and text');
-- pgjdbc's setString: a varchar parameter
CREATE TEMP TABLE varchar_target (u ulid);
PREPARE pgtap_ins(varchar) AS INSERT INTO pg_temp.varchar_target VALUES ($1);
SELECT lives_ok($$EXECUTE pgtap_ins('01HTQW311N1KR5G0Y75M3EF00H')$$, 'a varchar parameter goes into a ulid column');
SELECT lives_ok($$EXECUTE pgtap_ins('018eafc1-8435-0cf0-5803-c72d06e78011')$$, '... in uuid text as well');
SELECT results_eq($$SELECT count(*)::int FROM pg_temp.varchar_target WHERE u = '01HTQW311N1KR5G0Y75M3EF00H'::varchar$$,
	ARRAY[2], 'both rows are the same ulid, found by a varchar');
SELECT throws_ok($$EXECUTE pgtap_ins('01HTQW311N1KR5G0Y75M3EF0UH')$$, '22P02', NULL, 'a varchar that is no ulid is 22P02');
-- hostile input: 22P02 and a message naming the input's type, never anything else
SELECT throws_ok(format('SELECT %L::ulid', x), '22P02', NULL, 'hostile input is 22P02: ' || left(d, 60))
FROM (VALUES
	('{018eafc1-8435-0cf0-5803-c72d06e78011}', 'uuid text in braces'),
	('018eafc184350cf05803c72d06e78011', '32 hex digits without hyphens'),
	('018eafc1-8435-0cf0-5803-c72d06e7801', '35 characters of uuid text'),
	('018eafc1-8435-0cf0-5803-c72d06e780111', '37 characters of uuid text'),
	('018eafc1-8435-0cf0-5803-c72d06e7801g', 'a g in uuid text'),
	('018eafc1-8435-0cf0-5803-c72d06e780' || chr(233), 'a non-ASCII character at a hex digit''s place'),
	('018eafc1_8435-0cf0-5803-c72d06e78011', 'an underscore at a hyphen''s place'),
	(repeat('-', 36), '36 hyphens'),
	('''; DROP TABLE varchar_target; --', 'SQL in the text'),
	(repeat('0', 1000000), 'a million zeros'),
	(E'01HTQW311N1KR5G0Y75M3EF00\x01', 'a control character'),
	('01HTQW311N1KR5G0Y75M3EF00H ', 'a trailing space'),
	('urn:uuid:018eafc1-8435-0cf0-5803-c72d06e78011', 'a uuid URN')
) v(x, d);
SELECT is((SELECT count(*)::int FROM pg_temp.varchar_target), 2, 'and the table is still there');

-- soft input errors (PostgreSQL 16 and newer): pg_input_is_valid() and
-- pg_input_error_info() answer without an error; older versions skip
CREATE FUNCTION pg_temp.soft_input_tests() RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE
	valid boolean;
	info record;
BEGIN
	IF current_setting('server_version_num')::int < 160000 THEN
		RETURN NEXT skip('soft input errors need PostgreSQL 16 or newer', 10);
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
	EXECUTE $$SELECT pg_input_is_valid('018eafc1-8435-0cf0-5803-c72d06e78011', 'ulid')$$ INTO valid;
	RETURN NEXT ok(valid, 'pg_input_is_valid: uuid text is valid ulid input');
	EXECUTE $$SELECT pg_input_is_valid('018eafc1-8435-0cf0-5803-c72d06e7801x', 'ulid')$$ INTO valid;
	RETURN NEXT ok(NOT valid, 'pg_input_is_valid: uuid text with an x is not, without an error');
	EXECUTE $$SELECT * FROM pg_input_error_info('018eafc1-8435-0cf0-5803-c72d06e7801x', 'ulid')$$ INTO info;
	RETURN NEXT is(info.sql_error_code, '22P02', 'pg_input_error_info: bad uuid text is 22P02');
	RETURN NEXT is(info.detail, 'Character 36, "x", is not a hexadecimal digit.', 'pg_input_error_info: the detail says which character');
	RETURN NEXT ok(info.hint LIKE '%26 Crockford base32%' AND info.hint LIKE '%8-4-4-4-12 hexadecimal%',
		'pg_input_error_info: the hint names both forms');
END
$f$;
SELECT * FROM pg_temp.soft_input_tests();

SELECT * FROM finish();
ROLLBACK;
