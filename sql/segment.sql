--
-- Segment generators: dense shared numbering, rollback, adoption of a
-- sequence, periodic groups, int, codecs, alter/drop, errors.
--
-- every test starts from a fresh install, whatever ran before it
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS cosid CASCADE;
CREATE EXTENSION cosid;
RESET client_min_messages;
SET TimeZone = 'UTC';

CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d text;
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN others THEN
	-- the detail of an invalid definition or codec list names the JSON path
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || SQLERRM ||
		CASE WHEN SQLERRM IN ('invalid generator definition', 'invalid codec list') OR
			SQLERRM LIKE 'cannot change the % of generator %' THEN ' | ' || d ELSE '' END;
END $$;

-- dense numbers across segment boundaries
SELECT cosid_define('seg', '{"strategy": "segment", "step": 10}');
SELECT array_agg(cosid_next('seg')) AS first_25 FROM generate_series(1, 25);
SELECT name, strategy, epoch, unit, total_bits, sequence IS NOT NULL AS has_sequence, config
FROM cosid.generators;
SELECT seqincrement, seqmin FROM pg_sequence WHERE seqrelid = (SELECT sequence FROM cosid.generator WHERE name = 'seg');
-- a rolled-back transaction does not give its numbers back
BEGIN;
SELECT cosid_next('seg') AS in_rolled_back;
ROLLBACK;
SELECT cosid_next('seg') AS after_rollback;
-- neither does a failed statement
SELECT pg_temp.err($$SELECT cosid_next('seg') / 0$$);
SELECT cosid_next('seg') AS after_error;
-- many at once: dense, in order, shared with single calls
SELECT count(*), min(x), max(x), max(x) - min(x) + 1 = count(*) AS dense
FROM cosid_next_many('seg', 1000) x;
SELECT cosid_next('seg') AS after_many;
SELECT cosid_next_text('seg') AS as_text, cosid_next_int('seg') AS as_int;
SELECT name, issued, segment_fetches, segment_waits, clock_borrows FROM cosid.generator_stats;
-- a start and the default step
SELECT cosid_define('from1000', '{"strategy": "segment", "start": 1000}');
SELECT cosid_next('from1000'), cosid_next('from1000');
SELECT seqincrement FROM pg_sequence WHERE seqrelid = (SELECT sequence FROM cosid.generator WHERE name = 'from1000');

-- adopting a bigserial's sequence: no gap, no overlap
CREATE TABLE orders (id bigserial PRIMARY KEY, item text);
INSERT INTO orders (item) SELECT 'before ' || g FROM generate_series(1, 7) g;
SELECT cosid_define('orders', '{"strategy": "segment", "adopt-sequence": "orders_id_seq", "step": 5}');
ALTER TABLE orders ALTER id SET DEFAULT cosid_next('orders');
INSERT INTO orders (item) SELECT 'after ' || g FROM generate_series(1, 13) g;
SELECT array_agg(id ORDER BY id) AS ids, count(*) FILTER (WHERE item LIKE 'after%') AS after FROM orders;
SELECT sequence::text, config FROM cosid.generators WHERE name = 'orders';
-- a fresh bigserial (never called) starts at its first number
CREATE TABLE fresh (id bigserial PRIMARY KEY);
SELECT cosid_define('fresh', '{"strategy": "segment", "adopt-sequence": "fresh_id_seq"}');
SELECT cosid_next('fresh') AS first;
-- what cannot be adopted
CREATE SEQUENCE down INCREMENT BY -1;
CREATE TABLE not_a_sequence ();
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "adopt-sequence": "nosuch_seq"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "adopt-sequence": "not_a_sequence"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "adopt-sequence": "down"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "adopt-sequence": "orders_id_seq"}')$$);
-- temporary (other sessions cannot open it) and unlogged (a crash resets it)
CREATE TEMP SEQUENCE temp_seq;
CREATE UNLOGGED SEQUENCE unlogged_seq;
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "adopt-sequence": "temp_seq"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "adopt-sequence": "unlogged_seq"}')$$);
CREATE ROLE cosid_carol;
SELECT current_database() AS db \gset
GRANT CREATE ON DATABASE :"db" TO cosid_carol;
CREATE SEQUENCE owned_by_someone;
SET ROLE cosid_carol;
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "adopt-sequence": "owned_by_someone"}')$$);
-- using a generator needs no right on its sequence
SELECT cosid_next('seg') > 0 AS carol_issues;
SELECT pg_temp.err($$SELECT nextval((SELECT sequence FROM cosid.generator WHERE name = 'seg'))$$);
RESET ROLE;
REVOKE CREATE ON DATABASE :"db" FROM cosid_carol;
DROP ROLE cosid_carol;

-- groups: the period, then a value that restarts at 1 each period
SELECT cosid_define('daily', '{"strategy": "segment", "group": "day", "step": 3,
	"codec": [{"grouped": {"value": {"radix": {"radix": 10, "width": 6, "pad-start": true}}}}]}');
SET cosid.debug_now = '2031-05-06 23:59:59+00';
SELECT array_agg(cosid_next('daily')) AS day_1 FROM generate_series(1, 4);
SELECT cosid_next_text('daily') AS day_1_text;
SET cosid.debug_now = '2031-05-07 00:00:00+00';
SELECT array_agg(cosid_next('daily')) AS day_2_restarts FROM generate_series(1, 4);
SELECT cosid_decode('daily', '20310507-000002') AS decoded, cosid_encode('daily', 203105070000000002) AS encoded;
-- the period never goes back, even when the clock does
SET cosid.debug_now = '2031-05-06 12:00:00+00';
SELECT cosid_next('daily') AS clock_went_back;
RESET cosid.debug_now;
SELECT cosid_define('monthly', '{"strategy": "segment", "group": "month", "zone": "Asia/Tokyo"}');
SET cosid.debug_now = '2031-05-31 16:00:00+00';
SELECT cosid_next('monthly') AS june_in_tokyo;
SET cosid.debug_now = '2031-12-31 15:00:00+00';
SELECT cosid_define('yearly', '{"strategy": "segment", "group": "year", "zone": "Asia/Tokyo", "start": 100}');
SELECT cosid_next('yearly') AS next_year_in_tokyo;
RESET cosid.debug_now;

-- int: true stops with 22003 past int4
SELECT cosid_define('small', '{"strategy": "segment", "int": true, "start": 2147483645, "step": 2}');
SELECT cosid_next_int('small'), cosid_next_int('small'), cosid_next_int('small');
SELECT pg_temp.err($$SELECT cosid_next_int('small')$$);
SELECT pg_temp.err($$SELECT cosid_next('small')$$);
SELECT pg_temp.err($$SELECT cosid_next_int('from1000')$$) AS plain_generator_fits;

-- codecs on segment numbers
SELECT cosid_define('coded', '{"strategy": "segment", "codec": [{"radix": 62},
	{"date-prefix": {"pattern": "yyMMdd", "delimiter": "-"}}, {"prefix": "O"}]}');
SELECT cosid_next_text('coded') ~ ('^O' || to_char(now(), 'YYMMDD') || '-1$') AS date_from_the_clock;
SELECT cosid_decode('coded', 'O261027-zz') AS decoded;

-- what a segment generator cannot be or do
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "layout": "SNOWFLAKE_MS"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "clock-regression": "FAIL"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"step": 10}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "step": 0}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "start": -1}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "group": "week"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "group": "day", "zone": "Mars/Olympus"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "group": "day", "start": 10000000000}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "group": "day", "adopt-sequence": "down"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "group": "day", "int": true}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "codec": [{"friendly": {}}]}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "codec": [{"grouped": {}}]}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "codec": [{"date-prefix": {"source": "ID_TIME"}}]}')$$);
SELECT pg_temp.err($$SELECT cosid_unpack('seg', 5)$$);
SELECT pg_temp.err($$SELECT cosid_unpack_text('seg', '5')$$);
SELECT pg_temp.err($$SELECT cosid_pack('seg', now())$$);
SELECT count(*) AS nothing_bad_was_stored FROM cosid.generator WHERE name = 'bad';

-- alter: the step (and codec, int) may change; where numbers come from may not
SELECT cosid_alter('seg', '{"step": 50}');
SELECT seqincrement FROM pg_sequence WHERE seqrelid = (SELECT sequence FROM cosid.generator WHERE name = 'seg');
SELECT count(*), max(x) - min(x) + 1 = count(*) AS still_dense FROM cosid_next_many('seg', 500) x;
-- the segments fetched before an alter are still handed out after it (no gap),
-- also after two alters in one transaction and a drop rolled back to a savepoint
SELECT cosid_next('seg') AS before_alters \gset
BEGIN;
SELECT cosid_alter('seg', '{"step": 60}');
SELECT cosid_alter('seg', '{"step": 50}');
COMMIT;
SELECT cosid_next('seg') = :before_alters + 1 AS no_gap_after_alters;
BEGIN;
SAVEPOINT s;
SELECT cosid_drop('seg');
ROLLBACK TO s;
COMMIT;
SELECT cosid_next('seg') = :before_alters + 2 AS no_gap_after_rolled_back_drop;
SELECT pg_temp.err($$SELECT cosid_alter('seg', '{"start": 5}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('daily', '{"group": "month"}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('daily', '{"zone": "Asia/Tokyo"}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('orders', '{"adopt-sequence": null}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('seg', '{"strategy": "snowflake"}')$$);

-- drop: a sequence cosid made goes with the generator; an adopted one stays
SELECT sequence::oid AS seg_sequence FROM cosid.generator WHERE name = 'seg' \gset
SELECT cosid_drop('seg');
SELECT count(*) AS seg_sequence_left FROM pg_class WHERE oid = :seg_sequence;
SELECT cosid_drop('orders');
SELECT count(*) AS adopted_sequence_left FROM pg_class WHERE relname = 'orders_id_seq';
ALTER TABLE orders ALTER id SET DEFAULT nextval('orders_id_seq');
SELECT nextval('orders_id_seq') > 20 AS bigserial_continues;

-- segments shared across servers: "distributor": "lease-store" takes segments
-- from the lease store (cosid.lease_store, not set here), with no sequence
CREATE ROLE cosid_dave;
CREATE FUNCTION pg_temp.err_detail(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d text;
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN others THEN
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || SQLERRM || ' | ' || coalesce(d, '');
END $$;
SELECT count(*) AS sequences_before FROM pg_class WHERE relkind = 'S' \gset
SELECT cosid_define('shared', '{"strategy": "segment", "distributor": "lease-store", "step": 20, "reserve": 3}');
SELECT cosid_define('shared_int', '{"strategy": "segment", "distributor": "Lease-Store", "int": true, "start": 1000}');
SELECT cosid_define('shared_daily', '{"strategy": "segment", "distributor": "lease-store", "group": "day", "zone": "Europe/Riga"}');
SELECT cosid_define('plain', '{"strategy": "segment", "distributor": "local"}');
SELECT count(*) - :sequences_before AS sequences_made FROM pg_class WHERE relkind = 'S';
SELECT name, strategy, distributor, sequence IS NOT NULL AS has_sequence
FROM cosid.generators WHERE strategy = 'segment' ORDER BY name;
SELECT name, distributor FROM cosid.generators WHERE strategy <> 'segment' LIMIT 1;
-- keys that do not combine with it, and values it does not take
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "distributor": "lease-store", "adopt-sequence": "orders_id_seq"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "reserve": 5}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "snowflake", "distributor": "lease-store"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "distributor": "host=evil.example dbname=x"}')$$);
SELECT pg_temp.err($$SELECT cosid_define('bad', '{"strategy": "segment", "distributor": "lease-store", "reserve": 0}')$$);
SELECT count(*) AS nothing_bad_was_stored FROM cosid.generator WHERE name = 'bad';
-- the catalog holds no lease-store generator with a sequence, nor a local one without
SELECT pg_temp.err($$UPDATE cosid.generator SET sequence = NULL WHERE name = 'plain'$$);
SET ROLE cosid_dave;
SELECT pg_temp.err($$UPDATE cosid.generator SET config = config - 'distributor' WHERE name = 'shared'$$);
RESET ROLE;
-- no store configured: nothing to issue, 55000 naming the store and why
SELECT pg_temp.err_detail($$SELECT cosid_next('shared')$$);
SELECT pg_temp.err_detail($$SELECT cosid_next_text('shared_daily')$$);
SELECT pg_temp.err_detail($$SELECT count(*) FROM cosid_next_many('shared_int', 10)$$);
SELECT issued, segment_fetches FROM cosid.generator_stats WHERE name = 'shared';
-- alter: the step and reserve may change; the distributor may not
SELECT cosid_alter('shared', '{"step": 50, "reserve": 7}');
SELECT config->'step' AS step, config->'reserve' AS reserve FROM cosid.generator WHERE name = 'shared';
SELECT pg_temp.err($$SELECT cosid_alter('shared', '{"distributor": "local"}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('shared', '{"distributor": null}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('shared', '{"distributor": "local", "reserve": null}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('plain', '{"distributor": "lease-store"}')$$);
SELECT pg_temp.err($$SELECT cosid_alter('plain', '{"reserve": 2}')$$);
-- the connection string is the superuser's: an ordinary role can neither set
-- nor read it
SET ROLE cosid_dave;
SELECT pg_temp.err($$SET cosid.lease_store = 'host=evil.example'$$);
-- (the message differs between versions: the SQLSTATE and the setting's name)
SELECT left(pg_temp.err($$SELECT current_setting('cosid.lease_store')$$), 5) AS sqlstate,
       pg_temp.err($$SELECT current_setting('cosid.lease_store')$$) LIKE '%"cosid.lease_store"' AS names_it;
SELECT pg_temp.err($$SELECT set_config('cosid.lease_store', 'host=evil.example', false)$$);
SELECT count(*) AS visible_settings FROM pg_settings WHERE name = 'cosid.lease_store';
RESET ROLE;
-- the store side: disjoint ranges, granted to no one by default
-- (a counter per namespace, database name and generator name, for one owner)
SELECT * FROM cosid.segment_acquire('default', 'db1', 'shared', 'alice', 50, 1, 2);
SELECT * FROM cosid.segment_acquire('default', 'db1', 'shared', 'alice', 50, 1, 1);
SELECT * FROM cosid.segment_acquire('default', 'db1', 'shared', 'alice', 10, 1000, 1);
SELECT * FROM cosid.segment_acquire('default', 'db2', 'shared', 'bob', 10, 1, 1);
SELECT pg_temp.err($$SELECT * FROM cosid.segment_acquire('default', 'db1', 'shared', 'bob', 10, 4611686018427387904, 1)$$);
SELECT namespace, database, name, last_number, fetches, owner FROM cosid.segment_counter ORDER BY database;
SET ROLE cosid_dave;
SELECT pg_temp.err($$SELECT * FROM cosid.segment_acquire('default', 'db1', 'shared', 'alice', 50, 1, 1)$$);
RESET ROLE;
SELECT cosid_drop('shared');
SELECT cosid_drop('shared_int');
SELECT cosid_drop('shared_daily');
SELECT cosid_drop('plain');
SELECT count(*) - :sequences_before AS sequences_left FROM pg_class WHERE relkind = 'S';
DROP ROLE cosid_dave;
-- a local generator may start at 0 (the first segment is not taken for one that went back)
SELECT cosid_define('zero', '{"strategy": "segment", "start": 0, "step": 5}');
SELECT array_agg(n) AS from_zero FROM cosid_next_many('zero', 7) n;
SELECT cosid_drop('zero');
-- a generator whose adopted sequence went with its table says so, with 55000,
-- once the numbers it fetched are used up
CREATE TABLE doomed (id bigserial PRIMARY KEY);
SELECT cosid_define('doomed', '{"strategy": "segment", "adopt-sequence": "doomed_id_seq", "step": 10}');
SELECT cosid_next('doomed') AS first_doomed;
DROP TABLE doomed;
SELECT pg_temp.err($$SELECT count(cosid_next('doomed')) FROM generate_series(1, 1000)$$);
SELECT cosid_drop('doomed');
-- an adopted int4 sequence near its maximum: every number of the segments it
-- gave is handed out, then the sequence's own 2200H
CREATE TABLE small_top (id serial PRIMARY KEY);
SELECT setval('small_top_id_seq', 2147483000);
SELECT cosid_define('small_top', '{"strategy": "segment", "adopt-sequence": "small_top_id_seq", "step": 100, "int": true}');
CREATE TEMP TABLE small_top_ids (id int);
DO $$
DECLARE
	st text;
BEGIN
	LOOP
		BEGIN
			INSERT INTO small_top_ids VALUES (cosid_next_int('small_top'));
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE;
			RAISE NOTICE 'stopped with %', st;
			EXIT;
		END;
	END LOOP;
END $$;
SELECT count(*), min(id), max(id), max(id) = (SELECT last_value FROM small_top_id_seq) AS up_to_its_last
FROM small_top_ids;
SELECT cosid_drop('small_top');
DROP TABLE small_top;
-- the next test makes a table of this name
DROP TABLE orders;

-- cosid_define writes its row and its sequence's SELECT grant itself (no
-- INSERT, no GRANT statement) when cosid.generator is as 1.4 makes it; what
-- it writes is what they wrote.  The grant goes on top of the catalog
-- owner's default privileges, as GRANT's does, and the generator's owner
-- depends on the sequence (DROP ROLE refuses it until the generator goes).
CREATE ROLE cosid_erin;
CREATE ROLE cosid_reader;
GRANT CREATE ON DATABASE :"db" TO cosid_erin;
SELECT c.relowner::regrole AS catalog_owner FROM pg_class c WHERE c.oid = 'cosid.generator'::regclass \gset
ALTER DEFAULT PRIVILEGES FOR ROLE :"catalog_owner" IN SCHEMA cosid GRANT USAGE ON SEQUENCES TO cosid_reader;
SET ROLE cosid_erin;
SELECT cosid_define('erin_seg', '{"strategy": "segment", "step": 5}');
RESET ROLE;
ALTER DEFAULT PRIVILEGES FOR ROLE :"catalog_owner" IN SCHEMA cosid REVOKE USAGE ON SEQUENCES FROM cosid_reader;
SELECT a.grantee::regrole = c.relowner AS by_its_owner_to_itself,
	   CASE WHEN a.grantee::regrole = c.relowner THEN '(the sequence''s owner)' ELSE a.grantee::regrole::text END AS grantee,
	   a.grantor::regrole = c.relowner AS granted_by_its_owner, a.privilege_type
FROM cosid.generator g JOIN pg_class c ON c.oid = g.sequence, aclexplode(c.relacl) a
WHERE g.name = 'erin_seg' ORDER BY 1, 2, 4;
SELECT array_position(c.relacl, (SELECT x FROM unnest(c.relacl) x WHERE x::text LIKE 'cosid_reader=%')) <
	   array_position(c.relacl, (SELECT x FROM unnest(c.relacl) x WHERE x::text LIKE 'pg_database_owner=%')) AS defaults_first,
	   array_position(c.relacl, (SELECT x FROM unnest(c.relacl) x WHERE x::text LIKE 'pg_database_owner=%')) <
	   array_position(c.relacl, (SELECT x FROM unnest(c.relacl) x WHERE x::text LIKE 'cosid_erin=%')) AS then_the_generators_owner
FROM cosid.generator g JOIN pg_class c ON c.oid = g.sequence WHERE g.name = 'erin_seg';
SELECT d.refobjid::regrole AS role, d.deptype
FROM cosid.generator g JOIN pg_shdepend d ON d.classid = 'pg_class'::regclass AND d.objid = g.sequence
WHERE g.name = 'erin_seg' ORDER BY 1;
SELECT owner, strategy, owns_sequence, identity <> 0 AS has_identity, codec_functions, counter_database
FROM cosid.generator WHERE name = 'erin_seg';
-- a trigger a superuser put on the table fires: the row goes through the INSERT
CREATE FUNCTION note_define() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE NOTICE 'row of % inserted', NEW.name;
	RETURN NEW;
END $$;
CREATE TRIGGER note_define AFTER INSERT ON cosid.generator FOR EACH ROW EXECUTE FUNCTION note_define();
SELECT cosid_define('noted_seg', '{"strategy": "segment"}');
SELECT cosid_define('noted_snowflake', '{"strategy": "snowflake"}');
DROP TRIGGER note_define ON cosid.generator;
DROP FUNCTION note_define();
-- a rule on the table: the row goes through the INSERT, which fires it
CREATE TABLE define_audit (name text);
CREATE RULE audit_define AS ON INSERT TO cosid.generator DO ALSO INSERT INTO define_audit VALUES (NEW.name);
SELECT cosid_define('audited_seg', '{"strategy": "segment"}');
SELECT cosid_define('audited_snowflake', '{"strategy": "snowflake"}');
DROP RULE audit_define ON cosid.generator;
SELECT name FROM define_audit ORDER BY 1;
DROP TABLE define_audit;
SELECT cosid_drop('audited_seg'), cosid_drop('audited_snowflake');
-- what ddl.c's direct insert checks in C (row_meets_checks, row_binds_codec)
-- is these constraints and this trigger's WHEN: a change to them in a
-- script changes this output, and must change the C too
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint
WHERE conrelid = 'cosid.generator'::regclass AND contype = 'c' ORDER BY 1;
SELECT tgname, tgtype, tgfoid::regproc, pg_get_triggerdef(oid) ~ 'WHEN' AS has_when,
	   substring(pg_get_triggerdef(oid) FROM 'WHEN (.*) EXECUTE') AS when_clause
FROM pg_trigger WHERE tgrelid = 'cosid.generator'::regclass AND NOT tgisinternal ORDER BY 1;
-- a read-only transaction: refused as the INSERT refuses it
BEGIN READ ONLY;
SELECT pg_temp.err($$SELECT cosid_define('read_only', '{"strategy": "snowflake"}')$$);
ROLLBACK;
-- a name defined twice in one statement: the second is refused (by the
-- primary key, or its backing sequence's name)
SELECT pg_temp.err($$SELECT cosid_define('twice', '{"strategy": "snowflake"}') FROM generate_series(1, 2)$$);
SELECT pg_temp.err($$SELECT cosid_define('twice', '{"strategy": "segment"}') FROM generate_series(1, 2)$$);
SELECT count(*) AS twice FROM cosid.generator WHERE name = 'twice';
-- cosid.generator not as cosid made it (no primary key): a generator's
-- first read in a session goes through SQL, not the index (catalog.c:
-- read_direct); a define, which looks its name up by that index, refuses
SELECT cosid_define('no_pk', '{"strategy": "segment", "step": 10}');
BEGIN;
ALTER TABLE cosid.generator DROP CONSTRAINT generator_pkey;
SELECT cosid_next('no_pk') AS read_by_sql;
SELECT pg_temp.err($$SELECT cosid_define('no_pk_either', '{"strategy": "segment"}')$$);
ROLLBACK;
SELECT cosid_drop('no_pk');
SELECT cosid_drop('erin_seg'), cosid_drop('noted_seg'), cosid_drop('noted_snowflake');
REVOKE CREATE ON DATABASE :"db" FROM cosid_erin;
DROP ROLE cosid_erin;
DROP ROLE cosid_reader;
