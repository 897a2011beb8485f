-- pgTAP: the lease store's functions (cosid.lease_acquire, lease_renew,
-- lease_release) and table, called directly as the servers' workers call
-- them: acquire/renew/release/takeover rules, privileges, security.
-- Namespaces 'p', 'q' and 'p_role'; all undone by the ROLLBACK.
BEGIN;
SELECT plan(58);

-- helpers: the DETAIL of the error a statement raises; a statement run as
-- another role (its first value, or 'SQLSTATE: message')
CREATE FUNCTION pg_temp.error_detail(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	d text;
BEGIN
	EXECUTE q;
	RETURN '(no error)';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN d;
END
$f$;
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
DELETE FROM cosid.lease WHERE namespace IN ('p', 'q', 'p_role');

-- ---- shape
SELECT has_table('cosid', 'lease', 'table cosid.lease exists');
SELECT col_is_pk('cosid', 'lease', ARRAY['namespace', 'slot'], 'one row per slot of a namespace');
SELECT has_function('cosid', 'lease_acquire', ARRAY['text', 'text', 'integer', 'interval']);
SELECT has_function('cosid', 'lease_renew', ARRAY['text', 'integer', 'text', 'bigint', 'interval']);
SELECT has_function('cosid', 'lease_release', ARRAY['text', 'integer', 'text', 'bigint']);
SELECT is((SELECT count(*)::int FROM pg_proc
	WHERE oid IN ('cosid.lease_acquire(text, text, integer, interval)'::regprocedure,
				  'cosid.lease_renew(text, integer, text, bigint, interval)'::regprocedure,
				  'cosid.lease_release(text, integer, text, bigint)'::regprocedure)
	  AND prosecdef),
	3, 'the three functions are SECURITY DEFINER');
SELECT is((SELECT count(*)::int FROM pg_proc
	WHERE oid IN ('cosid.lease_acquire(text, text, integer, interval)'::regprocedure,
				  'cosid.lease_renew(text, integer, text, bigint, interval)'::regprocedure,
				  'cosid.lease_release(text, integer, text, bigint)'::regprocedure)
	  AND proconfig = ARRAY['search_path=pg_catalog, pg_temp']),
	3, 'with a fixed search_path (pg_catalog, pg_temp)');
SELECT is((SELECT count(*)::int FROM pg_proc
	WHERE oid IN ('cosid.lease_acquire(text, text, integer, interval)'::regprocedure,
				  'cosid.lease_renew(text, integer, text, bigint, interval)'::regprocedure,
				  'cosid.lease_release(text, integer, text, bigint)'::regprocedure)
	  AND provolatile = 'v' AND proisstrict AND proparallel = 'u'),
	3, 'volatile, strict, parallel unsafe');

-- ---- privileges
CREATE ROLE cosid_lease_nobody;
SELECT ok(NOT has_function_privilege('cosid_lease_nobody',
	'cosid.lease_acquire(text, text, integer, interval)', 'EXECUTE'),
	'EXECUTE on lease_acquire is not granted to PUBLIC');
SELECT ok(NOT has_function_privilege('cosid_lease_nobody',
	'cosid.lease_renew(text, integer, text, bigint, interval)', 'EXECUTE'),
	'EXECUTE on lease_renew is not granted to PUBLIC');
SELECT ok(NOT has_function_privilege('cosid_lease_nobody',
	'cosid.lease_release(text, integer, text, bigint)', 'EXECUTE'),
	'EXECUTE on lease_release is not granted to PUBLIC');
SELECT ok(has_table_privilege('cosid_lease_nobody', 'cosid.lease', 'SELECT'), 'everyone may read cosid.lease');
SELECT ok(NOT has_table_privilege('cosid_lease_nobody', 'cosid.lease', 'INSERT')
	  AND NOT has_table_privilege('cosid_lease_nobody', 'cosid.lease', 'UPDATE')
	  AND NOT has_table_privilege('cosid_lease_nobody', 'cosid.lease', 'DELETE'),
	'nobody else may write it');
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$SELECT slot::text FROM cosid.lease_acquire('p_role', 'x', 4, '1 minute')$$),
	'42501: permission denied for function lease_acquire', 'a role without EXECUTE cannot take a slot');
GRANT EXECUTE ON FUNCTION cosid.lease_acquire(text, text, integer, interval) TO cosid_lease_nobody;
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$SELECT slot || '/' || previous_end FROM cosid.lease_acquire('p_role', 'x', 4, '1 minute')$$),
	'0/0', 'granted EXECUTE, it takes a slot though it may not write cosid.lease (SECURITY DEFINER)');
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$UPDATE cosid.lease SET instance = 'mine' RETURNING 'updated'$$),
	'42501: permission denied for table lease', 'but it cannot write the table itself');

-- ---- acquire: lowest free slot first
SELECT results_eq($$SELECT slot, previous_end FROM cosid.lease_acquire('p', 'a', 4, '1 minute')$$,
	$$VALUES (0, 0::bigint)$$, 'the first instance gets slot 0, no previous end');
SELECT ok((SELECT expires_at BETWEEN clock_timestamp() + interval '55 seconds' AND clock_timestamp() + interval '60 seconds'
	FROM cosid.lease WHERE namespace = 'p' AND slot = 0 AND instance = 'a'),
	'its lease expires a TTL from now');
SELECT results_eq($$SELECT slot, previous_end, expires_at > clock_timestamp() + interval '55 seconds'
	FROM cosid.lease_acquire('p', 'b', 4, '1 minute')$$,
	$$VALUES (1, 0::bigint, true)$$, 'a second instance gets the next slot, 1; acquire returns its expiry');

-- ---- renew
SELECT ok(cosid.lease_renew('p', 0, 'a', 5000, '1 minute') > clock_timestamp() + interval '55 seconds',
	'renew returns the new expiry');
SELECT is((SELECT window_end FROM cosid.lease WHERE namespace = 'p' AND slot = 0), 5000::bigint,
	'renew records the window end');
UPDATE cosid.lease SET expires_at = clock_timestamp() + interval '10 seconds' WHERE namespace = 'p' AND slot = 0;
SELECT lives_ok($$SELECT cosid.lease_renew('p', 0, 'a', 3000, '1 minute')$$, 'renew with a lower window end');
SELECT is((SELECT window_end FROM cosid.lease WHERE namespace = 'p' AND slot = 0), 5000::bigint,
	'the recorded window end never goes down (greatest)');
SELECT ok((SELECT expires_at > clock_timestamp() + interval '55 seconds' FROM cosid.lease
	WHERE namespace = 'p' AND slot = 0), 'renew extends the lease by the TTL');
SELECT throws_ok($$SELECT cosid.lease_renew('p', 0, 'b', 9000, '1 minute')$$, '55000',
	'cosid lease of slot 0 in namespace "p" is no longer held by b',
	'renew by an instance that does not hold the slot: 55000');
SELECT throws_ok($$SELECT cosid.lease_renew('p', 3, 'a', 9000, '1 minute')$$, '55000',
	'cosid lease of slot 3 in namespace "p" is no longer held by a',
	'renew of a slot never leased: 55000');
SELECT is((SELECT window_end FROM cosid.lease WHERE namespace = 'p' AND slot = 0), 5000::bigint,
	'a refused renewal records nothing');

-- ---- the same instance again: its own live lease
SELECT results_eq($$SELECT slot, previous_end FROM cosid.lease_acquire('p', 'a', 4, '1 minute')$$,
	$$VALUES (0, 5000::bigint)$$, 'the same instance gets its own live lease back, with its recorded end');
SELECT is((SELECT count(*)::int FROM cosid.lease WHERE namespace = 'p'), 2, 'and takes no other slot');

-- ---- namespaces are separate
SELECT results_eq($$SELECT slot, previous_end FROM cosid.lease_acquire('q', 'b', 4, '1 minute')$$,
	$$VALUES (0, 0::bigint)$$, 'in another namespace, slot 0 is free');

-- ---- no free slot
SELECT is((SELECT slot FROM cosid.lease_acquire('p', 'c', 4, '1 minute')), 2, 'c gets slot 2');
SELECT is((SELECT slot FROM cosid.lease_acquire('p', 'd', 4, '1 minute')), 3, 'd gets slot 3');
SELECT throws_ok($$SELECT * FROM cosid.lease_acquire('p', 'e', 4, '1 minute')$$, '55000',
	'no free slot in cosid namespace "p"', 'all 4 slots held: 55000 naming the namespace');
SELECT is(pg_temp.error_detail($$SELECT * FROM cosid.lease_acquire('p', 'e', 4, '1 minute')$$),
	'All 4 slots (cosid.machine_bits = 2) are held by live leases.', 'the detail names cosid.machine_bits');
SELECT is((SELECT count(*)::int FROM cosid.lease WHERE instance = 'e'), 0, 'e holds nothing');

-- ---- release
SELECT is(cosid.lease_release('p', 1, 'b', 4200), true, 'the holder releases its slot: true');
SELECT results_eq($$SELECT instance, window_end, expires_at <= clock_timestamp()
	FROM cosid.lease WHERE namespace = 'p' AND slot = 1$$,
	$$VALUES (NULL::text, 4200::bigint, true)$$, 'a released slot: no instance, the true last end, expired');
SELECT is(cosid.lease_release('p', 1, 'b', 4300), false, 'releasing it again: false');
SELECT is(cosid.lease_release('p', 0, 'b', 1), false, 'another instance cannot release a slot');
SELECT results_eq($$SELECT instance, window_end FROM cosid.lease WHERE namespace = 'p' AND slot = 0$$,
	$$VALUES ('a'::text, 5000::bigint)$$, 'and changes nothing');
SELECT throws_ok($$SELECT cosid.lease_renew('p', 1, 'b', 4400, '1 minute')$$, '55000',
	'cosid lease of slot 1 in namespace "p" is no longer held by b', 'a released lease cannot be renewed');
SELECT results_eq($$SELECT slot, previous_end FROM cosid.lease_acquire('p', 'e', 4, '1 minute')$$,
	$$VALUES (1, 4200::bigint)$$, 'the released slot is free: e gets it, starting at the released end');

-- ---- takeover of an expired lease
SELECT lives_ok($$SELECT cosid.lease_renew('p', 2, 'c', 7777, '1 minute')$$, 'c records window end 7777');
UPDATE cosid.lease SET expires_at = clock_timestamp() - interval '1 second' WHERE namespace = 'p' AND slot = 2;
SELECT results_eq($$SELECT slot, previous_end FROM cosid.lease_acquire('p', 'f', 4, '1 minute')$$,
	$$VALUES (2, 7777::bigint)$$, 'an expired lease is taken over; previous_end is the old holder''s window end');
SELECT results_eq($$SELECT instance, window_end, expires_at > clock_timestamp() FROM cosid.lease
	WHERE namespace = 'p' AND slot = 2$$,
	$$VALUES ('f'::text, 7777::bigint, true)$$, 'the slot is f''s, live, its window end kept');
SELECT throws_ok($$SELECT cosid.lease_renew('p', 2, 'c', 8000, '1 minute')$$, '55000',
	'cosid lease of slot 2 in namespace "p" is no longer held by c', 'the old holder''s renewal fails: 55000');
SELECT is(cosid.lease_release('p', 2, 'c', 8000), false, 'nor can it release the slot');
SELECT is((SELECT window_end FROM cosid.lease WHERE namespace = 'p' AND slot = 2), 7777::bigint,
	'its late window end is not recorded');

-- ---- lowest free first, among released and expired slots
SELECT is(cosid.lease_release('p', 3, 'd', 100), true, 'd releases slot 3');
SELECT is(cosid.lease_release('p', 0, 'a', 5100), true, 'a releases slot 0');
SELECT results_eq($$SELECT slot, previous_end FROM cosid.lease_acquire('p', 'g', 4, '1 minute')$$,
	$$VALUES (0, 5100::bigint)$$, 'the next instance gets the lowest free slot, 0, not 3');
SELECT results_eq($$SELECT slot, previous_end FROM cosid.lease_acquire('p', 'a', 4, '1 minute')$$,
	$$VALUES (3, 100::bigint)$$, 'an instance whose lease was released gets no special treatment: slot 3');

-- ---- a lease not renewed within its TTL expires by the clock
SELECT is((SELECT slot FROM cosid.lease_acquire('q', 'h', 4, '1 second')), 1, 'h takes slot 1 of q for 1 second');
SELECT lives_ok($$SELECT cosid.lease_renew('q', 1, 'h', 999, '1 second')$$, 'h records window end 999');
SELECT pg_sleep(1.2);
SELECT results_eq($$SELECT slot, previous_end FROM cosid.lease_acquire('q', 'i', 4, '1 minute')$$,
	$$VALUES (1, 999::bigint)$$, 'after its TTL, h''s lease is taken over with its window end');

-- ---- bad requests
SELECT throws_ok($$SELECT * FROM cosid.lease_acquire('p', 'z', 0, '1 minute')$$, '22023', NULL,
	'no slots: 22023');
SELECT throws_ok($$SELECT * FROM cosid.lease_acquire('p', 'z', 4, '0 seconds')$$, '22023', NULL,
	'a TTL of 0: 22023');
SELECT is((SELECT count(*)::int FROM cosid.lease_acquire(NULL, 'z', 4, '1 minute') WHERE slot IS NOT NULL), 0,
	'strict: a NULL namespace takes no slot');

SELECT * FROM finish();
ROLLBACK;
