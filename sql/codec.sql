--
-- Codecs: every item, chains, both ways, errors, and round trips.
--
-- every test starts from a fresh install, whatever ran before it
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS cosid CASCADE;
CREATE EXTENSION cosid;
RESET client_min_messages;
SET TimeZone = 'UTC';

CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d text;
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN others THEN
	-- the detail of an invalid definition or codec list names the JSON path
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || SQLERRM ||
		CASE WHEN SQLERRM IN ('invalid generator definition', 'invalid codec list') OR
			SQLERRM LIKE 'cannot change the % of generator %' THEN ' | ' || d ELSE '' END;
END $$;

-- radix: CosId's alphabet 0-9A-Za-z, widest width by default, unpadded
SELECT v, cosid_encode_with(v, '[{"radix": {"radix": 62}}]') AS b62,
	   cosid_encode_with(v, '[{"radix": {"radix": 62, "pad-start": true}}]') AS b62_padded,
	   cosid_encode_with(v, '[{"radix": {"radix": 36}}]') AS b36,
	   cosid_encode_with(v, '[{"radix": 16}]') AS b16_shorthand
FROM unnest(ARRAY[0, 61, 62, 3843, 3844, 9223372036854775807]) v;
SELECT cosid_decode_with(t, '[{"radix": {"radix": 62}}]'::jsonb) AS v
FROM unnest(ARRAY['0', 'z', '10', 'zz', '100', 'AzL8n0Y58m7', '00000000000']) t;
SELECT cosid_decode_with('1Y2P0IJ32E8E7', '[{"radix": {"radix": 36}}]'::jsonb) AS b36_max;
-- (cosid_decode is always the generator form, name first: a codec list where
-- the name belongs gets a hint to call cosid_decode_with, which takes it
-- untyped too)
SELECT cosid_decode('O42-x', '[{"prefix": "O"}]');
SELECT cosid_decode_with('O42-x', '[{"prefix": "O"}]');

-- what radix decode refuses: 22P02 for malformed text, 22003 for overflow
SELECT pg_temp.err($$SELECT cosid_decode_with('AzL8n0Y58m8', '[{"radix": {"radix": 62}}]'::jsonb)$$);
SELECT pg_temp.err($$SELECT cosid_decode_with('-1', '[{"radix": {"radix": 62}}]'::jsonb)$$);
SELECT pg_temp.err($$SELECT cosid_decode_with('+1', '[{"radix": {"radix": 62}}]'::jsonb)$$);
SELECT pg_temp.err($$SELECT cosid_decode_with('1_2', '[{"radix": {"radix": 62}}]'::jsonb)$$);
SELECT pg_temp.err($$SELECT cosid_decode_with('abc', '[{"radix": {"radix": 36}}]'::jsonb)$$);
SELECT pg_temp.err($$SELECT cosid_decode_with('G', '[{"radix": {"radix": 16}}]'::jsonb)$$);
SELECT pg_temp.err($$SELECT cosid_decode_with('000000000001', '[{"radix": {"radix": 62}}]'::jsonb)$$);
SELECT pg_temp.err($$SELECT cosid_decode_with('', '[{"radix": {"radix": 62}}]'::jsonb)$$);
SELECT pg_temp.err($$SELECT cosid_decode_with('12', '[{"radix": {"radix": 62, "width": 11, "pad-start": true}}]'::jsonb)$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(-1, '[{"radix": {"radix": 62}}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(3844, '[{"radix": {"radix": 62, "width": 2}}]')$$);
-- the error as a user sees it, with the item that refused
SELECT cosid_decode_with('A-B', '[{"radix": {"radix": 62}}]'::jsonb);

-- decimal when no item converts; prefix and suffix wrap
SELECT cosid_encode_with(42, '[]') AS plain, cosid_encode_with(42, '[{"prefix": "O"}, {"suffix": "-x"}]') AS wrapped;
SELECT cosid_decode_with('O42-x', '[{"prefix": "O"}, {"suffix": "-x"}]'::jsonb) AS unwrapped;
SELECT pg_temp.err($$SELECT cosid_decode_with('P42-x', '[{"prefix": "O"}, {"suffix": "-x"}]'::jsonb)$$);
SELECT pg_temp.err($$SELECT cosid_decode_with('O42-y', '[{"prefix": "O"}, {"suffix": "-x"}]'::jsonb)$$);
SELECT pg_temp.err($$SELECT cosid_decode_with('O4a2-x', '[{"prefix": "O"}, {"suffix": "-x"}]'::jsonb)$$);
SELECT pg_temp.err($$SELECT cosid_decode_with('9223372036854775808', '[]'::jsonb)$$);

-- the seed's examples: "order" (segment in the seed; the codec is the same)
SELECT cosid_define('trace', '{"strategy": "snowflake", "codec": [{"friendly": {"zone": "Asia/Shanghai"}}]}');
SELECT cosid_encode('trace', cosid_pack('trace', '2026-10-27 07:30:12.123+00', 3, 17)) AS friendly;
SELECT cosid_decode('trace', '20261027153012123-0003-0017') = cosid_pack('trace', '2026-10-27 07:30:12.123+00', 3, 17) AS decodes;
SELECT * FROM cosid_unpack_text('trace', '20261027153012123-0003-0017');
SELECT cosid_next_text('trace') ~ '^[0-9]{17}-0000-[0-9]{4}$' AS next_text_is_friendly;
SELECT pg_temp.err($$SELECT cosid_decode('trace', '20261027153012123-1024-0017')$$);
SELECT pg_temp.err($$SELECT cosid_decode('trace', '20261027153012123-0003-4096')$$);
SELECT pg_temp.err($$SELECT cosid_decode('trace', '20260230153012123-0003-0017')$$);
SELECT cosid_decode('trace', '20260230153012123-0003-0017');
SELECT pg_temp.err($$SELECT cosid_decode('trace', '20261027153012123-003-0017')$$);
SELECT pg_temp.err($$SELECT cosid_decode('trace', '2026102715301212-0003-0017')$$);
SELECT pg_temp.err($$SELECT cosid_decode('trace', '20191224235959999-0000-0000')$$);
SELECT cosid_encode_with(cosid_pack('trace', '2026-10-27 07:30:12.123+00', 3, 17),
	'[{"friendly": {"zone": "Asia/Shanghai", "pad-start": false}}]') AS unpadded;
SELECT cosid_encode_with(cosid_pack('trace', '2026-10-27 07:30:12+00', 3, 17),
	'[{"friendly": {"layout": "SNOWFLAKE_S"}}]') AS friendly_seconds_adhoc;

SELECT cosid_define('order', '{"strategy": "snowflake", "codec": [{"radix": {"radix": 62}},
	{"date-prefix": {"pattern": "yyMMdd", "delimiter": "", "source": "NOW"}}, {"prefix": "O"}]}');
SELECT cosid_encode('order', 3844) ~ ('^O' || to_char(now(), 'YYMMDD') || '100$') AS order_text;
SELECT cosid_decode('order', 'O261027qZ') AS seed_order_decodes;
SELECT cosid_decode('order', cosid_next_text('order')) > 0 AS round_trip;
SELECT pg_temp.err($$SELECT cosid_decode('order', 'O2610qZ')$$);
SELECT pg_temp.err($$SELECT cosid_decode('order', 'O261327qZ')$$);
SELECT pg_temp.err($$SELECT cosid_decode('order', 'X261027qZ')$$);

-- date-prefix from the id's own time (the default for time-based generators)
SELECT cosid_define('dated', '{"codec": [{"radix": {"radix": 36}},
	{"date-prefix": {"pattern": "yyyyMMdd", "delimiter": "-", "zone": "Asia/Tokyo"}}]}');
SELECT cosid_encode('dated', cosid_pack('dated', '2026-10-27 16:00:00+00')) AS tokyo_is_next_day;
SELECT cosid_decode('dated', cosid_encode('dated', cosid_pack('dated', '2026-10-27 16:00:00+00')))
	= cosid_pack('dated', '2026-10-27 16:00:00+00') AS decodes;
SELECT pg_temp.err($$SELECT cosid_decode('dated', '20261027-' || cosid_encode_with(cosid_pack('dated', '2026-10-27 16:00:00+00'), '[{"radix": {"radix": 36}}]'))$$);
SELECT pg_temp.err($$SELECT cosid_decode('dated', '2026-1028-XYZ')$$);

-- cosid80: radix and friendly mean the parts forms; fixed width, sorts like the id
SELECT cosid_define('token', '{"strategy": "cosid80", "codec": [{"radix": {"radix": 62}}]}');
SELECT length(cosid_next_text('token')) AS parts_radix_length;
CREATE TABLE tokens AS SELECT n, cosid_next_text('token') AS t FROM generate_series(1, 20000) n;
SELECT count(DISTINCT t) AS distinct_tokens,
	   count(*) FILTER (WHERE t COLLATE "C" <= prev COLLATE "C") AS not_sorted_like_ids
FROM (SELECT t, lag(t) OVER (ORDER BY n) AS prev FROM tokens) s;
SELECT bool_and((cosid_unpack_text('token', t)).node = 0) AS unpack_ok,
	   bool_and(abs(extract(epoch FROM (cosid_unpack_text('token', t)).time - now())) < 60) AS times_ok
FROM tokens;
SELECT * FROM cosid_unpack_text('token', '000000000000000');
-- the largest parts, each at the width of its bits: 8 + 4 + 3 characters
SELECT cosid_encode_with(17592186044415, '[{"radix": {"radix": 62, "width": 8, "pad-start": true}}]')
	|| cosid_encode_with(1048575, '[{"radix": {"radix": 62, "width": 4, "pad-start": true}}]')
	|| cosid_encode_with(65535, '[{"radix": {"radix": 62, "width": 3, "pad-start": true}}]') AS max_text \gset
SELECT :'max_text' AS max_text, (cosid_unpack_text('token', :'max_text')).*;
-- one past the largest time, node, sequence: 22003
SELECT pg_temp.err(format($$SELECT cosid_unpack_text('token', %L)$$,
	cosid_encode_with(17592186044416, '[{"radix": {"radix": 62, "width": 8, "pad-start": true}}]') || right(:'max_text', 7)));
SELECT pg_temp.err(format($$SELECT cosid_unpack_text('token', %L)$$,
	left(:'max_text', 8) || cosid_encode_with(1048576, '[{"radix": {"radix": 62, "width": 4, "pad-start": true}}]') || right(:'max_text', 3)));
SELECT pg_temp.err(format($$SELECT cosid_unpack_text('token', %L)$$,
	left(:'max_text', 12) || cosid_encode_with(65536, '[{"radix": {"radix": 62, "width": 3, "pad-start": true}}]')));
SELECT pg_temp.err(format($$SELECT cosid_unpack_text('token', %L)$$, left(:'max_text', 14)));
SELECT cosid_unpack_text('token', 'zzzzzzzz00000000');
SELECT cosid_unpack_text('token', 'zzzzzzzz0000000');
SELECT pg_temp.err($$SELECT cosid_encode('token', 1)$$);
SELECT cosid_define('token_f', '{"strategy": "cosid80", "codec": [{"friendly": {}}]}');
SELECT cosid_next_text('token_f') ~ '^[0-9]{17}-0000000-[0-9]{5}$' AS parts_friendly;

-- custom: two SQL functions, resolved and checked when the codec is defined
CREATE FUNCTION hexid(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT to_hex($1) $$;
CREATE FUNCTION unhexid(text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS $$ SELECT ('x' || lpad($1, 16, '0'))::bit(64)::bigint $$;
SELECT cosid_encode_with(255, '[{"custom": {"encode": "hexid(bigint)", "decode": "unhexid(text)"}}, {"prefix": "h"}]') AS custom;
SELECT cosid_decode_with('hff', '[{"custom": {"encode": "hexid(bigint)", "decode": "unhexid(text)"}}, {"prefix": "h"}]'::jsonb) AS custom_back;
CREATE FUNCTION volatile_hex(bigint) RETURNS text LANGUAGE sql VOLATILE AS $$ SELECT to_hex($1) $$;
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"custom": {"encode": "nosuch(bigint)", "decode": "unhexid(text)"}}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"custom": {"encode": "unhexid(text)", "decode": "unhexid(text)"}}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"custom": {"encode": "volatile_hex(bigint)", "decode": "unhexid(text)"}}]')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"codec": [{"custom": {"encode": "hexid(bigint)"}}]}')$$);

-- grouped (periodic segments): the period, then the value
SELECT cosid_encode_with(20261027 * 10000000000::bigint + 42,
	'[{"grouped": {"delimiter": "-", "value": {"radix": {"radix": 10, "width": 6, "pad-start": true}}}}]') AS day_grouped;
SELECT cosid_decode_with('20261027-000042',
	'[{"grouped": {"delimiter": "-", "value": {"radix": {"radix": 10, "width": 6, "pad-start": true}}}}]'::jsonb)
	= 20261027 * 10000000000::bigint + 42 AS decodes;
SELECT cosid_encode_with(202610 * 1000000000000::bigint + 7, '[{"grouped": {"group": "month"}}]') AS month_grouped;
SELECT pg_temp.err($$SELECT cosid_encode_with(42, '[{"grouped": {}}]')$$);
SELECT pg_temp.err($$SELECT cosid_decode_with('20261327-42', '[{"grouped": {}}]'::jsonb)$$);
-- impossible days of real months are malformed too (22P02), with the reason
SELECT cosid_decode_with('20260231-42', '[{"grouped": {}}]'::jsonb);
SELECT pg_temp.err($$SELECT cosid_decode_with('20260229-42', '[{"grouped": {}}]'::jsonb)$$);
SELECT pg_temp.err($$SELECT cosid_decode_with('19000229-42', '[{"grouped": {}}]'::jsonb)$$);
SELECT pg_temp.err($$SELECT cosid_decode_with('20260431-42', '[{"grouped": {}}]'::jsonb)$$);
SELECT cosid_decode_with('202613-42', '[{"grouped": {"group": "month"}}]'::jsonb);
SELECT cosid_decode_with('20240229-42', '[{"grouped": {}}]'::jsonb) AS leap_day,
	   cosid_decode_with('20000229-42', '[{"grouped": {}}]'::jsonb) AS leap_century,
	   cosid_decode_with('20260430-42', '[{"grouped": {}}]'::jsonb) AS april_30;
-- a year before 1000 keeps the pattern's width, so that the text decodes back
-- (even with no delimiter, where the value's digits follow at once)
SELECT cosid_encode_with(2 * 100000000000000::bigint + 52202114622678, '[{"grouped": {"group": "year", "delimiter": ""}}]') AS year_2,
	   cosid_decode_with('000252202114622678', '[{"grouped": {"group": "year", "delimiter": ""}}]'::jsonb) AS decodes,
	   cosid_encode_with(10215 * 10000000000::bigint + 42, '[{"grouped": {}}]') AS day_in_year_1;
-- and a number whose period is no date has no grouped text (22003)
SELECT cosid_encode_with(20260231 * 10000000000::bigint + 42, '[{"grouped": {}}]');
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"codec": [{"grouped": {}}]}')$$);

-- a custom decode function may return any bigint: cosid_unpack checks it
SELECT cosid_define('short_hex', '{"unit": "s", "time-bits": 30, "node-bits": 10, "seq-bits": 12,
	"codec": [{"custom": {"encode": "hexid(bigint)", "decode": "unhexid(text)"}}]}');
SELECT * FROM cosid_unpack_text('short_hex', 'fffffffffffff');
SELECT * FROM cosid_unpack_text('short_hex', '10000000000000');
SELECT pg_temp.err($$SELECT cosid_unpack_text('short_hex', 'ffffffffffffffff')$$);

-- a generator's custom functions are bound by OID when its codec is defined
-- (1.3), never looked up by name again: once one is dropped its codec fails
-- (55000), also after a function of that name is created again, until
-- cosid_alter binds the codec again; a function renamed is not the one the
-- codec names (55000)
CREATE FUNCTION bhex(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 'b' || to_hex($1) $$;
CREATE FUNCTION bunhex(text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS $$ SELECT ('x' || lpad(substr($1, 2), 16, '0'))::bit(64)::bigint $$;
SELECT cosid_define('bound_hex', '{"codec": [{"custom": {"encode": "bhex(bigint)", "decode": "bunhex(text)"}}]}');
SELECT codec_functions = ARRAY['bhex(bigint)'::regprocedure, 'bunhex(text)'::regprocedure]::oid[] AS bound_by_oid,
	   config #>> '{codec,0,custom,encode}' AS encode_name
FROM cosid.generator WHERE name = 'bound_hex';
SELECT cosid_encode('bound_hex', 255) AS bound, cosid_decode('bound_hex', 'bff') AS bound_back;
DROP FUNCTION bhex(bigint);
SELECT pg_temp.err($$SELECT cosid_encode('bound_hex', 255)$$) AS dropped;
CREATE FUNCTION bhex(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 'b' || to_hex($1) $$;
SELECT pg_temp.err($$SELECT cosid_encode('bound_hex', 255)$$) AS created_again;
SELECT pg_temp.err($$SELECT cosid_alter('bound_hex', '{"seq-reset-threshold": 100}')$$) AS alter_keeps_them;
SELECT cosid_alter('bound_hex', '{"codec": [{"custom": {"encode": "bhex(bigint)", "decode": "bunhex(text)"}}]}');
SELECT cosid_encode('bound_hex', 255) AS bound_again,
	   (SELECT codec_functions[1] = 'bhex(bigint)'::regprocedure FROM cosid.generator WHERE name = 'bound_hex') AS new_oid;
ALTER FUNCTION bunhex(text) RENAME TO bunhex_renamed;
SELECT pg_temp.err($$SELECT cosid_decode('bound_hex', 'bff')$$) AS renamed;
ALTER FUNCTION bunhex_renamed(text) RENAME TO bunhex;
SELECT cosid_decode('bound_hex', 'bff') AS renamed_back;
-- their owner must be the generator's owner or a superuser: whoever owns a
-- function can replace its code (42501 at define, and at use once the owner
-- changed)
CREATE ROLE cosid_fn_owner;
CREATE FUNCTION ohex(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 'b' || to_hex($1) $$;
ALTER FUNCTION ohex(bigint) OWNER TO cosid_fn_owner;
SELECT pg_temp.err($$SELECT cosid_define('owned_hex', '{"codec": [{"custom": {"encode": "ohex(bigint)", "decode": "bunhex(text)"}}]}')$$) AS other_owner;
SELECT pg_temp.err($$SELECT cosid_alter('bound_hex', '{"codec": [{"custom": {"encode": "ohex(bigint)", "decode": "bunhex(text)"}}]}')$$) AS other_owner_alter;
ALTER FUNCTION bunhex(text) OWNER TO cosid_fn_owner;
SELECT pg_temp.err($$SELECT cosid_decode('bound_hex', 'bff')$$) AS owner_changed;
ALTER FUNCTION bunhex(text) OWNER TO CURRENT_USER;
SELECT cosid_decode('bound_hex', 'bff') AS owner_back;
-- an ad hoc list runs its functions as the caller, whoever owns them
SELECT cosid_encode_with(255, '[{"custom": {"encode": "ohex(bigint)", "decode": "bunhex(text)"}}]') AS ad_hoc;
DROP FUNCTION ohex(bigint);
DROP ROLE cosid_fn_owner;

-- CosId compatibility: ids and texts made by CosId's Java code

-- A local time the clocks repeat takes the earlier instant, one they skip
-- moves forward by the gap, as java.time (LocalDateTime.atZone) and so
-- CosId resolve it.  New York, 2024: 01:00-01:59 EDT repeats as EST on
-- 3 November; 02:00-02:59 on 10 March does not exist.
SELECT cosid_define('ny', '{"codec": [{"friendly": {"zone": "America/New_York"}}]}');
SELECT t AS friendly, (cosid_unpack_text('ny', t)).time
FROM unnest(ARRAY['20241103005959999-0000-0000', '20241103010000000-0000-0000',
				  '20241103013000000-0000-0000', '20241103015959999-0000-0000',
				  '20241103020000000-0000-0000', '20240310015959999-0000-0000',
				  '20240310020000000-0000-0000', '20240310023000000-0000-0000',
				  '20240310030000000-0000-0000']) t;
-- both 01:30s (EDT and EST) write the same text, which reads back as the first;
-- 02:30 on 10 March reads as 03:30 EDT and writes as such
SELECT cosid_encode('ny', cosid_pack('ny', '2024-11-03 05:30:00+00')) AS edt,
	   cosid_encode('ny', cosid_pack('ny', '2024-11-03 06:30:00+00')) AS est,
	   cosid_decode('ny', '20241103013000000-0000-0000') = cosid_pack('ny', '2024-11-03 05:30:00+00') AS reads_edt,
	   cosid_encode('ny', cosid_decode('ny', '20240310023000000-0000-0000')) AS gap_moved;
-- east of UTC: Sydney repeats 02:00-02:59 on 7 April 2024 (AEDT first)
SELECT cosid_decode_with('20240407023000000-0000-0000', '[{"friendly": {"zone": "Australia/Sydney"}}]'::jsonb)
	= cosid_pack('trace', '2024-04-06 15:30:00+00') AS sydney_reads_aedt;

-- an id outside its layout has no friendly text (22003), as cosid_decode has no id for it
SELECT cosid_encode_with(9007199254740991, '[{"friendly": {"layout": "JS_SAFE_MS"}}]') AS js_safe_max;
SELECT cosid_decode_with('20890830074735551-7-511', '[{"friendly": {"layout": "JS_SAFE_MS"}}]'::jsonb) AS js_safe_max_back;
SELECT cosid_encode_with(9007199254740992, '[{"friendly": {"layout": "JS_SAFE_MS"}}]');
SELECT pg_temp.err($$SELECT cosid_encode_with(-1, '[{"friendly": {}}]')$$);
SELECT cosid_define('short', '{"unit": "s", "time-bits": 30, "node-bits": 10, "seq-bits": 12, "codec": [{"friendly": {}}]}');
SELECT cosid_encode('short', 4503599627370495) AS short_max;
SELECT cosid_encode('short', 4503599627370496);
SELECT cosid_define('short_dated', '{"unit": "s", "time-bits": 30, "node-bits": 10, "seq-bits": 12,
	"codec": [{"radix": 36}, {"date-prefix": {"pattern": "yyyyMMdd"}}]}');
SELECT cosid_encode('short_dated', 4503599627370495) AS short_dated_max;
SELECT pg_temp.err($$SELECT cosid_encode('short_dated', 4503599627370496)$$);

-- cosid_unpack of an id out of range: 22003 naming the id and the generator.
-- "far" counts 50 bits of seconds, past what a timestamptz holds (294247 AD
-- in milliseconds); "far80" is a cosid80 layout that does the same.
SELECT cosid_define('far', '{"unit": "s", "time-bits": 50, "node-bits": 10, "seq-bits": 3}');
SELECT * FROM cosid_unpack('far', 75544943277301759);
SELECT * FROM cosid_unpack('far', 75544943277301760);
SELECT * FROM cosid_unpack('far', 9223372036854775807);
SELECT pg_temp.err($$SELECT cosid_unpack_text('far', '9223372036854775807')$$);
SELECT * FROM cosid_unpack('short', -1);
SELECT pg_temp.err($$SELECT cosid_unpack('short', 4503599627370496)$$);
SELECT cosid_define('far80', '{"strategy": "cosid80", "unit": "s", "time-bits": 60, "node-bits": 10, "seq-bits": 10}');
SELECT * FROM cosid_unpack_text('far80', '1208925819614629174706175');

-- cosid_pack's range: both ends, the last second of a seconds layout whole
SELECT cosid_pack('trace', '2019-12-24 15:59:59.999+00');
SELECT cosid_pack('short', '2054-01-02 05:37:04+00');
SELECT cosid_pack('short', '2054-01-02 05:37:03.999+00') = 4503599627370496 - 4194304 AS short_last_second;
SELECT cosid_pack('far', '294247-01-10 04:00:54.775+00') = 75544943277301760 - 8192 AS far_last;
SELECT cosid_pack('far', '294247-01-10 04:00:54.776+00');
SELECT cosid_pack('far', '294276-12-31 23:59:59.999999+00');

-- malformed lists: 22023 with the path of the bad key
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '{"radix": 62}')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"radix": 1}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"radix": {"radix": 63}}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"radix": {"radix": 62, "width": 0}}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"radix": {"radix": 62, "pad": true}}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"radix": 62, "prefix": "x"}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"rad1x": 62}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"prefix": "O"}, {"radix": 62}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"radix": 62}, {"friendly": {}}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"friendly": {"zone": "Mars/Olympus"}}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"friendly": {"layout": "SNOWFLAKE"}}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"friendly": {"layout": "COSID_80"}}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"prefix": 5}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"date-prefix": {"pattern": "yyyyMMddQ"}}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"date-prefix": {"pattern": "yyy"}}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"date-prefix": {"source": "LATER"}}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"date-prefix": {"source": "ID_TIME"}}]')$$);
SELECT pg_temp.err($$SELECT cosid_encode_with(1, '[{"parts-radix": 62}]')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"codec": [{"radix": 62}, {"date-prefix": {"source": "NEVER"}}]}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"uncertainty-bits": 2, "time-bits": 39, "codec": [{"friendly": {}}]}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"codec": [{"friendly": {"layout": "SNOWFLAKE_S"}}]}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('trace', '{"codec": [{"radix": 99}]}')$$);
SELECT cosid_define('bad', '{"codec": [{"radix": 62}, {"date-prefix": {"source": "NEVER"}}]}');

-- round trips: decode(encode(x)) = x over 100k generated ids of each strategy
SELECT cosid_define('rt_snow', '{"codec": [{"radix": {"radix": 62, "pad-start": true}}, {"prefix": "S"}]}');
SELECT cosid_define('rt_friendly', '{"codec": [{"friendly": {"zone": "America/New_York"}}, {"suffix": "!"}]}');
SELECT cosid_define('rt_secs', '{"layout": "SNOWFLAKE_S", "codec": [{"friendly": {}}, {"date-prefix": {"pattern": "yyyy"}}]}');
SELECT cosid_define('rt_fuzzy', '{"time-bits": 41, "node-bits": 10, "seq-bits": 8, "uncertainty-bits": 4, "codec": [{"radix": 36}]}');
SELECT g, count(*) AS ids, count(*) FILTER (WHERE cosid_decode(g, cosid_encode(g, id)) = id) AS round_trips
FROM (SELECT g, id FROM unnest(ARRAY['rt_snow', 'rt_friendly', 'rt_secs', 'rt_fuzzy']) g,
	  LATERAL cosid_next_many(g, 100000) id) s
GROUP BY g ORDER BY g;
SELECT count(*) AS ids, count(*) FILTER (WHERE cosid_decode_with(cosid_encode_with(v, c), c) = v) AS round_trips
FROM (SELECT (random() * 9223372036854775807)::bigint AS v FROM generate_series(1, 100000)) s,
	 (VALUES ('[{"radix": {"radix": 62}}]'::jsonb), ('[{"radix": {"radix": 2}}, {"prefix": "b"}]'),
			 ('[{"radix": {"radix": 36, "pad-start": true}}, {"suffix": "Z"}]')) c(c)
GROUP BY c ORDER BY c::text;
SELECT count(*) FILTER (WHERE (cosid_unpack_text('token', t)).seq IS NOT NULL) AS cosid80_decoded
FROM tokens;

-- what each codec function promises the planner
SELECT p.oid::regprocedure, p.provolatile, p.proparallel, p.proisstrict
FROM pg_proc p WHERE proname IN ('cosid_encode', 'cosid_decode') ORDER BY p.oid::regprocedure::text;

-- Parameters of no declared type, as drivers send them (1.3): each name has
-- one form, so the server resolves every call the one way.
SELECT cosid_define('untyped', '{"strategy": "snowflake", "codec": [{"radix": {"radix": 62}}, {"prefix": "U"}]}');
PREPARE enc AS SELECT cosid_encode($1, $2);
PREPARE dec AS SELECT cosid_decode($1, $2);
PREPARE unp AS SELECT node, seq FROM cosid_unpack($1, $2);
PREPARE enc_with AS SELECT cosid_encode_with($1, $2);
PREPARE dec_with AS SELECT cosid_decode_with($1, $2);
PREPARE unp_text AS SELECT node, seq FROM cosid_unpack_text($1, $2);
SELECT name, parameter_types FROM pg_prepared_statements ORDER BY name;
EXECUTE enc('untyped', '917650076778627073');
EXECUTE dec('untyped', 'U15mqWCbEkC1');
EXECUTE unp('untyped', '917650076778627073');
EXECUTE enc_with('917650076778627073', '[{"radix": {"radix": 62}}, {"prefix": "U"}]');
EXECUTE dec_with('U15mqWCbEkC1', '[{"radix": {"radix": 62}}, {"prefix": "U"}]');
EXECUTE unp_text('untyped', 'U15mqWCbEkC1');
DEALLOCATE ALL;
