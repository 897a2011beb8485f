-- bench/candidates.sql: what bench/run.sh measures.  To benchmark something
-- new, add a row here; anything it needs created first goes in
-- bench/setup.sql, which runs before this file.

-- Per-call cost.  Each expr is timed as
--     SELECT count(<expr>) FROM generate_series(1, N) g
-- and its per-call cost is (its median time - the baseline's) / N.
--   role          'baseline': the row every cost is measured from (exactly one);
--                 'reference': the table gets a "vs <label>" ratio column for it
--   target_ratio  with target_ref (a label): per-call cost must be at most
--                 target_ratio times target_ref's; reported OK or MISSED
INSERT INTO bench_call (label, expr, role, target_ratio, target_ref) VALUES
	('g (baseline)',         'g',                     'baseline',  NULL, NULL),
	('nextval(''bench_seq'')', 'nextval(''bench_seq'')', 'reference', NULL, NULL),
	('gen_random_uuid()',    'gen_random_uuid()',     'reference', NULL, NULL),
	('gen_ulid()',           'gen_ulid()',            NULL,        0.20, 'gen_random_uuid()'),
	('gen_ulid_monotonic()', 'gen_ulid_monotonic()',  NULL,        0.30, 'gen_random_uuid()'),
	('cosid_next (snowflake)', 'cosid_next(''bench_snow'')', NULL,   0.50, 'nextval(''bench_seq'')'),
	('cosid_next (segment)', 'cosid_next(''bench_seg'')', NULL,      0.33, 'nextval(''bench_seq'')'),
	-- to_hex of an id (DESIGN: "per-call cost <= 1 x to_hex(id)'s"): the same
	-- id expression the encoder gets, so neither pays for the other's input
	('to_hex(id)',           'to_hex(g::bigint * 9176500767786)', 'reference', NULL, NULL),
	('cosid_encode radix-62', 'cosid_encode(g::bigint * 9176500767786, ''[{"radix": {"radix": 62}}]'')',
							 NULL, 1.00, 'to_hex(id)'),
	('cosid_decode radix-62', 'cosid_decode(''AzL8n0Y58m7'', ''[{"radix": {"radix": 62}}]''::jsonb)',
							 NULL, 1.00, 'to_hex(id)'),
	('cosid_encode friendly', 'cosid_encode(g::bigint * 9176500767786, ''[{"friendly": {"zone": "Asia/Shanghai"}}]'')',
							 NULL, NULL, NULL),
	('cosid_decode friendly', 'cosid_decode(''20261027153012123-0003-0017'', ''[{"friendly": {"zone": "Asia/Shanghai"}}]''::jsonb)',
							 NULL, NULL, NULL);

-- Primary-key index size.  Each row gets a table
--     CREATE TABLE bench_pk_<n> (id <coltype> PRIMARY KEY DEFAULT <expr>)
-- (no DEFAULT clause when expr is NULL, as for bigserial) filled with
-- BENCH_ROWS rows.  target_mb is per million rows, scaled to BENCH_ROWS;
-- insert_ratio with insert_ref (a label): the insert may take at most
-- insert_ratio times insert_ref's.
INSERT INTO bench_pk (label, coltype, expr, target_mb, insert_ratio, insert_ref) VALUES
	('bigserial',            'bigserial', NULL,                   NULL, NULL, NULL),
	('gen_ulid_monotonic()', 'ulid',      'gen_ulid_monotonic()', 31,   NULL, NULL),
	('gen_ulid()',           'ulid',      'gen_ulid()',           NULL, NULL, NULL),
	('gen_random_uuid()',    'uuid',      'gen_random_uuid()',    NULL, NULL, NULL),
	('cosid_next (snowflake)', 'bigint',  'cosid_next(''bench_snow'')', NULL, 1.0, 'bigserial');

-- Throughput of bulk calls: ids per second against the layout's limit
-- (2^seq-bits ids per millisecond: 4,096,000/s for SNOWFLAKE_MS).
-- expr is a whole query: the select-list form takes ids as they are made;
-- the FROM form materializes them all first (FunctionScan), then counts.
INSERT INTO bench_rate (label, expr, n, limit_per_s, target_share) VALUES
	('cosid_next_many (snowflake), select list', 'SELECT count(x) FROM (SELECT cosid_next_many(''bench_snow'', %s) x) s', 4096000, 4096000, 0.90),
	('cosid_next_many (snowflake), FROM', 'SELECT count(*) FROM cosid_next_many(''bench_snow'', %s)', 4096000, 4096000, NULL);
