--
-- Native uuid ids (1.3): gen_uuidv7(), gen_uuidv7_monotonic() and
-- uuidv7_time().  RFC 9562 version 7: 48 bits of Unix milliseconds, the
-- version (7), 12 random bits, the variant (binary 10), 62 random bits.
--
-- every test starts from a fresh install, whatever ran before it
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS cosid CASCADE;
CREATE EXTENSION cosid;
RESET client_min_messages;

-- the version (high nibble of byte 6) and the variant (high two bits of byte 8)
CREATE FUNCTION pg_temp.version(u uuid) RETURNS int LANGUAGE sql IMMUTABLE
	AS $$ SELECT get_byte(uuid_send(u), 6) >> 4 $$;
CREATE FUNCTION pg_temp.variant(u uuid) RETURNS int LANGUAGE sql IMMUTABLE
	AS $$ SELECT get_byte(uuid_send(u), 8) >> 6 $$;

SELECT pg_typeof(gen_uuidv7()) AS gen_type, pg_typeof(gen_uuidv7_monotonic()) AS mono_type;

-- every one: version 7, variant 10, the time of the call, distinct
CREATE TEMP TABLE v AS
	SELECT n, clock_timestamp() AS t0, gen_uuidv7() AS u, gen_uuidv7_monotonic() AS m, clock_timestamp() AS t1
	FROM generate_series(1, 20000) n;
SELECT bool_and(pg_temp.version(u) = 7) AS u_version_7,
	   bool_and(pg_temp.variant(u) = 2) AS u_variant_10,
	   bool_and(pg_temp.version(m) = 7) AS m_version_7,
	   bool_and(pg_temp.variant(m) = 2) AS m_variant_10,
	   count(DISTINCT u) = count(*) AS u_distinct,
	   count(DISTINCT m) = count(*) AS m_distinct,
	   bool_and(uuidv7_time(u) BETWEEN date_trunc('milliseconds', t0) AND t1) AS u_time_of_call,
	   bool_and(uuidv7_time(m) >= date_trunc('milliseconds', t0) - interval '1 second'
				AND uuidv7_time(m) <= t1 + interval '1 second') AS m_time_near_call
FROM v;

-- the random bits really vary: each of the 74 takes both values in 64 uuids
-- of 64 milliseconds (within one millisecond a backend's uuids count up from
-- the first one's random bits).  get_bit's bit b is bit b % 8 of byte b / 8,
-- counted from the least significant: the version is bits 52-55, the
-- variant bits 70 and 71.
CREATE TEMP TABLE r (u uuid);
DO $$
BEGIN
	FOR i IN 1 .. 64 LOOP
		INSERT INTO r VALUES (gen_uuidv7());
		PERFORM pg_sleep(0.0015);
	END LOOP;
END $$;
SELECT count(DISTINCT uuidv7_time(u)) = 64 AS in_64_milliseconds FROM r;
SELECT count(*) AS random_bits_seen_both_ways
FROM generate_series(48, 127) b
WHERE b NOT BETWEEN 52 AND 55 AND b NOT IN (70, 71)
  AND (SELECT count(DISTINCT get_bit(uuid_send(u), b)) FROM r) = 2;

-- gen_uuidv7_monotonic(): strictly increasing in the order made, even
-- within one millisecond (20,000 in one statement)
SELECT count(*) FILTER (WHERE m <= prev) AS not_increasing
FROM (SELECT m, lag(m) OVER (ORDER BY n) AS prev FROM v) s;

-- uuidv7_time(): RFC 9562's examples of versions 7 and 1 (both
-- 2022-02-22 19:22:22 UTC), as PostgreSQL 18's uuid_extract_timestamp()
SET TIME ZONE 'UTC';
SELECT uuidv7_time('017f22e2-79b0-7cc3-98c4-dc0c0c07398f') AS rfc_v7,
	   uuidv7_time('c232ab00-9414-11ec-b3c8-9f6bdeced846') AS rfc_v1,
	   uuidv7_time('00000000-0000-7000-8000-000000000000') AS v7_epoch,
	   uuidv7_time('ffffffff-ffff-7fff-bfff-ffffffffffff') AS v7_last_ms;
-- no time: version 4, another variant, the nil and max uuids; NULL in, NULL out
SELECT uuidv7_time('f81d4fae-7dec-4d0f-a765-00a0c91e6bf6') AS v4,
	   uuidv7_time('017f22e2-79b0-7cc3-c8c4-dc0c0c07398f') AS variant_110,
	   uuidv7_time('017f22e2-79b0-7cc3-08c4-dc0c0c07398f') AS variant_0,
	   uuidv7_time('00000000-0000-0000-0000-000000000000') AS nil,
	   uuidv7_time('ffffffff-ffff-ffff-ffff-ffffffffffff') AS max,
	   uuidv7_time(NULL) AS null_in;
RESET TIME ZONE;

-- agrees with uuid_extract_timestamp() where it exists (PostgreSQL 18)
CREATE FUNCTION pg_temp.agrees() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	bad bigint;
BEGIN
	IF current_setting('server_version_num')::int < 180000 THEN
		RETURN 'agrees';		-- (no uuid_extract_timestamp before 18)
	END IF;
	EXECUTE $q$
		SELECT count(*) FROM (
			SELECT u FROM v UNION ALL SELECT m FROM v
			UNION ALL SELECT x::uuid FROM unnest(ARRAY['017f22e2-79b0-7cc3-98c4-dc0c0c07398f',
				'c232ab00-9414-11ec-b3c8-9f6bdeced846', 'f81d4fae-7dec-4d0f-a765-00a0c91e6bf6',
				'017f22e2-79b0-7cc3-c8c4-dc0c0c07398f', '00000000-0000-0000-0000-000000000000']) x
			UNION ALL SELECT gen_random_uuid()) s
		WHERE uuid_extract_timestamp(u) IS DISTINCT FROM uuidv7_time(u)$q$ INTO bad;
	RETURN CASE WHEN bad = 0 THEN 'agrees' ELSE bad || ' differ' END;
END $$;
SELECT pg_temp.agrees() AS uuid_extract_timestamp;

-- what each function promises the planner
SELECT p.oid::regprocedure, p.provolatile, p.proparallel, p.proisstrict
FROM pg_proc p
WHERE p.proname IN ('gen_uuidv7', 'gen_uuidv7_monotonic', 'uuidv7_time')
ORDER BY p.oid::regprocedure::text;

-- a primary key of version 7 uuids: inserted in time order, found again
CREATE TEMP TABLE k (id uuid PRIMARY KEY DEFAULT gen_uuidv7(), n int);
INSERT INTO k (n) SELECT generate_series(1, 1000);
SELECT count(*) AS rows, count(*) FILTER (WHERE id = (SELECT id FROM k WHERE n = 500)) AS found
FROM k;
