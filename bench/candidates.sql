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
	('gen_ulid_monotonic()', 'gen_ulid_monotonic()',  NULL,        0.30, 'gen_random_uuid()');

-- Primary-key index size.  Each row gets a table
--     CREATE TABLE bench_pk_<n> (id <coltype> PRIMARY KEY DEFAULT <expr>)
-- (no DEFAULT clause when expr is NULL, as for bigserial) filled with
-- BENCH_ROWS rows.  target_mb is per million rows, scaled to BENCH_ROWS.
INSERT INTO bench_pk (label, coltype, expr, target_mb) VALUES
	('gen_ulid_monotonic()', 'ulid',      'gen_ulid_monotonic()', 31),
	('gen_ulid()',           'ulid',      'gen_ulid()',           NULL),
	('gen_random_uuid()',    'uuid',      'gen_random_uuid()',    NULL),
	('bigserial',            'bigserial', NULL,                   NULL);
