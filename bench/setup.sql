-- bench/setup.sql: objects the candidates in bench/candidates.sql need,
-- created once, right after CREATE EXTENSION cosid.  Optional: bench/run.sh
-- skips it when it does not exist.

CREATE SEQUENCE bench_seq;
SELECT cosid_define('bench_snow', '{"strategy": "snowflake"}');
SELECT cosid_define('bench_seg', '{"strategy": "segment", "step": 1000}');
-- SNOWFLAKE_MS with 15 sequence bits instead of 12 (and 38 time bits instead
-- of 41: 63 bits with its 10 node bits): 32,768 ids a millisecond, so that
-- per-call cost and two backends' rate are not capped by the sequence.
SELECT cosid_define('bench_wide', '{"time-bits": 38, "seq-bits": 15}');
