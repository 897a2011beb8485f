-- pgTAP: the lease store's side of segments shared across servers
-- (cosid.segment_acquire and cosid.segment_counter), called directly as the
-- servers' backends call it: ranges above every earlier one, start as a
-- floor, argument checks, overflow, durability of the commit, privileges,
-- security, who a counter belongs to (database name, owner, store role).
-- Namespaces 's', 't' and 's_role'; all undone by the ROLLBACK.
BEGIN;
SELECT plan(82);

-- a statement run as another role: its first value, or 'SQLSTATE: message'
CREATE FUNCTION pg_temp.as_role(r text, q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	res text;
BEGIN
	EXECUTE format('SET LOCAL ROLE %I', r);
	BEGIN
		EXECUTE q INTO res;
	EXCEPTION WHEN OTHERS THEN
		res := SQLSTATE || ': ' || SQLERRM;
	END;
	RESET ROLE;
	RETURN res;
END
$f$;
-- a statement run with another session_user (as a server logged in as that
-- role): its first value, or 'SQLSTATE: message'
CREATE FUNCTION pg_temp.as_session(r text, q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	res text;
BEGIN
	EXECUTE format('SET LOCAL SESSION AUTHORIZATION %I', r);
	BEGIN
		EXECUTE q INTO res;
	EXCEPTION WHEN OTHERS THEN
		res := SQLSTATE || ': ' || SQLERRM;
	END;
	RESET SESSION AUTHORIZATION;
	RETURN res;
END
$f$;
-- "first-last" of one call of another database and owner
CREATE FUNCTION pg_temp.acq2(ns text, db text, nm text, own text, step bigint, start bigint, cnt integer)
RETURNS text LANGUAGE sql AS $f$
	SELECT first || '-' || last FROM cosid.segment_acquire(ns, db, nm, own, step, start, cnt)
$f$;
-- "first-last" of one call (database db1, owner alice)
CREATE FUNCTION pg_temp.acq(ns text, nm text, step bigint, start bigint, cnt integer) RETURNS text
LANGUAGE sql AS $f$
	SELECT first || '-' || last FROM cosid.segment_acquire(ns, 'db1', nm, 'alice', step, start, cnt)
$f$;

-- ---- the function and the table
SELECT has_table('cosid', 'segment_counter', 'cosid.segment_counter exists');
SELECT col_is_pk('cosid', 'segment_counter', ARRAY['namespace', 'database', 'name'], 'one row per namespace, database name and name');
SELECT has_function('cosid', 'segment_acquire', ARRAY['text', 'text', 'text', 'text', 'bigint', 'bigint', 'integer'],
	'cosid.segment_acquire(namespace, database, name, owner, step, start, count) exists');
SELECT hasnt_function('cosid', 'segment_acquire', ARRAY['text', 'text', 'bigint', 'bigint', 'integer'],
	'the 1.2 segment_acquire without database and owner is gone');
SELECT is(pg_get_function_arguments('cosid.segment_acquire(text, text, text, text, bigint, bigint, integer)'::regprocedure),
	'namespace text, database text, name text, owner text, step bigint, start bigint, count integer, OUT first bigint, OUT last bigint',
	'its arguments, and the range it returns (first, last)');
SELECT ok((SELECT prosecdef AND proconfig = ARRAY['search_path=pg_catalog, pg_temp']
			 AND provolatile = 'v' AND proisstrict AND proparallel = 'u'
			 AND obj_description(oid, 'pg_proc') IS NOT NULL
		   FROM pg_proc WHERE oid = 'cosid.segment_acquire(text, text, text, text, bigint, bigint, integer)'::regprocedure),
	'SECURITY DEFINER with a fixed search_path; volatile, strict, parallel unsafe; commented');
SELECT ok((SELECT 'cosid.segment_counter'::regclass = ANY (extconfig) FROM pg_extension WHERE extname = 'cosid'),
	'pg_dump dumps the counters (an extension configuration table)');

-- ---- counting
SELECT is(pg_temp.acq('s', 'order', 100, 1, 1), '1-100', 'the first segment starts at start');
SELECT is(pg_temp.acq('s', 'order', 100, 1, 1), '101-200', 'the next one follows it');
SELECT is(pg_temp.acq('s', 'order', 100, 1, 3), '201-500', 'count segments in one call: one range');
SELECT is(pg_temp.acq('s', 'order', 7, 1, 2), '501-514', 'another step: the range still starts above the last number');
SELECT is(pg_temp.acq('s', 'order', 100, 300, 1), '515-614', 'a start below the last number changes nothing');
SELECT is(pg_temp.acq('s', 'order', 100, 10000, 1), '10000-10099', 'a start above it is a floor: the counter jumps');
SELECT is(pg_temp.acq('s', 'order', 1, 1, 1), '10100-10100', 'and carries on from there');
SELECT is(pg_temp.acq('s', 'invoice', 10, 0, 1), '0-9', 'another name counts on its own, from 0 if asked');
SELECT is(pg_temp.acq('t', 'order', 10, 1, 1), '1-10', 'so does the same name in another namespace');
SELECT is(pg_temp.acq('s', 'Order', 10, 1, 1), '1-10', 'names are case-sensitive (generator names are)');
SELECT results_eq($$SELECT namespace, name, last_number, fetches FROM cosid.segment_counter
	WHERE namespace IN ('s', 't') AND database = 'db1' ORDER BY namespace, name$$,
	$$VALUES ('s', 'Order', 10::bigint, 1::bigint), ('s', 'invoice', 9, 1), ('s', 'order', 10100, 7), ('t', 'order', 10, 1)$$,
	'the table: the last number handed out and the fetches, per namespace and name');
SELECT ok((SELECT updated_at >= now() FROM cosid.segment_counter WHERE namespace = 's' AND name = 'order'),
	'and when');
SELECT is(pg_temp.acq('s', 'big', 1000000000, 1, 100000), '1-100000000000000',
	'the largest request: 100000 segments of 10^9');
-- a name with quotes and a semicolon is a value, never SQL
SELECT is(pg_temp.acq('s', $n$x'); DROP TABLE cosid.segment_counter; --$n$, 5, 1, 1), '1-5',
	'a hostile name is only a key');
SELECT has_table('cosid', 'segment_counter', 'the table is still there');

-- ---- the range never repeats, whatever the calls
SELECT is((SELECT count(*)::int FROM (
	SELECT r.first, r.last, lag(r.last) OVER (ORDER BY r.first) AS prev_last
	FROM generate_series(1, 200) i,
		 LATERAL cosid.segment_acquire('s', 'db1', 'many', 'alice', 1 + i % 13, CASE WHEN i % 50 = 0 THEN i * 40 ELSE 1 END,
									  1 + i % 4) r) x
	WHERE x.prev_last >= x.first OR x.last < x.first), 0,
	'200 calls with mixed steps, counts and starts: every range above the one before');

-- ---- bad arguments: 22023
SELECT throws_ok($$SELECT * FROM cosid.segment_acquire('', 'db1', 'x', 'alice', 10, 1, 1)$$, '22023',
	'invalid cosid segment request: the namespace, the database, the name and the owner must not be empty', 'an empty namespace');
SELECT throws_ok($$SELECT * FROM cosid.segment_acquire('s', 'db1', '', 'alice', 10, 1, 1)$$, '22023',
	'invalid cosid segment request: the namespace, the database, the name and the owner must not be empty', 'an empty name');
SELECT throws_ok($$SELECT * FROM cosid.segment_acquire('s', 'db1', 'x', 'alice', 0, 1, 1)$$, '22023',
	'invalid cosid segment request: step must be between 1 and 1000000000, not 0', 'step 0');
SELECT throws_ok($$SELECT * FROM cosid.segment_acquire('s', 'db1', 'x', 'alice', -5, 1, 1)$$, '22023',
	'invalid cosid segment request: step must be between 1 and 1000000000, not -5', 'a negative step');
SELECT throws_ok($$SELECT * FROM cosid.segment_acquire('s', 'db1', 'x', 'alice', 1000000001, 1, 1)$$, '22023',
	'invalid cosid segment request: step must be between 1 and 1000000000, not 1000000001', 'a step above 10^9');
SELECT throws_ok($$SELECT * FROM cosid.segment_acquire('s', 'db1', 'x', 'alice', 10, 1, 0)$$, '22023',
	'invalid cosid segment request: count must be between 1 and 100000, not 0', 'count 0');
SELECT throws_ok($$SELECT * FROM cosid.segment_acquire('s', 'db1', 'x', 'alice', 10, 1, 100001)$$, '22023',
	'invalid cosid segment request: count must be between 1 and 100000, not 100001', 'count above 100000');
SELECT throws_ok($$SELECT * FROM cosid.segment_acquire('s', 'db1', 'x', 'alice', 10, -1, 1)$$, '22023',
	'invalid cosid segment request: start must not be negative, not -1', 'a negative start');
SELECT is((SELECT count(*)::int FROM cosid.segment_acquire(NULL, 'db1', 'x', 'alice', 10, 1, 1) WHERE first IS NOT NULL), 0,
	'strict: a NULL argument hands out nothing');
SELECT is((SELECT count(*)::int FROM cosid.segment_counter WHERE namespace IN ('s', '') AND name IN ('x', '')), 0,
	'refused requests leave no counter');

-- ---- overflow: 22003
SELECT throws_ok($$SELECT * FROM cosid.segment_acquire('s', 'db1', 'x', 'alice', 100, 9223372036854775800, 1)$$, '22003',
	'cosid segment counter "x" of database "db1" in namespace "s" cannot go past 9223372036854775807',
	'a first range past 2^63 - 1');
SELECT is(pg_temp.acq('s', 'top', 8, 9223372036854775800, 1), '9223372036854775800-9223372036854775807',
	'the last range that fits');
SELECT throws_ok($$SELECT * FROM cosid.segment_acquire('s', 'db1', 'top', 'alice', 1, 1, 1)$$, '22003',
	'cosid segment counter "top" of database "db1" in namespace "s" cannot go past 9223372036854775807',
	'then nothing more: 22003');
SELECT is((SELECT last_number FROM cosid.segment_counter WHERE namespace = 's' AND name = 'top'),
	9223372036854775807::bigint, 'and the counter stays where it was');
UPDATE cosid.segment_counter SET last_number = 9223372036854775000 WHERE namespace = 's' AND name = 'order';
SELECT is(pg_temp.acq('s', 'order', 800, 1, 1), '9223372036854775001-9223372036854775800',
	'near the top, a range that fits');
SELECT throws_ok($$SELECT * FROM cosid.segment_acquire('s', 'db1', 'order', 'alice', 8, 1, 1)$$, '22003',
	'cosid segment counter "order" of database "db1" in namespace "s" cannot go past 9223372036854775807',
	'one that does not: 22003');

-- ---- the commit is durable whatever the caller set
SET LOCAL synchronous_commit = off;
SELECT lives_ok($$SELECT * FROM cosid.segment_acquire('s', 'db1', 'durable', 'alice', 10, 1, 1)$$, 'acquire with synchronous_commit off');
SELECT is(current_setting('synchronous_commit'), 'on',
	'it turned synchronous_commit on for the transaction (a store crash cannot lose a range it gave)');

-- ---- privileges
CREATE ROLE cosid_segment_nobody;
SELECT ok(NOT has_function_privilege('cosid_segment_nobody',
	'cosid.segment_acquire(text, text, text, text, bigint, bigint, integer)', 'EXECUTE'),
	'EXECUTE on segment_acquire is not granted to PUBLIC');
SELECT is(pg_temp.as_role('cosid_segment_nobody', $$SELECT first::text FROM cosid.segment_acquire('s_role', 'db1', 'x', 'alice', 10, 1, 1)$$),
	'42501: permission denied for function segment_acquire', 'a role without EXECUTE gets no range');
SELECT ok(has_any_column_privilege('cosid_segment_nobody', 'cosid.segment_counter', 'SELECT'),
	'everyone may read the counters');
SELECT ok(NOT has_table_privilege('cosid_segment_nobody', 'cosid.segment_counter', 'INSERT')
	  AND NOT has_table_privilege('cosid_segment_nobody', 'cosid.segment_counter', 'UPDATE')
	  AND NOT has_table_privilege('cosid_segment_nobody', 'cosid.segment_counter', 'DELETE')
	  AND NOT has_table_privilege('cosid_segment_nobody', 'cosid.segment_counter', 'TRUNCATE'),
	'nobody else may write them');
GRANT USAGE ON SCHEMA cosid TO cosid_segment_nobody;
GRANT EXECUTE ON FUNCTION cosid.segment_acquire(text, text, text, text, bigint, bigint, integer) TO cosid_segment_nobody;
SELECT is(pg_temp.as_role('cosid_segment_nobody',
	$$SELECT first || '-' || last FROM cosid.segment_acquire('s_role', 'db1', 'x', 'alice', 10, 1, 1)$$),
	'1-10', 'granted EXECUTE, it gets a range though it may not write the table (SECURITY DEFINER)');
SELECT is(pg_temp.as_role('cosid_segment_nobody',
	$$UPDATE cosid.segment_counter SET last_number = 0 RETURNING 'updated'$$),
	'42501: permission denied for table segment_counter', 'but it cannot move a counter back itself');
SELECT is(pg_temp.as_role('cosid_segment_nobody',
	$$DELETE FROM cosid.segment_counter RETURNING 'deleted'$$),
	'42501: permission denied for table segment_counter', 'nor delete one');
SELECT is(pg_temp.as_role('cosid_segment_nobody',
	$$SELECT last_number::text FROM cosid.segment_counter WHERE namespace = 's_role'$$),
	'10', 'it reads the counters');

-- ---- a counter belongs to someone (1.3)
SELECT results_eq($$SELECT database, owner, store_role = session_user::text FROM cosid.segment_counter
	WHERE namespace = 's' AND name = 'order'$$,
	$$VALUES ('db1'::text, 'alice'::text, true)$$,
	'a counter records its database name, the generators'' owner and the store role that created it');
SELECT is((SELECT count(*)::int FROM cosid.segment_counter WHERE owner IS NOT NULL AND database <> ''),
	(SELECT count(*)::int FROM cosid.segment_counter), 'every counter made by 1.3 has all three');
SELECT is(pg_temp.acq2('s', 'db2', 'order', 'mallory', 10, 4611686018427387904, 1),
	'4611686018427387904-4611686018427387913',
	'the same name in another database is another counter: a start of 2^62 moves only that one');
SELECT is(pg_temp.acq('s', 'order', 1, 1, 1), '9223372036854775801-9223372036854775801',
	'the first database''s counter did not move');
UPDATE cosid.segment_counter SET last_number = 10100 WHERE namespace = 's' AND database = 'db1' AND name = 'order';
SELECT throws_ok($$SELECT * FROM cosid.segment_acquire('s', 'db1', 'order', 'mallory', 10, 4611686018427387904, 1)$$,
	'42501', 'cosid segment counter "order" of database "db1" in namespace "s" belongs to another owner',
	'another owner''s generator of the same database and name may not use it: 42501');
SELECT is((SELECT last_number FROM cosid.segment_counter WHERE namespace = 's' AND database = 'db1' AND name = 'order'),
	10100::bigint, 'so it cannot re-base it with start');
SELECT is(pg_temp.acq('s', 'order', 10, 1, 1), '10101-10110', 'its owner carries on');
SELECT throws_ok($$SELECT * FROM cosid.segment_acquire('s', 'db1', 'order', 'Alice', 10, 1, 1)$$,
	'42501', NULL, 'owner names are compared exactly');
SELECT throws_ok($$SELECT * FROM cosid.segment_acquire('s', '', 'x', 'alice', 10, 1, 1)$$, '22023',
	'invalid cosid segment request: the namespace, the database, the name and the owner must not be empty',
	'an empty database name: 22023');
SELECT throws_ok($$SELECT * FROM cosid.segment_acquire('s', 'db1', 'x', '', 10, 1, 1)$$, '22023',
	'invalid cosid segment request: the namespace, the database, the name and the owner must not be empty',
	'an empty owner: 22023');

-- a counter from 1.2 (database ''): no request names it; a new counter of
-- its namespace and name starts above it
INSERT INTO cosid.segment_counter (namespace, name, last_number) VALUES ('s', 'legacy', 5000);
SELECT is(pg_temp.acq('s', 'legacy', 10, 1, 1), '5001-5010', 'a new counter starts above the 1.2 counter of its name');
SELECT is(pg_temp.acq2('s', 'db2', 'legacy', 'bob', 10, 1, 1), '5001-5010',
	'in every database (each had numbers from the one 1.2 counter)');
SELECT is((SELECT last_number FROM cosid.segment_counter WHERE namespace = 's' AND database = '' AND name = 'legacy'),
	5000::bigint, 'the 1.2 counter stays as it was');
SELECT throws_ok($$INSERT INTO cosid.segment_counter (namespace, name, last_number, database) VALUES ('s', 'half', 1, 'db1')$$,
	'23514', NULL, 'a 1.3 counter without owner and store role is refused by the table');

-- store roles: a counter is for the role that created it, and for the roles
-- a superuser of the store granted it to (1.4; 1.3 also let any role that
-- shares with its creator a role granted EXECUTE on the function, which
-- could then re-base it)
CREATE ROLE cosid_seg_servers;
CREATE ROLE cosid_seg_a IN ROLE cosid_seg_servers;
CREATE ROLE cosid_seg_b IN ROLE cosid_seg_servers;
CREATE ROLE cosid_seg_c;
GRANT EXECUTE ON FUNCTION cosid.segment_acquire(text, text, text, text, bigint, bigint, integer)
	TO cosid_seg_servers, cosid_seg_c;
SELECT is(pg_temp.as_session('cosid_seg_a',
	$$SELECT first || '-' || last FROM cosid.segment_acquire('s', 'db1', 'ab', 'alice', 10, 1, 1)$$),
	'1-10', 'store role a creates a counter');
SELECT is((SELECT store_role FROM cosid.segment_counter WHERE namespace = 's' AND database = 'db1' AND name = 'ab'),
	'cosid_seg_a', 'it is recorded as the counter''s store role (session_user)');
SELECT is(pg_temp.as_session('cosid_seg_b',
	$$SELECT first || '-' || last FROM cosid.segment_acquire('s', 'db1', 'ab', 'alice', 10, 9223372036754775806, 1)$$),
	'42501: cosid segment counter "ab" of database "db1" in namespace "s" belongs to another store role',
	'store role b, a member of the same role granted EXECUTE, may not use it, nor re-base it (1.4)');
SELECT is(pg_temp.as_session('cosid_seg_b',
	$$SELECT first || '-' || last FROM cosid.segment_acquire('s', 'db1', 'ab', 'alice', 10, 1, 1)$$),
	'42501: cosid segment counter "ab" of database "db1" in namespace "s" belongs to another store role',
	'not even from the bottom');
SELECT is(pg_temp.as_session('cosid_seg_b',
	$$INSERT INTO cosid.segment_counter_grant VALUES ('s', 'db1', 'ab', 'cosid_seg_b') RETURNING 'granted'$$),
	'42501: permission denied for table segment_counter_grant', 'nor grant it to itself');
INSERT INTO cosid.segment_counter_grant VALUES ('s', 'db1', 'ab', 'cosid_seg_b');
SELECT is(pg_temp.as_session('cosid_seg_b',
	$$SELECT first || '-' || last FROM cosid.segment_acquire('s', 'db1', 'ab', 'alice', 10, 1, 1)$$),
	'11-20', 'once the store''s superuser grants it to b, b shares it');
SELECT is(pg_temp.as_session('cosid_seg_b',
	$$SELECT first || '-' || last FROM cosid.segment_acquire('s', 'db1', 'ab', 'alice', 10, 9223372036754775806, 1)$$),
	'42501: cosid segment counter "ab" of database "db1" in namespace "s" can be raised only by the store role that created it',
	'but b cannot re-base it to 9223372036754775806');
SELECT is(pg_temp.as_session('cosid_seg_b',
	$$SELECT first || '-' || last FROM cosid.segment_acquire('s', 'db1', 'ab', 'alice', 10, 15, 1)$$),
	'21-30', 'a start at or below the counter is fine');
SELECT is(pg_temp.as_session('cosid_seg_b',
	$$SELECT first || '-' || last FROM cosid.segment_acquire('s', 'db1', 'ab', 'mallory', 10, 1, 1)$$),
	'42501: cosid segment counter "ab" of database "db1" in namespace "s" belongs to another owner',
	'the grant is for the counter of its owner only');
SELECT is(pg_temp.as_session('cosid_seg_c',
	$$SELECT first || '-' || last FROM cosid.segment_acquire('s', 'db1', 'ab', 'alice', 10, 4611686018427387904, 1)$$),
	'42501: cosid segment counter "ab" of database "db1" in namespace "s" belongs to another store role',
	'store role c, granted EXECUTE on its own, may not use it (nor move it)');
SELECT is(pg_temp.as_session('cosid_seg_a',
	$$SELECT first || '-' || last FROM cosid.segment_acquire('s', 'db1', 'ab', 'alice', 10, 1, 1)$$),
	'31-40', 'the counter did not move');
SELECT is(pg_temp.as_session('cosid_seg_c',
	$$SELECT first || '-' || last FROM cosid.segment_acquire('s', 'db1', 'c_own', 'alice', 10, 1, 1)$$),
	'1-10', 'c has counters of its own');
SELECT is(pg_temp.as_session('cosid_seg_a',
	$$SELECT first || '-' || last FROM cosid.segment_acquire('s', 'db1', 'c_own', 'alice', 10, 1, 1)$$),
	'42501: cosid segment counter "c_own" of database "db1" in namespace "s" belongs to another store role',
	'which a and b may not use');
SELECT is(pg_temp.as_session('cosid_seg_a',
	$$SELECT first || '-' || last FROM cosid.segment_acquire('s', 'db1', 'ab', 'alice', 10, 1001, 1)$$),
	'1001-1010', 'its creator may raise its own counter');
SELECT is(pg_temp.as_session('cosid_seg_a', $$SELECT 'locked' FROM cosid.segment_counter FOR UPDATE$$),
	'42501: permission denied for table segment_counter', 'a store role cannot lock a counter itself');
SELECT is((SELECT array_agg(attname::text ORDER BY attnum) FROM pg_attribute
	WHERE attrelid = 'cosid.segment_counter'::regclass AND attnum > 0 AND NOT attisdropped
	  AND has_column_privilege('cosid_segment_nobody', 'cosid.segment_counter'::regclass, attnum, 'SELECT')),
	ARRAY['namespace', 'name', 'last_number', 'fetches', 'updated_at', 'database'],
	'PUBLIC reads every column but owner and store_role');
SELECT is(pg_temp.as_role('cosid_segment_nobody', $$SELECT count(*)::text FROM cosid.segment_counter_grant$$),
	'42501: permission denied for table segment_counter_grant', 'nor the grants, which name store roles (1.4)');

-- ---- the caller's search_path and objects do not reach it
CREATE SCHEMA segment_hostile;
GRANT USAGE, CREATE ON SCHEMA segment_hostile TO cosid_segment_nobody;
SET LOCAL ROLE cosid_segment_nobody;
CREATE TABLE segment_hostile.segment_counter (namespace text, name text, last_number bigint,
	fetches bigint, updated_at timestamptz);
CREATE FUNCTION segment_hostile.greatest_hostile(bigint, bigint) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
CREATE FUNCTION segment_hostile.plus(bigint, bigint) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
CREATE OPERATOR segment_hostile.+ (LEFTARG = bigint, RIGHTARG = bigint, PROCEDURE = segment_hostile.plus);
CREATE FUNCTION segment_hostile.set_config(text, text, boolean) RETURNS text LANGUAGE sql AS $$SELECT 'hijacked'$$;
SET LOCAL search_path = segment_hostile, pg_catalog;
CREATE TEMP TABLE hostile_result AS
	SELECT first || '-' || last AS r FROM cosid.segment_acquire('s_role', 'db1', 'x', 'alice', 10, 1, 1);
RESET ROLE;
RESET search_path;
SELECT is((SELECT r FROM hostile_result), '11-20',
	'with a hostile search_path (its own +, set_config, segment_counter first), the store counts as ever');
SELECT is((SELECT count(*)::int FROM segment_hostile.segment_counter), 0, 'and never touched the hostile table');

SELECT * FROM finish();
ROLLBACK;
