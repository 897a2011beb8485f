-- bench/setup.sql: objects the candidates in bench/candidates.sql need,
-- created once, right after CREATE EXTENSION cosid.  Optional: bench/run.sh
-- skips it when it does not exist.

CREATE SEQUENCE bench_seq;
SELECT cosid_define('bench_snow', '{"strategy": "snowflake"}');
SELECT cosid_define('bench_seg', '{"strategy": "segment", "step": 1000}');
