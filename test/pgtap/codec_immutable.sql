-- pgTAP: the codec functions as the planner and a schema see them:
-- cosid_encode_immutable and cosid_decode_immutable are IMMUTABLE, STRICT,
-- PARALLEL SAFE and accepted where PostgreSQL asks for immutability (index
-- expressions, generated columns); the named and ad hoc cosid_encode and
-- cosid_decode stay STABLE; impure items are refused with 22023.
-- Everything is undone by the ROLLBACK.
BEGIN;
SELECT plan(38);

-- the functions, their results and their promises
SELECT has_function('cosid_encode_immutable', ARRAY['bigint', 'jsonb']);
SELECT has_function('cosid_decode_immutable', ARRAY['text', 'jsonb']);
SELECT function_returns('cosid_encode_immutable', ARRAY['bigint', 'jsonb'], 'text');
SELECT function_returns('cosid_decode_immutable', ARRAY['text', 'jsonb'], 'bigint');
SELECT volatility_is('cosid_encode_immutable', ARRAY['bigint', 'jsonb'], 'immutable');
SELECT volatility_is('cosid_decode_immutable', ARRAY['text', 'jsonb'], 'immutable');
SELECT is_strict('cosid_encode_immutable', ARRAY['bigint', 'jsonb']);
SELECT is_strict('cosid_decode_immutable', ARRAY['text', 'jsonb']);
SELECT is((SELECT proparallel FROM pg_proc WHERE oid = 'cosid_encode_immutable(bigint, jsonb)'::regprocedure),
	's'::"char", 'cosid_encode_immutable is PARALLEL SAFE');
SELECT is((SELECT proparallel FROM pg_proc WHERE oid = 'cosid_decode_immutable(text, jsonb)'::regprocedure),
	's'::"char", 'cosid_decode_immutable is PARALLEL SAFE');
SELECT is((SELECT prosecdef FROM pg_proc WHERE oid = 'cosid_decode_immutable(text, jsonb)'::regprocedure),
	false, 'cosid_decode_immutable is not SECURITY DEFINER');
-- a generator's codec can be altered, and a NOW date prefix is the clock: STABLE
SELECT volatility_is('cosid_encode', ARRAY['text', 'bigint'], 'stable');
SELECT volatility_is('cosid_decode', ARRAY['text', 'text'], 'stable');
SELECT volatility_is('cosid_encode_with', ARRAY['bigint', 'jsonb'], 'stable');
SELECT volatility_is('cosid_decode_with', ARRAY['text', 'jsonb'], 'stable');
SELECT is((SELECT count(*)::int FROM pg_proc WHERE proname IN ('cosid_encode_immutable', 'cosid_decode_immutable')),
	2, 'one form each: no immutable form takes a generator''s name');

-- where PostgreSQL asks for immutability
CREATE TABLE pgtap_codes (code text PRIMARY KEY);
INSERT INTO pgtap_codes SELECT cosid_encode_immutable(i, '[{"radix": 36}, {"prefix": "K"}]') FROM generate_series(1, 2000) i;
SELECT throws_ok($$CREATE INDEX ON pgtap_codes (cosid_decode_with(code, '[{"radix": 36}, {"prefix": "K"}]'::jsonb))$$,
	'42P17', 'functions in index expression must be marked IMMUTABLE',
	'cosid_decode (STABLE) in an index expression: refused, as the issue reports');
SELECT lives_ok($$CREATE INDEX pgtap_codes_number ON pgtap_codes (cosid_decode_immutable(code, '[{"radix": 36}, {"prefix": "K"}]'))$$,
	'cosid_decode_immutable in an index expression');
ANALYZE pgtap_codes;
SET LOCAL enable_seqscan = off;
SELECT ok((SELECT count(*) FROM (SELECT 1 FROM pgtap_codes
			WHERE cosid_decode_immutable(code, '[{"radix": 36}, {"prefix": "K"}]') BETWEEN 100 AND 199) s) = 100,
	'a range of numbers through the index: 100 rows');
CREATE FUNCTION pg_temp.plan_of(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	line text;
	plan text := '';
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		plan := plan || line || E'\n';
	END LOOP;
	RETURN plan;
END
$f$;
SELECT matches(pg_temp.plan_of($$SELECT code FROM pgtap_codes WHERE cosid_decode_immutable(code, '[{"radix": 36}, {"prefix": "K"}]') = 42$$),
	'Index (Only )?Scan using pgtap_codes_number', 'the equality is an index scan of the expression index');
RESET enable_seqscan;
SELECT lives_ok($$CREATE TABLE pgtap_tickets (id bigint PRIMARY KEY,
		code text GENERATED ALWAYS AS (cosid_encode_immutable(id, '[{"radix": 62}, {"suffix": "-T"}]')) STORED)$$,
	'cosid_encode_immutable in a generated column');
INSERT INTO pgtap_tickets (id) VALUES (3844);
SELECT is((SELECT code FROM pgtap_tickets), '100-T', 'the generated column holds the text');
SELECT throws_ok($$CREATE TABLE pgtap_bad (id bigint, code text GENERATED ALWAYS AS (cosid_encode_with(id, '[{"radix": 62}]'::jsonb)) STORED)$$,
	'42P17', NULL, 'cosid_encode (STABLE) in a generated column: refused');
SELECT lives_ok($$ALTER TABLE pgtap_codes ADD CONSTRAINT pgtap_codes_positive
		CHECK (cosid_decode_immutable(code, '[{"radix": 36}, {"prefix": "K"}]') > 0)$$,
	'a CHECK constraint with the inline list, checked against the rows');
SELECT throws_ok($$INSERT INTO pgtap_codes VALUES ('K0')$$, '23514', NULL, 'the CHECK refuses number 0');

-- results: the same as the STABLE forms
SELECT is(cosid_encode_immutable(3844, '[{"radix": 62}, {"prefix": "O"}, {"suffix": "!"}]'),
	cosid_encode_with(3844, '[{"radix": 62}, {"prefix": "O"}, {"suffix": "!"}]'::jsonb), 'radix, prefix and suffix: as cosid_encode');
SELECT is(cosid_decode_immutable('O100!', '[{"radix": 62}, {"prefix": "O"}, {"suffix": "!"}]'), 3844::bigint, 'and back');
SELECT is(cosid_encode_immutable(202610270000000042, '[{"grouped": {}}]'),
	cosid_encode_with(202610270000000042, '[{"grouped": {}}]'::jsonb), 'grouped: as cosid_encode');
SELECT is(cosid_encode_immutable(4096000042, '[{"friendly": {"zone": "UTC"}}]'),
	cosid_encode_with(4096000042, '[{"friendly": {"zone": "UTC"}}]'::jsonb), 'friendly in UTC: as cosid_encode');
SET LOCAL TimeZone = 'Pacific/Kiritimati';
SELECT is(cosid_encode_immutable(4096000042, '[{"friendly": {}}]'), '20191224160000976-0576-0042',
	'friendly: UTC whatever the session''s TimeZone');
RESET TimeZone;

-- impure items: 22023, the path and the reason in the detail
SELECT throws_ok($$SELECT cosid_encode_immutable(1, '[{"radix": 62}, {"date-prefix": {"source": "NOW"}}]')$$,
	'22023', 'invalid codec list', 'date-prefix NOW: refused');
CREATE FUNCTION pg_temp.detail(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	d text;
BEGIN
	EXECUTE q;
	RETURN '(no error)';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ' ' || d;
END
$f$;
SELECT matches(pg_temp.detail($$SELECT cosid_encode_immutable(1, '[{"radix": 62}, {"date-prefix": {}}]')$$),
	'^22023 At codec\[1\]\.date-prefix: date-prefix depends on the clock', 'date-prefix (NOW by default): the clock');
SELECT matches(pg_temp.detail($$SELECT cosid_decode_immutable('x', '[{"date-prefix": {"source": "ID_TIME"}}]')$$),
	'^22023 At codec\[0\]\.date-prefix\.source: .*generator''s layout', 'date-prefix ID_TIME: a generator''s layout');
SELECT matches(pg_temp.detail($$SELECT cosid_decode_immutable('x', '[{"friendly": {"zone": "America/New_York"}}]')$$),
	'^22023 At codec\[0\]\.friendly\.zone: friendly in time zone "America/New_York" depends on that zone''s rules',
	'friendly in a zone: its rules');
SELECT matches(pg_temp.detail($$SELECT cosid_encode_immutable(1, '[{"parts-friendly": {"zone": "Asia/Kolkata"}}]')$$),
	'^22023 At codec\[0\]\.parts-friendly\.zone: ', 'parts-friendly in a zone: its rules');
SELECT matches(pg_temp.detail($$SELECT cosid_encode_immutable(1, '[{"custom": {"encode": "pg_catalog.to_hex(bigint)", "decode": "pg_catalog.pg_size_bytes(text)"}}]')$$),
	'^22023 At codec\[0\]\.custom: custom depends on the functions', 'custom, even of IMMUTABLE built-in functions');
SELECT is(pg_temp.detail($$SELECT cosid_encode_with(1, '[{"custom": {"encode": "pg_catalog.to_hex(bigint)", "decode": "pg_catalog.pg_size_bytes(text)"}}]'::jsonb)$$),
	'(no error)', '... which cosid_encode (STABLE) takes');
SELECT throws_ok($$CREATE INDEX ON pgtap_codes (cosid_decode_immutable(code, '[{"friendly": {"zone": "Europe/Berlin"}}]'))$$,
	'22023', 'invalid codec list', 'an index with an impure list on a table with rows: refused at CREATE INDEX');

SELECT * FROM finish();
ROLLBACK;
