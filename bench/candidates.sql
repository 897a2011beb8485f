-- bench/candidates.sql: what bench/run.sh measures.  To benchmark something
-- new, add a row here; anything it needs created first goes in
-- bench/setup.sql, which runs before this file.  A row with min_version (a
-- server_version_num, 180000 for PostgreSQL 18) is skipped on older servers,
-- and so are the targets naming it.

-- Per-call cost.  Each expr is timed as
--     SELECT count(<expr>) FROM generate_series(1, N) g
-- and its per-call cost is (its median time - the baseline's) / N.
--   role   'baseline': the row every cost is measured from (exactly one);
--          'reference': the table gets a "vs <label>" ratio column for it
--   chart  drawn in the chart (bench/chart.gp): the generators and what
--          they are compared with, not the codecs
INSERT INTO bench_call (label, expr, role, chart, min_version) VALUES
	('g (baseline)',         'g',                     'baseline',  false, NULL),
	('nextval(''bench_seq'')', 'nextval(''bench_seq'')', 'reference', true, NULL),
	('gen_random_uuid()',    'gen_random_uuid()',     'reference', true,  NULL),
	('uuidv7()',             'uuidv7()',              'reference', true,  180000),
	('gen_ulid()',           'gen_ulid()',            NULL,        true,  NULL),
	('gen_ulid_monotonic()', 'gen_ulid_monotonic()',  NULL,        true,  NULL),
	('gen_uuidv7()',         'gen_uuidv7()',          NULL,        true,  NULL),
	('gen_uuidv7_monotonic()', 'gen_uuidv7_monotonic()', NULL,     true,  NULL),
	-- on bench_wide (15 sequence bits, setup.sql): 32,768 ids a millisecond,
	-- so that the cap of SNOWFLAKE_MS (4,096 a millisecond, 244 ns an id)
	-- is not what is measured; the cap is measured under "throughput"
	('cosid_next (snowflake, 15-bit seq)', 'cosid_next(''bench_wide'')', NULL,  true,  NULL),
	('cosid_next (segment)', 'cosid_next(''bench_seg'')', NULL,      true,  NULL),
	-- to_hex of an id (DESIGN: "per-call cost <= 1 x to_hex(id)'s"): the same
	-- id expression the encoder gets, so neither pays for the other's input
	('to_hex(id)',           'to_hex(g::bigint * 9176500767786)', 'reference', false, NULL),
	('cosid_encode radix-62', 'cosid_encode_with(g::bigint * 9176500767786, ''[{"radix": {"radix": 62}}]'')',
							 NULL, false, NULL),
	('cosid_decode radix-62', 'cosid_decode_with(''AzL8n0Y58m7'', ''[{"radix": {"radix": 62}}]''::jsonb)',
							 NULL, false, NULL),
	('cosid_encode friendly', 'cosid_encode_with(g::bigint * 9176500767786, ''[{"friendly": {"zone": "Asia/Shanghai"}}]'')',
							 NULL, false, NULL),
	('cosid_decode friendly', 'cosid_decode_with(''20261027153012123-0003-0017'', ''[{"friendly": {"zone": "Asia/Shanghai"}}]''::jsonb)',
							 NULL, false, NULL);

-- Per-call targets (DESIGN section 5): label's per-call cost at most ratio
-- times ref's.  Reported OK or MISSED.
INSERT INTO bench_call_target (label, ratio, ref) VALUES
	('gen_ulid()',             0.05, 'gen_random_uuid()'),
	('gen_ulid()',             0.05, 'uuidv7()'),
	('gen_ulid_monotonic()',   0.10, 'gen_random_uuid()'),
	('gen_ulid_monotonic()',   0.10, 'uuidv7()'),
	('gen_uuidv7()',           0.05, 'gen_random_uuid()'),
	('gen_uuidv7()',           0.05, 'uuidv7()'),
	('gen_uuidv7_monotonic()', 0.05, 'gen_random_uuid()'),
	('gen_uuidv7_monotonic()', 0.05, 'uuidv7()'),
	('cosid_next (snowflake, 15-bit seq)', 0.25, 'nextval(''bench_seq'')'),
	('cosid_next (segment)',   0.10, 'nextval(''bench_seq'')'),
	('cosid_encode radix-62',  1.00, 'to_hex(id)'),
	('cosid_decode radix-62',  1.00, 'to_hex(id)');

-- Primary-key index size.  Each row gets a table
--     CREATE TABLE bench_pk_<n> (id <coltype> PRIMARY KEY DEFAULT <expr>)
-- (no DEFAULT clause when expr is NULL, as for bigserial) filled with
-- BENCH_ROWS rows.  target_mb is per million rows, scaled to BENCH_ROWS;
-- size_ref (a label): the index may be no larger than size_ref's;
-- insert_ratio with insert_ref (a label): the insert may take at most
-- insert_ratio times insert_ref's.  cosid: one of cosid's (the chart's colour).
INSERT INTO bench_pk (label, coltype, expr, target_mb, size_ref, insert_ratio, insert_ref, cosid, min_version) VALUES
	('bigserial',            'bigserial', NULL,                   NULL, NULL,       NULL, NULL,        false, NULL),
	('gen_ulid_monotonic()', 'ulid',      'gen_ulid_monotonic()', 31,   'uuidv7()', NULL, NULL,        true,  NULL),
	('gen_ulid()',           'ulid',      'gen_ulid()',           NULL, NULL,       NULL, NULL,        true,  NULL),
	('gen_random_uuid()',    'uuid',      'gen_random_uuid()',    NULL, NULL,       NULL, NULL,        false, NULL),
	('uuidv7()',             'uuid',      'uuidv7()',             NULL, NULL,       NULL, NULL,        false, 180000),
	('gen_uuidv7()',         'uuid',      'gen_uuidv7()',         31,   'uuidv7()', NULL, NULL,        true,  NULL),
	('gen_uuidv7_monotonic()', 'uuid',    'gen_uuidv7_monotonic()', 31, 'uuidv7()', NULL, NULL,        true,  NULL),
	('cosid_next (snowflake)', 'bigint',  'cosid_next(''bench_snow'')', NULL, NULL, 1.0,  'bigserial', true,  NULL);

-- Throughput of one backend against the layout's cap (2^seq-bits ids a
-- millisecond: 4,096,000/s for SNOWFLAKE_MS, whose ids carry their
-- millisecond in id >> 22).  Each expr counts n ids and the milliseconds
-- their own times span (lib.sql, bench_rate); %s is n.
--   streaming    the row source is a set-returning function in the select
--                list (ProjectSet): one row a call, nothing stored, so the
--                query takes about as long as the generator
--   FROM         generate_series or cosid_next_many in FROM (Function Scan)
--                materializes all n rows into a tuplestore first: the wall
--                clock then counts that too, the ids' own times do not
INSERT INTO bench_rate (label, expr, n, limit_per_s, target_share) VALUES
	('row source alone, streaming',
	 'SELECT count(g), NULL::bigint FROM (SELECT generate_series(1, %s) g) s',
	 4096000, NULL, NULL),
	('cosid_next, streaming',
	 'SELECT count(x), (max(x) >> 22) - (min(x) >> 22) + 1 FROM (SELECT cosid_next(''bench_snow'') x FROM (SELECT generate_series(1, %s)) g) s',
	 4096000, 4096000, 0.95),
	('cosid_next, FROM generate_series',
	 'SELECT count(x), (max(x) >> 22) - (min(x) >> 22) + 1 FROM (SELECT cosid_next(''bench_snow'') x FROM generate_series(1, %s) g) s',
	 4096000, 4096000, NULL),
	('cosid_next_many, select list',
	 'SELECT count(x), (max(x) >> 22) - (min(x) >> 22) + 1 FROM (SELECT cosid_next_many(''bench_snow'', %s) x) s',
	 4096000, 4096000, 0.98),
	('cosid_next_many, FROM',
	 'SELECT count(x), (max(x) >> 22) - (min(x) >> 22) + 1 FROM cosid_next_many(''bench_snow'', %s) x',
	 4096000, 4096000, NULL);
