--
-- The ulid type: text and binary I/O, comparison, indexes, casts, time
-- functions and the two generators.
--
-- every test starts from a fresh install, whatever ran before it
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS cosid CASCADE;
CREATE EXTENSION cosid;
RESET client_min_messages;

-- Report an error's SQLSTATE and message as a row (shows the code, which the
-- default psql error output does not).
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN others THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- the seed's worked example, the spec's zero-random example, the extremes
SELECT '01HTQW311N1KR5G0Y75M3EF00H'::ulid;
SELECT '01ARYZ6S410000000000000000'::ulid;
SELECT '00000000000000000000000000'::ulid;
SELECT '7ZZZZZZZZZZZZZZZZZZZZZZZZZ'::ulid;
-- the bytes behind them (uuid shares the representation)
SELECT '01HTQW311N1KR5G0Y75M3EF00H'::ulid::uuid;
SELECT '7ZZZZZZZZZZZZZZZZZZZZZZZZZ'::ulid::uuid;
SELECT ulid_time('01HTQW311N1KR5G0Y75M3EF00H') = to_timestamp(1712345678.901) AS seed_time;
SELECT ulid_time('01ARYZ6S410000000000000000') = to_timestamp(1469918176.385) AS spec_time;
SELECT encode(ulid_send('01HTQW311N1KR5G0Y75M3EF00H'), 'hex') AS send_bytes;
SELECT substr(encode(ulid_send('01HTQW311N1KR5G0Y75M3EF00H'), 'hex'), 13)
	= encode('\x0cf05803c72d06e78011'::bytea, 'hex') AS random_part_is_seed_bytes;

-- input is case-insensitive, output upper case
SELECT '01htqw311n1kr5g0y75m3ef00h'::ulid;
SELECT '01htqw311n1kr5g0y75m3ef00h'::ulid = '01HTQW311N1KR5G0Y75M3EF00H'::ulid AS same;

-- malformed input: 22P02, quoting the input, saying what is wrong
SELECT '80000000000000000000000000'::ulid;
SELECT 'ZZZZZZZZZZZZZZZZZZZZZZZZZZ'::ulid;
SELECT '01HTQW311N1KR5G0Y75M3EF00'::ulid;
SELECT '01HTQW311N1KR5G0Y75M3EF00HX'::ulid;
SELECT ''::ulid;
SELECT '01HTQW311N1KR5G0Y75M3EF0IH'::ulid;
SELECT '01HTQW311N1KR5G0Y75M3EF0LH'::ulid;
SELECT '01HTQW311N1KR5G0Y75M3EF0oH'::ulid;
SELECT '01HTQW311N1KR5G0Y75M3EF0uH'::ulid;
SELECT ' 1HTQW311N1KR5G0Y75M3EF00H'::ulid;
SELECT '01HTQW311N-KR5G0Y75M3EF00H'::ulid;
SELECT '01HTQW311N1KR5G0Y75M3EF00é'::ulid;
SELECT '01HTQW311N1KR5G0Y75M3EF00HÉ'::ulid;
SELECT pg_temp.err($q$SELECT '80000000000000000000000000'::ulid$q$);
SELECT pg_temp.err($q$SELECT 'U1HTQW311N1KR5G0Y75M3EF00H'::ulid$q$);
SELECT pg_temp.err($q$SELECT '01HTQW311N1KR5G0Y75M3EF00'::ulid$q$);

-- text and binary round trips over many values, including the extremes
CREATE TABLE ulids (u ulid);
INSERT INTO ulids
	SELECT (lpad(to_hex(g), 8, '0') || '-' || substr(md5(g::text), 1, 4) || '-'
			|| substr(md5(g::text), 5, 4) || '-' || substr(md5(g::text), 9, 4) || '-'
			|| substr(md5(g::text), 13, 12))::uuid::ulid
	FROM generate_series(1, 20000) g;
INSERT INTO ulids VALUES ('00000000000000000000000000'), ('7ZZZZZZZZZZZZZZZZZZZZZZZZZ');
SELECT count(*) FILTER (WHERE u::text::ulid = u) AS text_round_trip,
	   count(*) FILTER (WHERE length(u::text) = 26 AND u::text = upper(u::text)) AS upper_26,
	   count(*) FILTER (WHERE u::uuid::ulid = u) AS uuid_round_trip
FROM ulids;
-- (client-side, as a driver does it: the server need not reach the test's
-- directory, which it cannot when it runs as another user or elsewhere)
\getenv abs_builddir PG_ABS_BUILDDIR
\cd :abs_builddir
\copy ulids TO 'results/ulid.bin' (FORMAT binary)
CREATE TABLE ulids_back (u ulid);
\copy ulids_back FROM 'results/ulid.bin' (FORMAT binary)
SELECT (SELECT count(*) FROM ulids_back) AS loaded,
	   NOT EXISTS (SELECT u FROM ulids EXCEPT ALL SELECT u FROM ulids_back) AS same_values;

-- ordering: byte order, which is text order and creation-time order
SELECT '01HTQW311N1KR5G0Y75M3EF00H'::ulid < '01HTQW311N1KR5G0Y75M3EF00J'::ulid AS lt,
	   '01HTQW311N1KR5G0Y75M3EF00H'::ulid <= '01HTQW311N1KR5G0Y75M3EF00H'::ulid AS le,
	   '01HTQW311N1KR5G0Y75M3EF00J'::ulid > '01HTQW311N1KR5G0Y75M3EF00H'::ulid AS gt,
	   '01HTQW311N1KR5G0Y75M3EF00H'::ulid >= '01HTQW311N1KR5G0Y75M3EF00H'::ulid AS ge,
	   '01HTQW311N1KR5G0Y75M3EF00H'::ulid <> '01HTQW311N1KR5G0Y75M3EF00J'::ulid AS ne,
	   '01HTQW311N1KR5G0Y75M3EF00H'::ulid = '01HTQW311N1KR5G0Y75M3EF00J'::ulid AS eq,
	   ulid_cmp('7ZZZZZZZZZZZZZZZZZZZZZZZZZ', '00000000000000000000000000') AS cmp;
-- a sort of 20002 rows (abbreviated keys) agrees with text order and uuid order
SELECT bool_and(a.t = b.t) AS sort_matches_text,
	   bool_and(a.u::uuid = c.v) AS sort_matches_uuid
FROM (SELECT u, u::text AS t, row_number() OVER (ORDER BY u) AS n FROM ulids) a
JOIN (SELECT u::text AS t, row_number() OVER (ORDER BY u::text COLLATE "C") AS n FROM ulids) b USING (n)
JOIN (SELECT u::uuid AS v, row_number() OVER (ORDER BY u::uuid) AS n FROM ulids) c USING (n);
SELECT min(u), max(u) FROM ulids;

-- indexes: btree, hash, brin; hash and merge joins
CREATE INDEX ulids_btree ON ulids (u);
CREATE INDEX ulids_hash ON ulids USING hash (u);
CREATE INDEX ulids_brin ON ulids USING brin (u);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM ulids WHERE u < '0000000GZA0000000000000000';
SELECT count(*) FROM ulids WHERE u < '0000000GZA0000000000000000';
SELECT u FROM ulids WHERE u >= '7ZZZZZZZZZZZZZZZZZZZZZZZZZ';
SET enable_indexscan = off;
SET enable_bitmapscan = on;
DROP INDEX ulids_btree;
EXPLAIN (COSTS OFF) SELECT * FROM ulids WHERE u = '7ZZZZZZZZZZZZZZZZZZZZZZZZZ';
SELECT count(*) FROM ulids WHERE u = '7ZZZZZZZZZZZZZZZZZZZZZZZZZ';
DROP INDEX ulids_hash;
EXPLAIN (COSTS OFF) SELECT * FROM ulids WHERE u < '0000000GZA0000000000000000';
SELECT count(*) FROM ulids WHERE u < '0000000GZA0000000000000000';
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexscan;
SET enable_mergejoin = off;
SET enable_nestloop = off;
-- which side is hashed is the planner's choice (it differs between versions):
-- what matters is that the hash operator class makes a hash join possible
CREATE FUNCTION pg_temp.plan_has(query text, node text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		IF line LIKE '%' || node || '%' THEN
			RETURN true;
		END IF;
	END LOOP;
	RETURN false;
END
$$;
SELECT pg_temp.plan_has('SELECT count(*) FROM ulids a JOIN ulids_back b USING (u)', 'Hash Join') AS hash_join,
	   pg_temp.plan_has('SELECT count(*) FROM ulids a JOIN ulids_back b USING (u)', 'Hash Cond') AS hash_cond;
SELECT count(*) FROM ulids a JOIN ulids_back b USING (u);
SET enable_hashjoin = off;
SET enable_mergejoin = on;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ulids a JOIN ulids_back b USING (u);
SELECT count(*) FROM ulids a JOIN ulids_back b USING (u);
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_nestloop;
SELECT ulid_hash('01HTQW311N1KR5G0Y75M3EF00H') = ulid_hash('01htqw311n1kr5g0y75m3ef00h') AS hash_stable,
	   ulid_hash_extended('01HTQW311N1KR5G0Y75M3EF00H', 0) = ulid_hash_extended('01HTQW311N1KR5G0Y75M3EF00H', 1) AS seeds_equal,
	   (ulid_hash_extended('01HTQW311N1KR5G0Y75M3EF00H', 0) & 4294967295) = (ulid_hash('01HTQW311N1KR5G0Y75M3EF00H')::bigint & 4294967295) AS extended_seed0_matches;

-- casts: none implicit; text (and since 1.2 varchar) is assignment, timestamptz explicit
SELECT castsource::regtype, casttarget::regtype, castcontext, castmethod
FROM pg_cast WHERE castsource = 'ulid'::regtype OR casttarget = 'ulid'::regtype
ORDER BY castsource::regtype::text, casttarget::regtype::text;
CREATE TABLE assign (t text, v uuid, u ulid);
INSERT INTO assign VALUES ('01HTQW311N1KR5G0Y75M3EF00H'::ulid, '01HTQW311N1KR5G0Y75M3EF00H'::ulid, NULL);
INSERT INTO assign (u) SELECT t FROM assign;
SELECT * FROM assign;
SELECT '01HTQW311N1KR5G0Y75M3EF00H'::ulid::timestamptz = to_timestamp(1712345678.901) AS cast_time;
-- (since 1.2 a ulid compares with text, reading the text as a ulid: ulid_uuid.sql)
SELECT pg_temp.err($q$SELECT '01HTQW311N1KR5G0Y75M3EF00H'::ulid = '01HTQW311N1KR5G0Y75M3EF00H'::text$q$);
SELECT pg_temp.err($q$SELECT '01HTQW311N1KR5G0Y75M3EF00H'::ulid = 1$q$);
SELECT pg_temp.err($q$SELECT '01HTQW311N1KR5G0Y75M3EF00H'::ulid < now()$q$);

-- time: ulid_time, ulid_from_time (lowest ULID of the millisecond), ulid_parts
SET TimeZone = 'UTC';
SELECT ulid_from_time('2024-04-05 19:34:38.901+00');
SELECT ulid_from_time('2024-04-05 19:34:38.901999+00') = ulid_from_time('2024-04-05 19:34:38.901+00') AS same_ms;
SELECT ulid_from_time('1970-01-01 00:00:00+00');
SELECT ulid_from_time('1969-12-31 23:59:59.9995+00');
SELECT ulid_time(ulid_from_time('10889-08-02 05:31:50.655+00'));
SELECT ulid_time('7ZZZZZZZZZZZZZZZZZZZZZZZZZ');
SELECT ulid_from_time('10889-08-02 05:31:50.656+00');
SELECT ulid_from_time('infinity');
SELECT pg_temp.err($q$SELECT ulid_from_time('1969-12-31 23:59:59.999+00')$q$);
SELECT * FROM ulid_parts('01HTQW311N1KR5G0Y75M3EF00H');
SELECT (ulid_parts(u)).time_part || (ulid_parts(u)).random_part = u::text AS parts_concat
FROM (SELECT '7ZZZZZZZZZZZZZZZZZZZZZZZZZ'::ulid AS u) s;

-- gen_ulid(): the current millisecond, fresh random bits every call
CREATE TABLE made AS
	SELECT clock_timestamp() AS before, gen_ulid() AS u, clock_timestamp() AS after
	FROM generate_series(1, 10000);
SELECT count(DISTINCT u) AS distinct_ulids,
	   count(DISTINCT (ulid_parts(u)).random_part) AS distinct_random_parts,
	   bool_and(ulid_time(u) >= date_trunc('milliseconds', before)
				AND ulid_time(u) <= after) AS time_is_now
FROM made;
-- the random part is not a counter: its bits are about half ones
SELECT round(avg(bit_count(decode(replace(substr(u::uuid::text, 15), '-', ''), 'hex')))) AS avg_one_bits_of_80
FROM made;

-- gen_ulid_monotonic(): strictly increasing, even within one millisecond
CREATE TABLE mono AS
	SELECT n, gen_ulid_monotonic() AS u FROM generate_series(1, 100000) n;
SELECT count(*) FILTER (WHERE u <= prev) AS not_increasing,
	   count(DISTINCT ulid_time(u)) < 100000 AS shared_milliseconds
FROM (SELECT u, lag(u) OVER (ORDER BY n) AS prev FROM mono) s;
SELECT ulid_time(max(u)) <= clock_timestamp() AND ulid_time(max(u)) > clock_timestamp() - interval '1 minute' AS time_is_now
FROM mono;

-- what each function of the type promises the planner
SELECT p.oid::regprocedure, p.provolatile, p.proparallel, p.proisstrict
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'cosid'
WHERE p.proname LIKE '%ulid%' OR p.proname IN ('min', 'max')
ORDER BY p.oid::regprocedure::text;
