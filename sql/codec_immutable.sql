--
-- Immutable codecs: cosid_encode_immutable and cosid_decode_immutable in
-- index expressions, generated columns and CHECK constraints; the same
-- results as cosid_encode and cosid_decode for every list they accept; every
-- item whose text depends on more than the input refused; hostile input.
--
-- every test starts from a fresh install, whatever ran before it
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS cosid CASCADE;
CREATE EXTENSION cosid;
RESET client_min_messages;
SET TimeZone = 'UTC';

-- SQLSTATE, message, and the detail and hint of an invalid codec list
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d text;
	h text;
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN others THEN
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT;
	RETURN SQLSTATE || ': ' || SQLERRM ||
		CASE WHEN SQLERRM = 'invalid codec list' THEN ' | ' || d ELSE '' END;
END $$;

-- ---------- the functions ----------
SELECT p.oid::regprocedure AS function, p.provolatile AS volatility, p.proisstrict AS strict,
	   p.proparallel AS parallel
FROM pg_proc p
WHERE p.proname IN ('cosid_encode', 'cosid_decode', 'cosid_encode_immutable', 'cosid_decode_immutable')
ORDER BY p.proname, p.oid::regprocedure::text;

-- what the issue reports: the STABLE forms are refused in an index expression
CREATE TABLE codes (code text PRIMARY KEY, what text);
CREATE INDEX ON codes (cosid_decode_with(code, '[{"radix": 62}]'::jsonb));
DROP TABLE codes;

-- two untyped literals resolve (there is no (name, text) form to prefer)
SELECT cosid_encode_immutable(3844, '[{"radix": 62}, {"prefix": "O"}]') AS encoded,
	   cosid_decode_immutable('O100', '[{"radix": 62}, {"prefix": "O"}]') AS decoded;
-- STRICT: a NULL in, NULL out (the list is not bound, nor checked)
SELECT cosid_encode_immutable(NULL, '[{"radix": 62}]') IS NULL AS null_id,
	   cosid_decode_immutable(NULL, '[{"radix": 62}]') IS NULL AS null_text,
	   cosid_decode_immutable('1', NULL) IS NULL AS null_list;

-- ---------- every item whose text depends on more than the input: refused ----------
-- (the first such item in list order, with its JSON path and why)
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, '[{"radix": 62}, {"date-prefix": {}}]')$$) AS date_prefix_default_now;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, '[{"date-prefix": {"source": "NOW", "zone": "UTC"}}]')$$) AS date_prefix_now;
SELECT pg_temp.err($$SELECT cosid_decode_immutable('x', '[{"date-prefix": {"source": "ID_TIME"}}]')$$) AS date_prefix_id_time;
SELECT pg_temp.err($$SELECT cosid_decode_immutable('x', '[{"radix": 36}, {"prefix": "a"}, {"date-prefix": {"pattern": "yyMM", "zone": "Asia/Shanghai"}}]')$$) AS date_prefix_zone;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, '[{"friendly": {"zone": "Asia/Shanghai"}}]')$$) AS friendly_zone;
SELECT pg_temp.err($$SELECT cosid_decode_immutable('x', '[{"friendly": {"zone": "Europe/Paris", "pad-start": false}}, {"suffix": "!"}]')$$) AS friendly_zone_decode;
-- only UTC itself: any other name is a file of the time zone database
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, '[{"friendly": {"zone": "Etc/UTC"}}]')$$) AS friendly_etc_utc;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, '[{"friendly": {"zone": "GMT"}}]')$$) AS friendly_gmt;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, '[{"parts-friendly": {"zone": "Asia/Tokyo"}}]')$$) AS parts_friendly_zone;
-- parts-radix and parts-friendly in UTC: for cosid80 generators only, as ad hoc everywhere
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, '[{"parts-friendly": {}}]')$$) AS parts_friendly_utc;
SELECT pg_temp.err($$SELECT cosid_decode_immutable('1', '[{"parts-radix": 62}]')$$) AS parts_radix;
-- custom: refused even with IMMUTABLE functions (they go into the expression directly)
CREATE FUNCTION hexid(bigint) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$ SELECT to_hex($1) $$;
CREATE FUNCTION unhexid(text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$ SELECT ('x' || lpad($1, 16, '0'))::bit(64)::bigint $$;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(255, '[{"custom": {"encode": "hexid(bigint)", "decode": "unhexid(text)"}}]')$$) AS custom;
SELECT pg_temp.err($$SELECT cosid_decode_immutable('h-ff', '[{"custom": {"encode": "public.hexid(bigint)", "decode": "public.unhexid(text)"}}, {"prefix": "h-"}]')$$) AS custom_qualified;
-- ... while the STABLE forms take every one of these lists
SELECT cosid_encode_with(255, '[{"custom": {"encode": "hexid(bigint)", "decode": "unhexid(text)"}}]') AS stable_custom,
	   cosid_encode_with(0, '[{"friendly": {"zone": "Asia/Shanghai"}}]') AS stable_friendly_zone,
	   cosid_encode_with(3844, '[{"radix": 62}, {"date-prefix": {}}]') ~ '^[0-9]{8}100$' AS stable_date_prefix;
DROP FUNCTION hexid(bigint), unhexid(text);
-- the refusal as a user sees it, with the hint
SELECT cosid_encode_immutable(1, '[{"radix": 62}, {"date-prefix": {"pattern": "yyMMdd"}}, {"prefix": "O"}]');
-- a malformed list keeps the errors of cosid_encode
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, '[{"radix": 63}]')$$) AS bad_radix;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, '[{"prefix": "O"}, {"radix": 62}]')$$) AS converter_not_first;
SELECT pg_temp.err($$SELECT cosid_decode_immutable('1', '[{"radix": 62, "prefix": "O"}]')$$) AS two_keys;
SELECT pg_temp.err($$SELECT cosid_decode_immutable('1', '[{"friendly": {"zone": "Mars/Olympus"}}]')$$) AS unknown_zone_name;

-- ---------- the same results as cosid_encode and cosid_decode ----------
-- Every accepted list below, on every id below, gives the same outcome both
-- ways (the text, or the same error), and so does decoding every text that
-- came out, and damaged copies of it.  TimeZone is not UTC here: a UTC
-- friendly item must not turn into the session's zone.
SET TimeZone = 'America/Sao_Paulo';
CREATE TEMP TABLE lists (n int PRIMARY KEY, codec jsonb);
INSERT INTO lists VALUES
	(1, '[]'),
	(2, '[{"radix": 62}]'),
	(3, '[{"radix": {"radix": 62, "pad-start": true}}]'),
	(4, '[{"radix": {"radix": 36, "width": 13}}]'),
	(5, '[{"radix": {"radix": 2}}]'),
	(6, '[{"radix": {"radix": 16, "width": 4, "pad-start": true}}]'),
	(7, '[{"prefix": "O"}]'),
	(8, '[{"radix": 62}, {"prefix": "O"}, {"suffix": "!"}]'),
	(9, '[{"suffix": ""}, {"prefix": "ab"}, {"prefix": "é-"}]'),
	(10, '[{"friendly": {}}]'),
	(11, '[{"friendly": {"zone": "UTC", "pad-start": false}}]'),
	(12, '[{"friendly": {"zone": "utc", "layout": "SNOWFLAKE_S"}}]'),
	(13, '[{"friendly": {"layout": "JS_SAFE_MS"}}, {"prefix": "T-"}]'),
	(14, '[{"friendly": {"layout": "JS_SAFE_S", "pad-start": false}}]'),
	(15, '[{"grouped": {}}]'),
	(16, '[{"grouped": {"group": "month", "delimiter": "/", "value": {"radix": {"radix": 36, "width": 8, "pad-start": true}}}}]'),
	(17, '[{"grouped": {"group": "year", "delimiter": ""}}, {"suffix": "y"}]');

CREATE TEMP TABLE ids (id bigint PRIMARY KEY);
INSERT INTO ids
SELECT DISTINCT x FROM (
	SELECT unnest(ARRAY[0, 1, 61, 62, 3843, 3844, 4095, 4096, 65535, 65536,
		9223372036854775807, 9223372036854775806, -1, -9223372036854775808,
		202610270000000042, 202602290000000001, 202402290000000001, 202612000000000007,
		202612002176782335, 202612002176782336, 202600000000000005, 99991231999999999,
		1000101, 10101, 99991231, 1]::bigint[]) AS x
	UNION ALL
	-- a hash spread over all 64 bits, and over 31, 41, 53 and 62 bits
	SELECT h >> s FROM (SELECT ('x' || substr(md5(i::text), 1, 16))::bit(64)::bigint AS h
						FROM generate_series(1, 60) i) r,
		   unnest(ARRAY[0, 33, 23, 11, 2]) s
	UNION ALL
	-- periods of every group: days, months and years, with small and large values
	SELECT to_char(date '1970-01-01' + i * 997, 'YYYYMMDD')::bigint * 10000000000 + i * 7
	FROM generate_series(0, 40) i
	UNION ALL
	SELECT to_char(date '2001-01-01' + i * 160, 'YYYYMM')::bigint * 1000000000000 + i * 2821109907455 / 40
	FROM generate_series(0, 40) i
	UNION ALL
	SELECT (1900 + i * 3)::bigint * 100000000000000 + i * 99
	FROM generate_series(0, 30) i) s;

-- outcome: the result as text, or the error
CREATE FUNCTION pg_temp.enc(imm boolean, id bigint, codec jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	IF imm THEN
		RETURN cosid_encode_immutable(id, codec);
	END IF;
	RETURN cosid_encode_with(id, codec);
EXCEPTION WHEN others THEN
	RETURN 'ERROR ' || SQLSTATE || ' ' || SQLERRM;
END $$;
CREATE FUNCTION pg_temp.dec(imm boolean, txt text, codec jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	IF imm THEN
		RETURN cosid_decode_immutable(txt, codec);
	END IF;
	RETURN cosid_decode_with(txt, codec);
EXCEPTION WHEN others THEN
	RETURN 'ERROR ' || SQLSTATE || ' ' || SQLERRM;
END $$;

CREATE TEMP TABLE encoded AS
SELECT l.n, i.id, pg_temp.enc(true, i.id, l.codec) AS imm, pg_temp.enc(false, i.id, l.codec) AS stable
FROM lists l, ids i;
-- per list: how many ids encode and how many are refused, and any difference
SELECT n, count(*) FILTER (WHERE stable NOT LIKE 'ERROR%') AS texts,
	   count(*) FILTER (WHERE stable LIKE 'ERROR%') AS errors,
	   count(*) FILTER (WHERE imm IS DISTINCT FROM stable) AS different
FROM encoded GROUP BY n ORDER BY n;

-- decoding: every text, and damaged copies (a character changed, one
-- dropped, one added, upper case, empty)
CREATE TEMP TABLE texts AS
SELECT DISTINCT e.n, t.txt
FROM encoded e,
	 LATERAL (VALUES (e.stable),
		 (overlay(e.stable PLACING '~' FROM 1 + length(e.stable) / 2 FOR 1)),
		 (left(e.stable, -1)), (substr(e.stable, 2)), (e.stable || '0'), ('0' || e.stable),
		 (upper(e.stable)), ('')) t(txt)
WHERE e.stable NOT LIKE 'ERROR%';
CREATE TEMP TABLE decoded AS
SELECT t.n, t.txt, pg_temp.dec(true, t.txt, l.codec) AS imm, pg_temp.dec(false, t.txt, l.codec) AS stable
FROM texts t JOIN lists l USING (n);
SELECT n, count(*) FILTER (WHERE stable NOT LIKE 'ERROR%') AS numbers,
	   count(*) FILTER (WHERE stable LIKE 'ERROR%') AS errors,
	   count(*) FILTER (WHERE imm IS DISTINCT FROM stable) AS different
FROM decoded GROUP BY n ORDER BY n;
-- and every text of an id decodes back to it (ids are not negative: a
-- decimal text with a sign is refused, as by cosid_decode)
SELECT count(*) AS round_trips, count(*) FILTER (WHERE d.imm <> e.id::text) AS wrong
FROM encoded e JOIN decoded d ON d.n = e.n AND d.txt = e.stable
WHERE e.stable NOT LIKE 'ERROR%' AND e.id >= 0;

-- the same with the list a constant of the call (bound once, the fast radix
-- path), in one statement, in other sessions' settings
SET DateStyle = 'SQL, DMY';
SET search_path = pg_catalog, public;
SELECT count(*) AS ids,
	   count(*) FILTER (WHERE cosid_encode_immutable(id, '[{"radix": 62}]')
						IS DISTINCT FROM cosid_encode_with(id, '[{"radix": 62}]'::jsonb)) AS radix_different,
	   count(*) FILTER (WHERE cosid_decode_immutable(cosid_encode_with(id, '[{"radix": 62}]'::jsonb), '[{"radix": 62}]') <> id) AS radix_wrong,
	   count(*) FILTER (WHERE cosid_encode_immutable(id, '[{"friendly": {}}, {"suffix": "Z"}]')
						IS DISTINCT FROM cosid_encode_with(id, '[{"friendly": {}}, {"suffix": "Z"}]'::jsonb)) AS friendly_different,
	   count(*) FILTER (WHERE cosid_decode_immutable(cosid_encode_with(id, '[{"friendly": {}}]'::jsonb), '[{"friendly": {}}]') <> id) AS friendly_wrong
FROM ids WHERE id >= 0;
RESET DateStyle;
RESET search_path;
-- friendly text of a known instant (CosId's epoch is 2019-12-24 16:00 UTC),
-- whatever the session's zone
SELECT cosid_encode_immutable(((extract(epoch FROM timestamptz '2026-10-27 07:30:12.123+00') * 1000 - 1577203200000)::bigint << 22) | (3 << 12) | 17,
	'[{"friendly": {}}]') AS friendly_utc;
SELECT cosid_decode_immutable('20261027073012123-0003-0017', '[{"friendly": {}}]') =
	   (((extract(epoch FROM timestamptz '2026-10-27 07:30:12.123+00') * 1000 - 1577203200000)::bigint << 22) | (3 << 12) | 17) AS decodes;
-- the edges of a text form: years 1 to 9999 and before the epoch
SELECT pg_temp.err($$SELECT cosid_decode_immutable('00010101000000000-0000-0000', '[{"friendly": {}}]')$$) AS before_epoch;
SELECT pg_temp.err($$SELECT cosid_decode_immutable('20100229000000000-0000-0000', '[{"friendly": {}}]')$$) AS not_a_date;
SET TimeZone = 'UTC';

-- ---------- a table keyed by its text codes, searched by number ----------
CREATE TABLE imm_orders (code text PRIMARY KEY, what text);
INSERT INTO imm_orders
SELECT cosid_encode_immutable(i * 7919, '[{"radix": 62}, {"prefix": "O-"}]'), 'order ' || i
FROM generate_series(1, 5000) i;
CREATE INDEX imm_orders_by_number ON imm_orders (cosid_decode_immutable(code, '[{"radix": 62}, {"prefix": "O-"}]'));
ANALYZE imm_orders;
EXPLAIN (COSTS OFF)
SELECT code, what FROM imm_orders WHERE cosid_decode_immutable(code, '[{"radix": 62}, {"prefix": "O-"}]') = 42 * 7919;
SELECT code, what FROM imm_orders WHERE cosid_decode_immutable(code, '[{"radix": 62}, {"prefix": "O-"}]') = 42 * 7919;
-- the same jsonb written with other spaces is the same constant: the index serves it
EXPLAIN (COSTS OFF)
SELECT code FROM imm_orders WHERE cosid_decode_immutable(code, '[{"radix":62},{"prefix":"O-"}]') = 332598;
-- ranges and order by number, not by text
EXPLAIN (COSTS OFF)
SELECT code FROM imm_orders WHERE cosid_decode_immutable(code, '[{"radix": 62}, {"prefix": "O-"}]') BETWEEN 7919 AND 5 * 7919;
SELECT code FROM imm_orders WHERE cosid_decode_immutable(code, '[{"radix": 62}, {"prefix": "O-"}]') BETWEEN 7919 AND 5 * 7919
ORDER BY cosid_decode_immutable(code, '[{"radix": 62}, {"prefix": "O-"}]');
EXPLAIN (COSTS OFF)
SELECT code FROM imm_orders ORDER BY cosid_decode_immutable(code, '[{"radix": 62}, {"prefix": "O-"}]') DESC LIMIT 3;
SELECT code FROM imm_orders ORDER BY cosid_decode_immutable(code, '[{"radix": 62}, {"prefix": "O-"}]') DESC LIMIT 3;
-- a unique index on the number: two codes of one number cannot both exist
CREATE UNIQUE INDEX imm_orders_number_unique ON imm_orders (cosid_decode_immutable(code, '[{"radix": 62}, {"prefix": "O-"}]'));
INSERT INTO imm_orders VALUES (cosid_encode_immutable(7919, '[{"radix": {"radix": 62, "pad-start": true}}, {"prefix": "O-"}]'), 'padded');
-- every row is found through the index, and the index holds what the rows give
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS found_by_index FROM imm_orders o
WHERE (SELECT count(*) FROM imm_orders x
	   WHERE cosid_decode_immutable(x.code, '[{"radix": 62}, {"prefix": "O-"}]') =
			 cosid_decode_with(o.code, '[{"radix": 62}, {"prefix": "O-"}]'::jsonb)) = 1;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- a text the list does not decode cannot be inserted while the index exists
SELECT pg_temp.err($$INSERT INTO imm_orders VALUES ('X-100', 'foreign')$$) AS undecodable_row;

-- ---------- a table keyed by number, searched by its text ----------
CREATE TABLE imm_events (id bigint PRIMARY KEY, what text);
INSERT INTO imm_events
SELECT ((i * 86400000::bigint * 3 + i) << 22) | ((i % 1024) << 12) | (i % 4096), 'event ' || i
FROM generate_series(1, 3000) i;
CREATE INDEX imm_events_by_text ON imm_events (cosid_encode_immutable(id, '[{"friendly": {}}]'));
ANALYZE imm_events;
EXPLAIN (COSTS OFF)
SELECT id, what FROM imm_events WHERE cosid_encode_immutable(id, '[{"friendly": {}}]') = '20201019160000100-0100-0100';
SELECT id, what FROM imm_events WHERE cosid_encode_immutable(id, '[{"friendly": {}}]') = '20201019160000100-0100-0100';
-- every event of a month, by the text's prefix (this database has the C collation)
EXPLAIN (COSTS OFF)
SELECT count(*) FROM imm_events WHERE cosid_encode_immutable(id, '[{"friendly": {}}]') LIKE '202206%';
SELECT cosid_encode_immutable(id, '[{"friendly": {}}]') AS friendly, what
FROM imm_events WHERE cosid_encode_immutable(id, '[{"friendly": {}}]') LIKE '202206%';

-- ---------- generated columns ----------
CREATE TABLE imm_tickets (
	id bigint PRIMARY KEY,
	code text GENERATED ALWAYS AS (cosid_encode_immutable(id, '[{"radix": 36}, {"prefix": "T"}]')) STORED UNIQUE
);
INSERT INTO imm_tickets (id) VALUES (1), (36), (1295), (46655), (9223372036854775807);
SELECT id, code FROM imm_tickets ORDER BY id;
SELECT pg_temp.err($$INSERT INTO imm_tickets (id) VALUES (-1)$$) AS negative_id;
-- the STABLE form is refused there
SELECT pg_temp.err($$CREATE TABLE t_stable (id bigint, code text GENERATED ALWAYS AS (cosid_encode_with(id, '[{"radix": 36}]'::jsonb)) STORED)$$) AS stable_generated;

-- ---------- CHECK constraints ----------
CREATE TABLE imm_coupons (
	code text PRIMARY KEY
		CONSTRAINT coupon_number CHECK (cosid_decode_immutable(code, '[{"radix": 62}, {"prefix": "C"}]') BETWEEN 1 AND 1000000)
);
INSERT INTO imm_coupons VALUES ('C1'), ('C4C92');
SELECT code, cosid_decode_immutable(code, '[{"radix": 62}, {"prefix": "C"}]') AS number FROM imm_coupons ORDER BY 2;
-- out of range: the constraint; not decodable: the decoder's error
SELECT pg_temp.err($$INSERT INTO imm_coupons VALUES ('C4C93')$$) AS above_range;
SELECT pg_temp.err($$INSERT INTO imm_coupons VALUES ('D1')$$) AS wrong_prefix;
SELECT pg_temp.err($$INSERT INTO imm_coupons VALUES ('C-1')$$) AS not_base62;
-- the constraint keeps the list inline: it needs no generator and no catalog row
SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'coupon_number';

-- ---------- an impure list is refused when the expression first runs ----------
-- on a table with rows: at CREATE INDEX
SELECT pg_temp.err($$CREATE INDEX ON imm_orders (cosid_decode_immutable(code, '[{"radix": 62}, {"date-prefix": {}}]'))$$) AS index_impure;
-- on an empty table, the index is made, and the first row is refused
CREATE TABLE empty_t (code text);
CREATE INDEX empty_t_impure ON empty_t (cosid_decode_immutable(code, '[{"friendly": {"zone": "Asia/Tokyo"}}]'));
SELECT pg_temp.err($$INSERT INTO empty_t VALUES ('20261027153012123-0003-0017')$$) AS first_row;
DROP TABLE empty_t;

-- ---------- hostile input ----------
-- JSON that jsonb itself refuses
SELECT pg_temp.err($$SELECT cosid_decode_immutable('1', '[{"radix": 62}')$$) AS bad_json;
SELECT pg_temp.err($$SELECT cosid_decode_immutable('1', '[{"prefix": "\u0000"}]')$$) AS nul_in_json;
-- JSON that is not a list of items
SELECT pg_temp.err($$SELECT cosid_decode_immutable('1', '{"radix": 62}')$$) AS not_an_array;
SELECT pg_temp.err($$SELECT cosid_decode_immutable('1', 'null')$$) AS json_null;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, '"[]"')$$) AS json_string;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, '[42]')$$) AS not_an_item;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, '[{"nope": 1}]')$$) AS unknown_item;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, '[{"radix": {"radix": 62, "nope": 1}}]')$$) AS unknown_key;
-- huge lists: more items than a list holds, deep nesting, long strings
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, ('[' || repeat('{"prefix": "x"}, ', 16) || '{"prefix": "x"}]')::jsonb)$$) AS items_17;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, ('[' || repeat('{"prefix": "x"}, ', 99999) || '{"prefix": "x"}]')::jsonb)$$) AS items_100000;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, ('[' || repeat('{"date-prefix": {}}, ', 99999) || '{"radix": 62}]')::jsonb)$$) AS impure_items_100000;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, (repeat('[', 5000) || repeat(']', 5000))::jsonb)$$) AS nested_5000;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, ('[{"prefix": {"a": ' || repeat('[', 100) || repeat(']', 100) || '}}]')::jsonb)$$) AS nested_item;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, jsonb_build_array(jsonb_build_object('prefix', repeat('x', 1000000))))$$) AS prefix_1mb;
SELECT pg_temp.err($$SELECT cosid_encode_immutable(1, jsonb_build_array(jsonb_build_object('friendly', jsonb_build_object('zone', repeat('A', 100000)))))$$) AS zone_100kb;
-- 16 items, the most a list holds, each 64 bytes
SELECT length(cosid_encode_immutable(9223372036854775807,
	(SELECT '[{"radix": 2}]'::jsonb || jsonb_agg(jsonb_build_object('prefix', repeat(chr(64 + i), 64)))
	 FROM generate_series(1, 15) i))) AS length_of_16_items;
-- hostile text: long, a prefix that is nearly there, multibyte
SELECT left(pg_temp.err($$SELECT cosid_decode_immutable(repeat('z', 1000000), '[{"radix": 62}]')$$), 60) AS text_1mb;
SELECT pg_temp.err($$SELECT cosid_decode_immutable('O', '[{"radix": 62}, {"prefix": "O-"}]')$$) AS prefix_cut;
SELECT cosid_decode_immutable('é-ab42', '[{"suffix": ""}, {"prefix": "ab"}, {"prefix": "é-"}]') AS multibyte_prefix;
-- a list that differs from row to row (not a constant): bound per change,
-- and an impure one refused when its row comes
SELECT t, cosid_decode_immutable(t, c) AS number
FROM (VALUES ('100', '[{"radix": 62}]'::jsonb), ('O-1', '[{"prefix": "O-"}]'), ('100', '[{"radix": 62}]'),
			 ('20261027-000042', '[{"grouped": {"value": {"radix": {"radix": 10, "width": 6, "pad-start": true}}}}]')) v(t, c);
SELECT pg_temp.err($$SELECT cosid_decode_immutable(t, c)
	FROM (VALUES ('100', '[{"radix": 62}]'::jsonb), ('x', '[{"date-prefix": {}}]')) v(t, c)$$) AS impure_row;

DROP TABLE imm_orders, imm_events, imm_tickets, imm_coupons;
