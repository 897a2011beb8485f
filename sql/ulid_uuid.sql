--
-- ulid next to uuid (1.2): uuid text as ulid input, ulid compared with uuid
-- (operators, btree and hash families, indexes either way round, hash and
-- merge joins), and text and varchar parameters.
--
-- every test starts from a fresh install, whatever ran before it
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS cosid CASCADE;
CREATE EXTENSION cosid;
RESET client_min_messages;

CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN others THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
-- the SQLSTATE and DETAIL of an error (when the input is too long to quote)
CREATE FUNCTION pg_temp.err_detail(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	detail text;
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN others THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || detail;
END $$;
-- whether a plan has a node (which side a join hashes or sorts is the
-- planner's choice, and 18 marks disabled nodes: the node is what matters)
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

-- ---------------------------------------------------------------------------
-- input: the canonical text of a uuid (either case) reads as the same 16
-- bytes; output stays ULID text
-- ---------------------------------------------------------------------------
SELECT '018eafc1-8435-0cf0-5803-c72d06e78011'::ulid AS from_uuid_text,
	   '018EAFC1-8435-0CF0-5803-C72D06E78011'::ulid AS upper_case,
	   '018eAfC1-8435-0cF0-5803-c72D06E78011'::ulid AS mixed_case;
SELECT '00000000-0000-0000-0000-000000000000'::ulid AS zero,
	   'ffffffff-ffff-ffff-ffff-ffffffffffff'::ulid AS ones;
SELECT '018eafc1-8435-0cf0-5803-c72d06e78011'::ulid = '01HTQW311N1KR5G0Y75M3EF00H'::ulid AS same_value,
	   '018eafc1-8435-0cf0-5803-c72d06e78011'::ulid::uuid = '018eafc1-8435-0cf0-5803-c72d06e78011'::uuid AS same_bytes;

-- 20,002 values: uuid text in, the ulid of those bytes out, both ways
CREATE TABLE vals (n int, u ulid, v uuid);
INSERT INTO vals
	SELECT g, x::ulid, x
	FROM (SELECT g, (lpad(to_hex(g), 8, '0') || '-' || substr(md5(g::text), 1, 4) || '-'
					 || substr(md5(g::text), 5, 4) || '-' || substr(md5(g::text), 9, 4) || '-'
					 || substr(md5(g::text), 13, 12))::uuid AS x
		  FROM generate_series(1, 20000) g) s;
INSERT INTO vals VALUES (0, '00000000000000000000000000', '00000000-0000-0000-0000-000000000000'),
	(20001, '7ZZZZZZZZZZZZZZZZZZZZZZZZZ', 'ffffffff-ffff-ffff-ffff-ffffffffffff');
SELECT count(*) AS n,
	   count(*) FILTER (WHERE v::text::ulid = u) AS uuid_text_reads,
	   count(*) FILTER (WHERE upper(v::text)::ulid = u) AS upper_uuid_text_reads,
	   count(*) FILTER (WHERE u::text ~ '^[0-7][0-9A-HJKMNP-TV-Z]{25}$') AS output_is_ulid_text,
	   count(*) FILTER (WHERE u::uuid = v) AS same_bytes
FROM vals;

-- hostile and malformed input: 22P02, saying what is wrong and what a ulid
-- is written as (both forms)
SELECT '018eafc1-8435-0cf0-5803-c72d06e7801g'::ulid;
SELECT '018eafc18435-0cf0-5803-c72d06e78011-'::ulid;
SELECT '018eafc1-8435-0cf0-5803-c72d06e7801'::ulid;
SELECT '018eafc1-8435-0cf0-5803-c72d06e780111'::ulid;
SELECT '{018eafc1-8435-0cf0-5803-c72d06e78011}'::ulid;
SELECT '018eafc184350cf05803c72d06e78011'::ulid;
SELECT ' 018eafc1-8435-0cf0-5803-c72d06e7801'::ulid;
SELECT '018eafc1-8435-0cf0-5803-c72d06e780é'::ulid;
SELECT '018eafc1+8435-0cf0-5803-c72d06e78011'::ulid;
SELECT '01HTQW311N1KR5G0Y75M3EF00H0123456789'::ulid;
SELECT '-'::ulid;
SELECT E'018eafc1-8435-0cf0-5803-c72d06e7801\t'::ulid;
SELECT pg_temp.err($q$SELECT '018eafc1-8435-0cf0-5803-c72d06e7801g'::ulid$q$);
SELECT pg_temp.err_detail($q$SELECT repeat('-', 100000)::ulid$q$);
SELECT pg_temp.err_detail($q$SELECT repeat('0', 100000)::ulid$q$);
SELECT pg_temp.err_detail($q$SELECT (repeat('0', 99999) || 'ü')::ulid$q$);
SELECT pg_temp.err($q$SELECT (repeat('0', 8) || repeat('-0000', 3) || '-' || repeat('0', 11) || 'Ω')::ulid$q$);

-- ---------------------------------------------------------------------------
-- the operator families: ulid and uuid in ulid's btree and hash families,
-- complete and valid (amvalidate says why when it is not)
-- ---------------------------------------------------------------------------
SELECT c.opcname, a.amname, amvalidate(c.oid)
FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE c.opcname ~ 'ulid' ORDER BY 1, 2;
SELECT a.amname, format_type(o.amoplefttype, NULL) AS lefttype, format_type(o.amoprighttype, NULL) AS righttype,
	   string_agg(o.amopstrategy || ':' || o.amopopr::regoperator::text, ' ' ORDER BY o.amopstrategy) AS operators
FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily JOIN pg_am a ON a.oid = f.opfmethod
WHERE f.opfname = 'ulid_ops'
GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
SELECT a.amname, format_type(p.amproclefttype, NULL) AS lefttype, format_type(p.amprocrighttype, NULL) AS righttype,
	   p.amprocnum, p.amproc::regprocedure
FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily JOIN pg_am a ON a.oid = f.opfmethod
WHERE f.opfname = 'ulid_ops'
ORDER BY 1, 2, 3, 4;
-- core's uuid families are as they were: no ulid in them
SELECT count(*) AS ulid_in_core_uuid_families
FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily
WHERE f.opfname = 'uuid_ops' AND 'ulid'::regtype IN (o.amoplefttype, o.amoprighttype);
-- the operators: commutators, negators, estimators, join support
SELECT o.oid::regoperator AS op, o.oprcom::regoperator AS commutator, o.oprnegate::regoperator AS negator,
	   o.oprrest AS restrict, o.oprjoin AS join, o.oprcanhash AS hashes, o.oprcanmerge AS merges
FROM pg_operator o
WHERE (o.oprleft, o.oprright) IN (('ulid'::regtype, 'uuid'::regtype), ('uuid'::regtype, 'ulid'::regtype))
ORDER BY o.oid::regoperator::text;

-- ---------------------------------------------------------------------------
-- ulid against uuid: every operator agrees with the same comparison of
-- ulid against ulid, over pairs that are equal, share a prefix, or differ
-- ---------------------------------------------------------------------------
CREATE TABLE pairs AS
	SELECT a.u AS a, b.v AS b
	FROM vals a, LATERAL (VALUES (a.n), (a.n + 1), (20001 - a.n), ((a.n * 7919) % 20002)) m(n)
	JOIN vals b ON b.n = m.n
	UNION ALL
	-- the same first 15 bytes, the last one apart: memcmp reaches the end
	SELECT u, (substr(v::text, 1, 34) || lpad(to_hex((('x' || substr(v::text, 35, 2))::bit(8)::int + 1) % 256), 2, '0'))::uuid
	FROM vals;
SELECT count(*) AS pairs,
	   count(*) FILTER (WHERE a = b::ulid) AS equal,
	   count(*) FILTER (WHERE a < b::ulid) AS less,
	   count(*) FILTER (WHERE a > b::ulid) AS greater
FROM pairs;
SELECT count(*) FILTER (WHERE (a = b) IS DISTINCT FROM (a = b::ulid)) AS eq_wrong,
	   count(*) FILTER (WHERE (a <> b) IS DISTINCT FROM (a <> b::ulid)) AS ne_wrong,
	   count(*) FILTER (WHERE (a < b) IS DISTINCT FROM (a < b::ulid)) AS lt_wrong,
	   count(*) FILTER (WHERE (a <= b) IS DISTINCT FROM (a <= b::ulid)) AS le_wrong,
	   count(*) FILTER (WHERE (a > b) IS DISTINCT FROM (a > b::ulid)) AS gt_wrong,
	   count(*) FILTER (WHERE (a >= b) IS DISTINCT FROM (a >= b::ulid)) AS ge_wrong,
	   count(*) FILTER (WHERE ulid_uuid_cmp(a, b) IS DISTINCT FROM ulid_cmp(a, b::ulid)) AS cmp_wrong
FROM pairs;
SELECT count(*) FILTER (WHERE (b = a) IS DISTINCT FROM (b = a::uuid)) AS eq_wrong,
	   count(*) FILTER (WHERE (b <> a) IS DISTINCT FROM (b <> a::uuid)) AS ne_wrong,
	   count(*) FILTER (WHERE (b < a) IS DISTINCT FROM (b < a::uuid)) AS lt_wrong,
	   count(*) FILTER (WHERE (b <= a) IS DISTINCT FROM (b <= a::uuid)) AS le_wrong,
	   count(*) FILTER (WHERE (b > a) IS DISTINCT FROM (b > a::uuid)) AS gt_wrong,
	   count(*) FILTER (WHERE (b >= a) IS DISTINCT FROM (b >= a::uuid)) AS ge_wrong,
	   -- (core's uuid_cmp returns memcmp's result: its sign is what counts)
	   count(*) FILTER (WHERE uuid_ulid_cmp(b, a) IS DISTINCT FROM sign(uuid_cmp(b, a::uuid))::int) AS cmp_wrong
FROM pairs;
SELECT '01HTQW311N1KR5G0Y75M3EF00H'::ulid = '018eafc1-8435-0cf0-5803-c72d06e78011'::uuid AS eq,
	   '018eafc1-8435-0cf0-5803-c72d06e78012'::uuid > '01HTQW311N1KR5G0Y75M3EF00H'::ulid AS gt,
	   '7ZZZZZZZZZZZZZZZZZZZZZZZZZ'::ulid >= 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid AS ge_max,
	   '00000000-0000-0000-0000-000000000000'::uuid < '00000000000000000000000001'::ulid AS lt_min,
	   ulid_uuid_cmp('7ZZZZZZZZZZZZZZZZZZZZZZZZZ', '00000000-0000-0000-0000-000000000000') AS cmp_pos,
	   uuid_ulid_cmp('00000000-0000-0000-0000-000000000000', '7ZZZZZZZZZZZZZZZZZZZZZZZZZ') AS cmp_neg;

-- hashing: a ulid hashes as the uuid of the same bytes (cross-type hash
-- joins and hash indexes depend on it), with any seed
SELECT count(*) FILTER (WHERE ulid_hash(u) = uuid_hash(v)) AS hash_equal,
	   count(*) FILTER (WHERE ulid_hash_extended(u, 0) = uuid_hash_extended(v, 0)
					   AND ulid_hash_extended(u, 42) = uuid_hash_extended(v, 42)
					   AND ulid_hash_extended(u, -1) = uuid_hash_extended(v, -1)) AS extended_equal,
	   count(DISTINCT ulid_hash(u)) > 19990 AS hashes_spread
FROM vals;

-- ---------------------------------------------------------------------------
-- an index on a ulid column serves uuid parameters, on either side
-- ---------------------------------------------------------------------------
CREATE TABLE uls (id ulid PRIMARY KEY, n int);
INSERT INTO uls SELECT u, n FROM vals;
CREATE TABLE uus (id uuid PRIMARY KEY, n int);
INSERT INTO uus SELECT v, n FROM vals WHERE n % 2 = 0;
ANALYZE uls, uus;
SET plan_cache_mode = force_generic_plan;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
PREPARE ul_eq(uuid) AS SELECT n FROM uls WHERE id = $1;
PREPARE ul_eq_commuted(uuid) AS SELECT n FROM uls WHERE $1 = id;
PREPARE ul_range(uuid, uuid) AS SELECT count(*) FROM uls WHERE id >= $1 AND $2 > id;
EXPLAIN (COSTS OFF) EXECUTE ul_eq('018eafc1-8435-0cf0-5803-c72d06e78011');
EXPLAIN (COSTS OFF) EXECUTE ul_eq_commuted('018eafc1-8435-0cf0-5803-c72d06e78011');
EXPLAIN (COSTS OFF) EXECUTE ul_range('00000010-0000-0000-0000-000000000000', '00000020-0000-0000-0000-000000000000');
EXECUTE ul_eq('00000007-8f14-e45f-ceea-167a5a36dedd');
EXECUTE ul_eq_commuted('00000007-8f14-e45f-ceea-167a5a36dedd');
EXECUTE ul_eq('00000007-8f14-e45f-ceea-167a5a36dede');
EXECUTE ul_range('00000010-0000-0000-0000-000000000000', '00000020-0000-0000-0000-000000000000');
SELECT count(*) FROM uls WHERE id >= '00000010-0000-0000-0000-000000000000'::uuid::ulid
	AND id < '00000020-0000-0000-0000-000000000000'::uuid::ulid;
-- = ANY of a uuid array
EXPLAIN (COSTS OFF) SELECT n FROM uls WHERE id = ANY ('{00000007-8f14-e45f-ceea-167a5a36dedd,00000001-c4ca-4238-a0b9-23820dcc509a}'::uuid[]);
SELECT n FROM uls WHERE id = ANY ('{00000007-8f14-e45f-ceea-167a5a36dedd,00000001-c4ca-4238-a0b9-23820dcc509a}'::uuid[]) ORDER BY n;

-- the other way round: core's uuid_ops family on a uuid column knows no
-- ulid; the planner support function rewrites "id OP ulid" as
-- "id OP ulid::uuid" (the same bytes), so the index serves it all the same
PREPARE uu_eq(ulid) AS SELECT n FROM uus WHERE id = $1;
PREPARE uu_eq_commuted(ulid) AS SELECT n FROM uus WHERE $1 = id;
PREPARE uu_range(ulid, ulid) AS SELECT count(*) FROM uus WHERE $1 <= id AND id < $2;
EXPLAIN (COSTS OFF) EXECUTE uu_eq('01HTQW311N1KR5G0Y75M3EF00H');
EXPLAIN (COSTS OFF) EXECUTE uu_eq_commuted('01HTQW311N1KR5G0Y75M3EF00H');
EXPLAIN (COSTS OFF) EXECUTE uu_range('00000100000000000000000000', '00000200000000000000000000');
EXECUTE uu_eq('000000HJFGZ2AZQ65BJ5CZA7YG');
EXECUTE uu_eq('00000008-c9f0-f895-fb98-ab9159f51fd0');
EXECUTE uu_eq_commuted('000000HJFGZ2AZQ65BJ5CZA7YG');
EXECUTE uu_eq('000000F3RMWHFWXTGPF9D3DQPX');
EXECUTE uu_range('00000100000000000000000000', '00000200000000000000000000');
SELECT count(*) FROM uus WHERE id >= '00000010-0000-0000-0000-000000000000' AND id < '00000020-0000-0000-0000-000000000000';
-- <> is never an index condition
PREPARE uu_ne(ulid) AS SELECT count(*) FROM uus WHERE id <> $1;
SELECT pg_temp.plan_has('EXECUTE uu_ne(''01HTQW311N1KR5G0Y75M3EF00H'')', 'Index Cond') AS ne_uses_index;
EXECUTE uu_ne('00000008-c9f0-f895-fb98-ab9159f51fd0');
-- a hash index on a uuid column, and a BRIN index on a ulid column, serve
-- the other type the same way
ALTER TABLE uls DROP CONSTRAINT uls_pkey;
ALTER TABLE uus DROP CONSTRAINT uus_pkey;
CREATE INDEX uls_brin ON uls USING brin (id);
CREATE INDEX uus_hash ON uus USING hash (id);
SET enable_bitmapscan = on;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) EXECUTE uu_eq('01HTQW311N1KR5G0Y75M3EF00H');
EXECUTE uu_eq('00000008-c9f0-f895-fb98-ab9159f51fd0');
EXPLAIN (COSTS OFF) EXECUTE ul_range('00000010-0000-0000-0000-000000000000', '00000020-0000-0000-0000-000000000000');
EXECUTE ul_range('00000010-0000-0000-0000-000000000000', '00000020-0000-0000-0000-000000000000');
EXPLAIN (COSTS OFF) EXECUTE ul_eq('00000007-8f14-e45f-ceea-167a5a36dedd');
EXECUTE ul_eq('00000007-8f14-e45f-ceea-167a5a36dedd');
DEALLOCATE ALL;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexscan;
RESET plan_cache_mode;

-- ---------------------------------------------------------------------------
-- joins between a ulid and a uuid column: hash and merge joins, either
-- side first, with the same rows as the join over a cast
-- ---------------------------------------------------------------------------
CREATE TABLE jl (id ulid, n int);
CREATE TABLE ju (id uuid, n int);
INSERT INTO jl SELECT u, n FROM vals;
INSERT INTO jl SELECT u, -n FROM vals WHERE n % 5 = 0;
INSERT INTO ju SELECT v, n FROM vals WHERE n % 3 <> 0;
INSERT INTO ju SELECT v, -n FROM vals WHERE n % 7 = 0;
INSERT INTO ju VALUES ('ffffffff-0000-0000-0000-000000000000', 0);
ANALYZE jl, ju;
CREATE TABLE want AS
	SELECT jl.n AS ln, ju.n AS un FROM jl JOIN ju ON jl.id::uuid = ju.id;
SELECT count(*) AS want_rows FROM want;
SET enable_nestloop = off;
SET enable_mergejoin = off;
SELECT pg_temp.plan_has('SELECT * FROM jl JOIN ju ON jl.id = ju.id', 'Hash Join') AS hash_join,
	   pg_temp.plan_has('SELECT * FROM ju JOIN jl ON ju.id = jl.id', 'Hash Join') AS hash_join_commuted;
SELECT count(*) AS rows,
	   NOT EXISTS (SELECT jl.n, ju.n FROM jl JOIN ju ON jl.id = ju.id EXCEPT ALL SELECT * FROM want)
	   AND NOT EXISTS (SELECT * FROM want EXCEPT ALL SELECT jl.n, ju.n FROM jl JOIN ju ON jl.id = ju.id) AS same_rows
FROM jl JOIN ju ON jl.id = ju.id;
SELECT count(*) AS rows_commuted FROM ju JOIN jl ON ju.id = jl.id;
SET enable_hashjoin = off;
SET enable_mergejoin = on;
SELECT pg_temp.plan_has('SELECT * FROM jl JOIN ju ON jl.id = ju.id', 'Merge Join') AS merge_join,
	   pg_temp.plan_has('SELECT * FROM ju JOIN jl ON ju.id = jl.id', 'Merge Join') AS merge_join_commuted;
SELECT count(*) AS rows,
	   NOT EXISTS (SELECT jl.n, ju.n FROM jl JOIN ju ON jl.id = ju.id EXCEPT ALL SELECT * FROM want)
	   AND NOT EXISTS (SELECT * FROM want EXCEPT ALL SELECT jl.n, ju.n FROM jl JOIN ju ON jl.id = ju.id) AS same_rows
FROM jl JOIN ju ON jl.id = ju.id;
SELECT count(*) AS rows_commuted FROM ju JOIN jl ON ju.id = jl.id;
-- a merge join may read the uuid side in order from a uuid index
CREATE INDEX ju_id ON ju (id);
CREATE INDEX jl_id ON jl (id);
SELECT count(*) AS rows_with_indexes FROM jl JOIN ju ON jl.id = ju.id;
-- a join on < gives the rows the join over a cast gives
SELECT count(*) AS lt_rows,
	   count(*) = (SELECT count(*) FROM jl JOIN ju ON jl.id::uuid < ju.id
				   WHERE jl.n BETWEEN 1 AND 300 AND ju.n BETWEEN 1 AND 300) AS same_count
FROM jl JOIN ju ON jl.id < ju.id WHERE jl.n BETWEEN 1 AND 300 AND ju.n BETWEEN 1 AND 300;
RESET enable_nestloop;
RESET enable_hashjoin;
RESET enable_mergejoin;
-- JOIN ... USING needs a type both columns turn into implicitly, and ulid
-- and uuid have no implicit cast (on purpose): write JOIN ... ON
SELECT pg_temp.err('SELECT count(*) FROM jl JOIN ju USING (id)');

-- ---------------------------------------------------------------------------
-- text and varchar: a varchar parameter (pgjdbc's setString) works where a
-- text one does, in comparisons (an index serves them) and in INSERT and
-- UPDATE
-- ---------------------------------------------------------------------------
CREATE TABLE uu_orders (id ulid PRIMARY KEY, note text);
INSERT INTO uu_orders SELECT u, 'n' || n FROM vals;
ANALYZE uu_orders;
SET plan_cache_mode = force_generic_plan;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
PREPARE by_varchar(varchar) AS SELECT note FROM uu_orders WHERE id = $1;
PREPARE by_text(text) AS SELECT note FROM uu_orders WHERE $1 = id;
PREPARE after_varchar(varchar) AS SELECT count(*) FROM uu_orders WHERE id > $1;
PREPARE ins_varchar(varchar, text) AS INSERT INTO uu_orders VALUES ($1, $2);
PREPARE upd_varchar(varchar, varchar) AS UPDATE uu_orders SET id = $2 WHERE id = $1;
EXPLAIN (COSTS OFF) EXECUTE by_varchar('01HTQW311N1KR5G0Y75M3EF00H');
EXPLAIN (COSTS OFF) EXECUTE by_text('01HTQW311N1KR5G0Y75M3EF00H');
EXPLAIN (COSTS OFF) EXECUTE after_varchar('7ZZZZZZZZZZZZZZZZZZZZZZZZY');
EXECUTE by_varchar('000000F3RMWHFWXTGPF9D3DQPX');
EXECUTE by_varchar('00000007-8f14-e45f-ceea-167a5a36dedd');
EXECUTE by_text('00000007-8F14-E45F-CEEA-167A5A36DEDD');
EXECUTE after_varchar('00000FFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF');
EXECUTE ins_varchar('01HTQW311N1KR5G0Y75M3EF00H', 'from varchar, ULID text');
EXECUTE ins_varchar('018eafc1-8435-0cf0-5803-c72d06e78012', 'from varchar, uuid text');
EXECUTE upd_varchar('01HTQW311N1KR5G0Y75M3EF00H', '01HTQW311N1KR5G0Y75M3EF00G');
SELECT id AS ulid, id::uuid AS same_bytes, note FROM uu_orders WHERE note LIKE 'from varchar%' ORDER BY 1;
SELECT pg_temp.err($q$EXECUTE by_varchar('01HTQW311N1KR5G0Y75M3EF00U')$q$);
SELECT pg_temp.err($q$EXECUTE ins_varchar('not a ulid', 'x')$q$);
DEALLOCATE ALL;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET plan_cache_mode;
-- text and varchar values compared with ulid, each way and with every operator
SELECT '01HTQW311N1KR5G0Y75M3EF00H'::ulid = '01htqw311n1kr5g0y75m3ef00h'::varchar AS eq_varchar,
	   '018eafc1-8435-0cf0-5803-c72d06e78011'::text = '01HTQW311N1KR5G0Y75M3EF00H'::ulid AS eq_text_uuid_form,
	   '01HTQW311N1KR5G0Y75M3EF00H'::ulid <> '01HTQW311N1KR5G0Y75M3EF00J'::text AS ne,
	   '01HTQW311N1KR5G0Y75M3EF00H'::ulid < '01HTQW311N1KR5G0Y75M3EF00J'::varchar AS lt,
	   '01HTQW311N1KR5G0Y75M3EF00H'::ulid <= '01HTQW311N1KR5G0Y75M3EF00H'::text AS le,
	   '01HTQW311N1KR5G0Y75M3EF00J'::text > '01HTQW311N1KR5G0Y75M3EF00H'::ulid AS gt,
	   '01HTQW311N1KR5G0Y75M3EF00H'::varchar >= '01HTQW311N1KR5G0Y75M3EF00J'::ulid AS ge;
SELECT count(*) FILTER (WHERE (u = u::text) AND (u::text = u) AND (u = v::text::varchar)
					   AND NOT (u < u::text) AND (u <= u::text) AND NOT (u > u::varchar) AND (u >= u::varchar)
					   AND NOT (u <> u::text)) AS text_agrees
FROM vals;
SELECT pg_temp.err($q$SELECT '01HTQW311N1KR5G0Y75M3EF00H'::ulid = 'not a ulid'::text$q$);
-- a bpchar and a name go through text too
SELECT '01HTQW311N1KR5G0Y75M3EF00H'::ulid = '01HTQW311N1KR5G0Y75M3EF00H'::char(26) AS eq_bpchar,
	   '01HTQW311N1KR5G0Y75M3EF00H'::ulid = '01HTQW311N1KR5G0Y75M3EF00H'::name AS eq_name;
-- nothing became ambiguous: an untyped literal compares as a ulid (with
-- the ulid operators), strings still compare as strings, a uuid column
-- still reads only uuid text
EXPLAIN (COSTS OFF, VERBOSE) SELECT 1 FROM uu_orders WHERE id = '018eafc1-8435-0cf0-5803-c72d06e78011';
SELECT 'a' = 'b' AS unknowns, 'a'::text = 'a' AS texts, 'a'::varchar < 'b'::varchar AS varchars;
SELECT pg_temp.err($q$SELECT '01HTQW311N1KR5G0Y75M3EF00H'::ulid < now()$q$);
SELECT pg_temp.err($q$SELECT '018eafc1-8435-0cf0-5803-c72d06e78011'::uuid = '01HTQW311N1KR5G0Y75M3EF00H'$q$);
-- no implicit cast to or from ulid; varchar -> ulid is an assignment cast
SELECT castsource::regtype, casttarget::regtype, castcontext, castmethod
FROM pg_cast WHERE castsource = 'ulid'::regtype OR casttarget = 'ulid'::regtype
ORDER BY castsource::regtype::text, casttarget::regtype::text;
