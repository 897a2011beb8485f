-- pgTAP: cosid_capacity(name), a generator's limits and when its ids run out,
-- checked for each preset (and an "int" layout, segment generators) against
-- arithmetic done here, independently of the C code: servers 2^node_bits,
-- ids per unit 2^seq_bits, the largest id 2^bits - 1, the end epoch +
-- 2^time_bits units, JavaScript safety at 53 bits.  The server runs with
-- cosid.machine_bits = 10, so the JS_SAFE_* generators (3 node bits) are
-- rows written here by hand, which cosid_capacity shows (issuing would
-- refuse them).  All undone by the ROLLBACK.
BEGIN;
SELECT plan(91);

-- the presets as docs/generators.md gives them
CREATE TEMP TABLE preset (name text, layout text, epoch_ms bigint, unit_ms int, t int, n int, s int);
INSERT INTO preset VALUES
	('cap_sf_ms', 'SNOWFLAKE_MS', 1577203200000, 1, 41, 10, 12),
	('cap_sf_s', 'SNOWFLAKE_S', 1577203200000, 1000, 31, 10, 22),
	('cap_js_ms', 'JS_SAFE_MS', 1577203200000, 1, 41, 3, 9),
	('cap_js_s', 'JS_SAFE_S', 1577203200000, 1000, 31, 3, 19),
	('cap_80', 'COSID_80', 0, 1, 44, 20, 16);

SELECT cosid_define('cap_sf_ms', '{"layout": "SNOWFLAKE_MS"}');
SELECT cosid_define('cap_sf_s', '{"layout": "SNOWFLAKE_S"}');
SELECT cosid_define('cap_80', '{"strategy": "cosid80"}');
-- JS_SAFE_* need cosid.machine_bits <= 3 to be defined: written by hand
SELECT cosid_define('cap_js_ms', '{"layout": "SNOWFLAKE_MS"}');
SELECT cosid_define('cap_js_s', '{"layout": "SNOWFLAKE_S"}');
UPDATE cosid.generator g SET config = jsonb_build_object('layout', p.layout), node_bits = p.n, seq_bits = p.s,
	seq_reset_threshold = (2 ^ (p.s - 1))::bigint - 1
	FROM preset p WHERE g.name = p.name AND p.name LIKE 'cap_js%';

CREATE TEMP TABLE got AS
	SELECT p.*, c.* FROM preset p, LATERAL cosid_capacity(p.name) c;

-- per preset: 16 figures
SELECT is(g.strategy, CASE WHEN g.layout = 'COSID_80' THEN 'cosid80' ELSE 'snowflake' END, g.layout || ': strategy') FROM got g ORDER BY g.name;
SELECT is(g.unit, CASE g.unit_ms WHEN 1 THEN 'ms' ELSE 's' END, g.layout || ': unit') FROM got g ORDER BY g.name;
SELECT is(extract(epoch FROM g.epoch) * 1000, g.epoch_ms::numeric, g.layout || ': epoch') FROM got g ORDER BY g.name;
SELECT is(ARRAY[g.time_bits, g.node_bits, g.seq_bits, g.uncertainty_bits], ARRAY[g.t, g.n, g.s, 0], g.layout || ': bits') FROM got g ORDER BY g.name;
SELECT is(g.servers::numeric, 2::numeric ^ g.n, g.layout || ': servers = 2^node_bits') FROM got g ORDER BY g.name;
SELECT is(g.ids_per_unit_per_server::numeric, 2::numeric ^ g.s, g.layout || ': ids per unit and server') FROM got g ORDER BY g.name;
SELECT is(g.ids_per_second_per_server, 2::numeric ^ g.s * (1000 / g.unit_ms), g.layout || ': ids per second and server') FROM got g ORDER BY g.name;
SELECT is(g.max_value, 2::numeric ^ (g.t + g.n + g.s) - 1, g.layout || ': the largest id') FROM got g ORDER BY g.name;
SELECT is(extract(epoch FROM g.runs_out_at) * 1000, g.epoch_ms + 2::numeric ^ g.t * g.unit_ms,
		  g.layout || ': runs out at epoch + 2^time_bits units') FROM got g ORDER BY g.name;
SELECT ok(abs(g.years_left - ((g.epoch_ms + 2::numeric ^ g.t * g.unit_ms) - extract(epoch FROM now()) * 1000)::float8
			  / (365.2425 * 86400000)) < 1e-6, g.layout || ': years left') FROM got g ORDER BY g.name;
SELECT is(g.js_safe, g.t + g.n + g.s <= 53 AND g.layout <> 'COSID_80', g.layout || ': JavaScript safety') FROM got g ORDER BY g.name;
SELECT is(ARRAY[g.machine_bits::bigint, g.slots], ARRAY[10::bigint, 1024], g.layout || ': this server''s slot bits and slots') FROM got g ORDER BY g.name;
SELECT ok(g.last_value IS NULL AND g.numbers_left IS NULL, g.layout || ': no segment figures') FROM got g ORDER BY g.name;

-- the figures the docs' capacity table gives
SELECT is((SELECT to_char(runs_out_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') FROM got WHERE layout = 'SNOWFLAKE_MS'), '2089-08-30', 'SNOWFLAKE_MS runs out on 2089-08-30');
SELECT is((SELECT to_char(runs_out_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') FROM got WHERE layout = 'SNOWFLAKE_S'), '2088-01-11', 'SNOWFLAKE_S runs out on 2088-01-11');
SELECT is((SELECT to_char(runs_out_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') FROM got WHERE layout = 'COSID_80'), '2527-06-23', 'COSID_80 runs out on 2527-06-23');

-- "int": only the times whose every id fits an int4 count (2^31 / 2^22: 512 s)
SELECT cosid_define('cap_int', '{"layout": "SNOWFLAKE_S", "time-bits": 41, "seq-bits": 12, "int": true}');
SELECT is((SELECT max_value FROM cosid_capacity('cap_int')), 2147483647::numeric, 'int: the largest id is 2^31 - 1');
SELECT is((SELECT runs_out_at - epoch FROM cosid_capacity('cap_int')), interval '512 seconds', 'int: runs out 2^(31 - 22) s after the epoch');
SELECT ok((SELECT js_safe FROM cosid_capacity('cap_int')), 'int: JavaScript-safe');
SELECT ok((SELECT years_left < 0 FROM cosid_capacity('cap_int')), 'int: ran out long ago');

-- uncertainty bits take from the time: 63 - 4 bits left for an id
SELECT cosid_define('cap_unc', '{"layout": "SNOWFLAKE_MS", "time-bits": 37, "uncertainty-bits": 4}');
SELECT is((SELECT ARRAY[uncertainty_bits::numeric, max_value] FROM cosid_capacity('cap_unc')),
		  ARRAY[4, 2::numeric ^ 63 - 1], 'uncertainty bits: counted in the largest id');
SELECT is((SELECT extract(epoch FROM runs_out_at) * 1000 FROM cosid_capacity('cap_unc')),
		  1577203200000 + 2::numeric ^ 37, 'uncertainty bits: runs out at epoch + 2^37 ms');

-- segment generators: their range, and what is left
SELECT cosid_define('cap_seg', '{"strategy": "segment", "step": 10}');
SELECT is((SELECT ARRAY[strategy, unit] FROM cosid_capacity('cap_seg')), ARRAY['segment', NULL], 'segment: strategy, no unit');
SELECT ok((SELECT time_bits IS NULL AND servers IS NULL AND runs_out_at IS NULL AND years_left IS NULL FROM cosid_capacity('cap_seg')),
		  'segment: no time figures');
SELECT is((SELECT max_value FROM cosid_capacity('cap_seg')), 9223372036854775807::numeric, 'segment: the largest number is 2^63 - 1');
SELECT is((SELECT last_value FROM cosid_capacity('cap_seg')), NULL, 'segment: none handed out yet');
SELECT is((SELECT numbers_left FROM cosid_capacity('cap_seg')), 9223372036854775807::numeric, 'segment: all numbers left');
SELECT ok(NOT (SELECT js_safe FROM cosid_capacity('cap_seg')), 'segment: a bigint is not JavaScript-safe');
SELECT setval(sequence, 1000) FROM cosid.generator WHERE name = 'cap_seg';
SELECT is((SELECT last_value FROM cosid_capacity('cap_seg')), 1000::bigint, 'segment: the last number its sequence handed out');
SELECT is((SELECT numbers_left FROM cosid_capacity('cap_seg')), 9223372036854775807::numeric - 1000, 'segment: numbers left above it');
SELECT cosid_define('cap_seg_int', '{"strategy": "segment", "int": true, "start": 5}');
SELECT is((SELECT ARRAY[max_value, numbers_left] FROM cosid_capacity('cap_seg_int')), ARRAY[2147483647, 2147483643]::numeric[],
		  'segment, int, start 5: numbers 5 to 2^31 - 1 left');
SELECT ok((SELECT js_safe FROM cosid_capacity('cap_seg_int')), 'segment, int: JavaScript-safe');
SELECT cosid_define('cap_seg_day', '{"strategy": "segment", "group": "day"}');
SELECT is((SELECT numbers_left FROM cosid_capacity('cap_seg_day')), NULL, 'segment with a group: what is left depends on the period (null)');
SELECT cosid_define('cap_seg_store', '{"strategy": "segment", "distributor": "lease-store"}');
SELECT is((SELECT numbers_left FROM cosid_capacity('cap_seg_store')), NULL, 'lease-store segments: the counter is on the store (null)');

-- errors and the function's labels
SELECT throws_ok($$SELECT * FROM cosid_capacity('cap_nope')$$, '42704', NULL, 'an unknown name: 42704');
SELECT ok((SELECT c IS NULL FROM cosid_capacity(NULL) c), 'STRICT: null in, null out');
SELECT volatility_is('public', 'cosid_capacity', ARRAY['text'], 'stable', 'STABLE');
SELECT is((SELECT proparallel FROM pg_proc WHERE oid = 'cosid_capacity(text)'::regprocedure), 's', 'PARALLEL SAFE');
SELECT lives_ok($$SET LOCAL ROLE pg_database_owner; SELECT * FROM cosid_capacity('cap_seg'); RESET ROLE$$, 'any role may ask');

SELECT * FROM finish();
ROLLBACK;
