--
-- Time-based generators: definitions (good and bad), issuing, pack/unpack,
-- presets, JS-safe rules, alter/drop, ownership, the slot and the stats.
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

-- the slot: manual slot 0 by default, window open and ahead of the clock
SELECT mode, slot, namespace, state, window_end > clock_timestamp() AS window_ahead
FROM cosid_slot();

-- definitions: defaults, presets, overrides
SELECT cosid_define('snow', '{"strategy": "snowflake"}');
SELECT cosid_define('plain', '{}');
SELECT cosid_define('secs', '{"layout": "SNOWFLAKE_S"}');
SELECT cosid_define('token', '{"strategy": "cosid80"}');
SELECT cosid_define('custom', '{"epoch": "2024-01-01T00:00:00Z", "unit": "s", "time-bits": 30,
	"node-bits": 12, "seq-bits": 20, "seq-reset-threshold": 7,
	"clock-regression": {"borrow-up-to": "2ms", "wait-up-to": "500ms"},
	"codec": [{"radix": {"radix": 62}}]}');
SELECT cosid_define('epoch_ms', '{"epoch": 1600000000000, "unit": "MILLIS"}');
SELECT cosid_define('fail', '{"clock-regression": "FAIL"}');
SELECT cosid_define('uncertain', '{"uncertainty-bits": 0}');
SELECT name, strategy, epoch, unit, time_bits, node_bits, seq_bits, seq_reset_threshold,
	   uncertainty_bits, total_bits, js_safe
FROM cosid.generators ORDER BY name;

-- every kind of bad definition: 22023 naming the key and what was expected
SELECT pg_temp.err($$SELECT cosid_define('bad', '[]')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '"snowflake"')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "snowflak"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": 1}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "sequence"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"layout": "SNOWFLAKE"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"layout": "COSID_80"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"layout": "JS_SAFE_MS"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"layout": "JS_SAFE_S"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"epoch": -1}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"epoch": 1.5}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"epoch": "yesterday-ish"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"epoch": "infinity"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"unit": "minutes"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"unit": "s", "epoch": 1577203200001}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"time-bits": 0}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"time-bits": 64}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"time-bits": "41"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"node-bits": 32}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"node-bits": 9}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"seq-bits": 0}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"seq-bits": 63}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"seq-bits": 13}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"seq-reset-threshold": 4096}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"clock-regression": "WAIT"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"clock-regression": 5}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"clock-regression": {"borrow": "5ms"}}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"clock-regression": {"wait-up-to": "2m"}}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"clock-regression": {"borrow-up-to": "-5ms"}}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"codec": {"radix": 62}}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"int": "yes"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"uncertainty-bits": 1}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "cosid80", "int": true}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "cosid80", "uncertainty-bits": 4}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"Strategy": "snowflake"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('', '{}')$$);
SELECT pg_temp.err($$SELECT cosid_define(repeat('x', 64), '{}')$$);
SELECT pg_temp.err($$SELECT cosid_define('snow', '{}')$$);
-- the error's detail and hint, once, as a user sees them
SELECT cosid_define('bad', '{"layout": "JS_SAFE_MS"}');
SELECT cosid_define('snow', '{}');
SELECT count(*) AS nothing_bad_was_stored FROM cosid.generator WHERE name = 'bad';

-- issuing
SELECT cosid_next('snow') < cosid_next('snow') AS increasing;
SELECT (cosid_unpack('snow', cosid_next('snow'))).node AS node_is_slot;
SELECT abs(extract(epoch FROM (cosid_unpack('snow', cosid_next('snow'))).time - clock_timestamp())) < 5 AS time_is_now;
SELECT cosid_next_text('snow') ~ '^[0-9]{18,19}$' AS decimal_text;
SELECT cosid_next_text('token') ~ '^[0-9]{20,25}$' AS cosid80_decimal_text;
SELECT (cosid_unpack_text('token', cosid_next_text('token'))).node AS cosid80_node;
SELECT abs(extract(epoch FROM (cosid_unpack_text('token', cosid_next_text('token'))).time - clock_timestamp())) < 5 AS cosid80_time_is_now;
SELECT pg_temp.err($$SELECT cosid_next('token')$$);
SELECT pg_temp.err($$SELECT cosid_next_int('token')$$);
SELECT pg_temp.err($$SELECT cosid_next_many('token', 3)$$);
SELECT pg_temp.err($$SELECT cosid_unpack('token', 1)$$);
SELECT pg_temp.err($$SELECT cosid_next('nope')$$);
SELECT pg_temp.err($$SELECT cosid_next('')$$);
SELECT cosid_next(NULL) IS NULL AS strict;
-- a call site that names different generators row by row
SELECT count(DISTINCT cosid_next(g)) AS ids FROM (VALUES ('snow'), ('plain'), ('snow'), ('secs')) v(g);

-- many ids at once: distinct, in order, and the same sequence as cosid_next
CREATE TABLE many AS SELECT row_number() OVER () AS n, id FROM cosid_next_many('snow', 50000) id;
SELECT count(*), count(DISTINCT id),
	   count(*) FILTER (WHERE id <= prev) AS not_increasing
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM many) s;
SELECT (SELECT max(id) FROM many) < cosid_next('snow') AS next_is_above;
SELECT count(*) FROM cosid_next_many('snow', 0);
SELECT pg_temp.err($$SELECT cosid_next_many('snow', -1)$$);

-- sequence carries on across units until the threshold: ids mod 4 spread evenly
CREATE TABLE spread AS SELECT cosid_next('snow') AS id FROM generate_series(1, 99999);
SELECT (SELECT count(DISTINCT id) FROM spread) AS distinct_ids,
	   count(*) AS residues,
	   max(c) - min(c) < 99999 / 4 / 50 AS even_within_2_percent
FROM (SELECT id % 4 AS r, count(*) AS c FROM spread GROUP BY 1) s;

-- int: true and cosid_next_int
SELECT cosid_define('small', jsonb_build_object('int', true, 'unit', 's', 'time-bits', 16,
	'node-bits', 10, 'seq-bits', 5,
	'epoch', (floor(extract(epoch FROM now())) * 1000)::bigint - 10000));
SELECT cosid_next_int('small') > 0 AS fits_int4;
SELECT pg_typeof(cosid_next_int('small'));
SELECT cosid_define('big_int', '{"int": true}');
SELECT pg_temp.err($$SELECT cosid_next_int('big_int')$$);
SELECT pg_temp.err($$SELECT cosid_next('big_int')$$);
SELECT pg_temp.err($$SELECT cosid_next_int('snow')$$);

-- uncertainty bits: ids still increase; unpack sees through them
SELECT cosid_define('fuzzy', '{"time-bits": 41, "node-bits": 10, "seq-bits": 8, "uncertainty-bits": 4}');
CREATE TABLE fuzzy AS SELECT n, cosid_next('fuzzy') AS id FROM generate_series(1, 2000) n;
SELECT count(*) FILTER (WHERE id <= prev) AS not_increasing,
	   count(DISTINCT id & 15) > 1 AS low_bits_vary
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM fuzzy) s;
SELECT bool_and((cosid_unpack('fuzzy', id)).node = 0) AS unpack_ok FROM fuzzy;
SELECT total_bits, js_safe FROM cosid.generators WHERE name = 'fuzzy';

-- pack and unpack: exact values
SELECT cosid_pack('snow', '2019-12-24 16:00:00.001+00', 1, 1) AS packed,
	   (1::bigint << 22) | (1 << 12) | 1 AS expected;
SELECT * FROM cosid_unpack('snow', 4198401);
SELECT * FROM cosid_unpack('snow', 9223372036854775807);
SELECT cosid_pack('snow', '2019-12-24 16:00:00+00') AS lowest;
SELECT cosid_pack('secs', '2020-01-01 00:00:00.999+00') = cosid_pack('secs', '2020-01-01 00:00:00+00') AS seconds_truncate;
SELECT * FROM cosid_unpack('custom', cosid_pack('custom', '2025-06-01 12:00:00+00', 4095, 1048575));
SELECT * FROM cosid_unpack('fuzzy', cosid_pack('fuzzy', '2026-01-01 00:00:00+00', 3, 200));
SELECT * FROM cosid_unpack_text('token', '1208925819614629174706175');
SELECT pg_temp.err($$SELECT cosid_pack('snow', '2019-12-24 15:59:59+00')$$);
SELECT pg_temp.err($$SELECT cosid_pack('snow', '2090-01-01 00:00:00+00')$$);
SELECT pg_temp.err($$SELECT cosid_pack('snow', 'infinity')$$);
SELECT pg_temp.err($$SELECT cosid_pack('snow', now(), 1024)$$);
SELECT pg_temp.err($$SELECT cosid_pack('snow', now(), -1)$$);
SELECT pg_temp.err($$SELECT cosid_pack('snow', now(), 0, 4096)$$);
SELECT pg_temp.err($$SELECT cosid_pack('token', now())$$);
SELECT pg_temp.err($$SELECT cosid_unpack('snow', -1)$$);
SELECT pg_temp.err($$SELECT cosid_unpack('custom', 4611686018427387904)$$);
SELECT (cosid_unpack('fuzzy', 9223372036854775807)).seq AS fuzzy_uses_all_63_bits;
SELECT pg_temp.err($$SELECT cosid_unpack_text('snow', 'abc')$$);
SELECT pg_temp.err($$SELECT cosid_unpack_text('snow', '-5')$$);
SELECT pg_temp.err($$SELECT cosid_unpack_text('token', '1208925819614629174706176')$$);
SELECT pg_temp.err($$SELECT cosid_unpack_text('token', '340282366920938463463374607431768211456')$$);
-- range scans by time without a timestamp column
SELECT count(*) = 50000 AS all_made_since_a_minute_ago
FROM many WHERE id >= cosid_pack('snow', now() - interval '1 minute');

-- JS-safe
SELECT cosid_is_js_safe(9007199254740991) AS max_safe, cosid_is_js_safe(9007199254740992) AS past_it,
	   cosid_is_js_safe(-9007199254740991) AS min_safe, cosid_is_js_safe(cosid_next('snow')) AS snowflake_id;

-- alter: what cannot re-issue ids
SELECT cosid_alter('snow', '{"clock-regression": "FAIL", "codec": [{"radix": {"radix": 36}}]}');
SELECT config FROM cosid.generator WHERE name = 'snow';
SELECT cosid_next('snow') AS before_threshold \gset
SELECT cosid_alter('snow', '{"clock-regression": null, "seq-reset-threshold": 100}');
-- a new threshold keeps the generator's state: no sequence starts over
SELECT min(id) > :before_threshold AS still_increasing, count(DISTINCT id) AS distinct_ids
FROM (SELECT cosid_next('snow') AS id FROM generate_series(1, 5000)) s;
SELECT config, seq_reset_threshold FROM cosid.generators WHERE name = 'snow';
SELECT pg_temp.err($$SELECT cosid_alter('snow', '{"epoch": 0}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('snow', '{"unit": "s"}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('snow', '{"layout": "SNOWFLAKE_S"}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('snow', '{"seq-bits": 11, "time-bits": 42}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('snow', '{"strategy": "cosid80"}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('fuzzy', '{"uncertainty-bits": 3}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('snow', '{"time-bits": "x"}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('snow', '[1]')$$);
SELECT pg_temp.err($$SELECT cosid_alter('nope', '{}')$$);
-- a changed definition is seen by the very next call in this session
SELECT cosid_alter('snow', '{"int": true}');
SELECT pg_temp.err($$SELECT cosid_next('snow')$$);
SELECT cosid_alter('snow', '{"int": null}');
SELECT cosid_next('snow') > 0 AS back_to_bigint;
-- and a rolled-back definition is gone again
BEGIN;
SELECT cosid_define('ephemeral', '{}');
SELECT cosid_next('ephemeral') > 0 AS issued_inside;
ROLLBACK;
SELECT pg_temp.err($$SELECT cosid_next('ephemeral')$$);
-- a call reads the row as this transaction has it: defined in the same
-- statement, dropped (also in the same statement), the drop rolled back to
-- a savepoint; a table of the caller's named generator changes nothing
BEGIN;
SELECT cosid_define('intxn', '{}') IS NOT NULL AND cosid_next('intxn') > 0 AS defined_in_statement;
SAVEPOINT s;
SELECT cosid_drop('intxn');
SELECT pg_temp.err($$SELECT cosid_next('intxn')$$);
ROLLBACK TO s;
SELECT cosid_next('intxn') > 0 AS drop_rolled_back;
SELECT pg_temp.err($$SELECT cosid_next('intxn') > 0, cosid_drop('intxn'), cosid_next('intxn') > 0$$);
SELECT cosid_drop('intxn');
SELECT pg_temp.err($$SELECT cosid_next('intxn')$$);
CREATE TEMP TABLE generator (LIKE cosid.generator INCLUDING ALL);
INSERT INTO generator SELECT * FROM cosid.generator WHERE name = 'snow';
UPDATE generator SET name = 'intxn';
SET LOCAL search_path = pg_temp, public;
SELECT pg_temp.err($$SELECT cosid_next('intxn')$$);
ROLLBACK;
SELECT pg_temp.err($$SELECT cosid_next('intxn')$$);

-- drop
SELECT cosid_drop('plain');
SELECT pg_temp.err($$SELECT cosid_drop('plain')$$);
SELECT cosid_drop('plain', if_exists => true);
SELECT pg_temp.err($$SELECT cosid_next('plain')$$);
-- redefined with the same layout, it carries on above what it issued
SELECT cosid_next('secs') AS before_drop \gset
SELECT cosid_drop('secs');
SELECT cosid_define('secs', '{"layout": "SNOWFLAKE_S"}');
SELECT cosid_next('secs') > :before_drop AS carries_on;
-- redefined with another layout whose ids would start below what the name
-- issued on this server: refused (the ids of the two layouts would meet)
SELECT cosid_next('secs') AS before_relayout \gset
SELECT cosid_drop('secs');
SELECT pg_temp.err($$SELECT cosid_define('secs', '{"layout": "SNOWFLAKE_S", "seq-bits": 20, "time-bits": 33}')$$);
SELECT pg_temp.err($$SELECT cosid_define('secs', '{"layout": "SNOWFLAKE_S", "epoch": "2024-01-01T00:00:00Z"}')$$);
-- an earlier epoch: every id of the new layout is above the old ones
SELECT cosid_define('secs', '{"layout": "SNOWFLAKE_S", "epoch": "2000-01-01T00:00:00Z"}');
SELECT cosid_next('secs') > :before_relayout AS above_the_old_layout;
SELECT name, issued FROM cosid.generator_stats WHERE name = 'secs';
-- and the old layout cannot come back: its ids are now all below
SELECT cosid_drop('secs');
SELECT pg_temp.err($$SELECT cosid_define('secs', '{"layout": "SNOWFLAKE_S"}')$$);

-- ownership: defining needs CREATE on the database; changing is for the owner
CREATE ROLE cosid_alice;
CREATE ROLE cosid_bob;
SELECT current_database() AS db \gset
SET ROLE cosid_alice;
SELECT pg_temp.err($$SELECT cosid_define('alices', '{}')$$);
RESET ROLE;
GRANT CREATE ON DATABASE :"db" TO cosid_alice;
SET ROLE cosid_alice;
SELECT cosid_define('alices', '{}');
SELECT cosid_next('alices') > 0 AS alice_issues;
SET ROLE cosid_bob;
SELECT cosid_next('alices') > 0 AS bob_issues;
SELECT pg_temp.err($$SELECT cosid_alter('alices', '{"clock-regression": "FAIL"}')$$);
SELECT pg_temp.err($$SELECT cosid_drop('alices')$$);
SELECT pg_temp.err($$INSERT INTO cosid.generator (name, strategy, config, epoch_ms, unit_ms, time_bits, node_bits, seq_bits, seq_reset_threshold, owner) SELECT 'x', strategy, config, epoch_ms, unit_ms, time_bits, node_bits, seq_bits, seq_reset_threshold, owner FROM cosid.generator LIMIT 1$$);
SELECT pg_temp.err($$UPDATE cosid.generator SET epoch_ms = 0$$);
SELECT pg_temp.err($$DELETE FROM cosid.generator$$);
SELECT count(*) > 0 AS bob_reads_the_catalog FROM cosid.generators;
RESET ROLE;
SELECT owner FROM cosid.generators WHERE name = 'alices';
GRANT cosid_alice TO cosid_bob;
SET ROLE cosid_bob;
SELECT cosid_alter('alices', '{"clock-regression": "FAIL"}');
RESET ROLE;
SELECT cosid_drop('alices');
REVOKE CREATE ON DATABASE :"db" FROM cosid_alice;
DROP ROLE cosid_alice, cosid_bob;

-- the counters
SELECT name, strategy, issued > 0 AS issued, seq_waits >= 0 AS seq_waits,
	   clock_borrows, clock_waits, clock_failures
FROM cosid.generator_stats WHERE name IN ('snow', 'token', 'custom') ORDER BY name;

-- what each generator function promises the planner
SELECT p.oid::regprocedure, p.provolatile, p.proparallel, p.proisstrict, p.prosecdef
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'cosid'
WHERE p.proname NOT LIKE '%ulid%' AND p.proname NOT IN ('min', 'max', 'cosid_encode', 'cosid_decode')
ORDER BY p.oid::regprocedure::text;
