-- What cosid does, in a few statements (run by `make run`).
\pset footer off
\echo
\echo '-- ULIDs: 26 characters, time first, sortable; gen_ulid() draws 80 CSPRNG bits'
SELECT gen_ulid() AS ulid, ulid_time(gen_ulid()) AS made_at;

\echo '-- gen_ulid_monotonic(): strictly increasing across the whole server'
SELECT n, gen_ulid_monotonic() AS ulid FROM generate_series(1, 5) n;

\echo '-- a ULID is a time part and a random part (the seed''s worked example)'
SELECT * FROM ulid_parts('01HTQW311N1KR5G0Y75M3EF00H');
SELECT ulid_time('01HTQW311N1KR5G0Y75M3EF00H') AS time_of_example;

\echo '-- as a column default and primary key, with range scans by time'
CREATE TEMP TABLE event (id ulid PRIMARY KEY DEFAULT gen_ulid_monotonic(), what text);
INSERT INTO event (what) SELECT 'event ' || g FROM generate_series(1, 1000) g;
SELECT count(*) AS made_in_the_last_minute
  FROM event WHERE id >= ulid_from_time(now() - interval '1 minute');

\echo '-- same 16 bytes as uuid'
SELECT u AS ulid, u::uuid AS as_uuid, u::uuid::ulid = u AS round_trip
  FROM (SELECT '01ARYZ6S410000000000000000'::ulid AS u) s;

\echo '-- a time-based generator (CosId snowflake: 41 bits of ms, 10 of slot, 12 of sequence)'
SELECT cosid_define('trace', '{"strategy": "snowflake", "codec": [{"friendly": {"zone": "Asia/Shanghai"}}]}');
SELECT cosid_next('trace') AS id, cosid_next_text('trace') AS friendly;
SELECT * FROM cosid_unpack('trace', cosid_next('trace'));

\echo '-- a segment generator: dense numbers shared by all sessions, as a column default'
SELECT cosid_define('order', '{"strategy": "segment", "step": 100,
  "codec": [{"radix": {"radix": 62}}, {"date-prefix": {"pattern": "yyMMdd", "source": "NOW"}}, {"prefix": "O"}]}');
CREATE TEMP TABLE orders (id bigint PRIMARY KEY DEFAULT cosid_next('order'), item text);
INSERT INTO orders (item) VALUES ('tea'), ('cake'), ('jam');
SELECT id, cosid_encode('order', id) AS code FROM orders;
SELECT cosid_decode('order', 'O261027Z') AS decoded;

\echo '-- this server''s slot and the generators'' counters'
SELECT mode, slot, state, window_end > now() AS window_ahead FROM cosid_slot();
SELECT name, strategy, issued, segment_fetches FROM cosid.generator_stats;
