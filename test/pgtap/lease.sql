-- pgTAP: the lease store's functions (cosid.lease_acquire, lease_renew,
-- lease_release) and table, called directly as the servers' workers call
-- them: acquire/renew/release/takeover rules, fencing tokens, holder roles,
-- window ends ahead of the store's clock, argument checks, privileges,
-- security.
-- The store trusts only superusers (1.4): the largest TTL of a namespace,
-- the cap on the end a new holder waits for, schema cosid closed to others.
-- Namespaces 'p', 'q', 'p_role', 'p31', 'p1', 'p_holder' and 'p_cap'; all
-- undone by the ROLLBACK.
BEGIN;
SELECT plan(193);
-- a free-slot search that enumerated slots would run into this, not hang
SET LOCAL statement_timeout = '20s';

-- helpers: the DETAIL of the error a statement raises; a statement run as
-- another role (its first value, or 'SQLSTATE: message'); how long a
-- statement takes, error or not (ms)
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
-- a statement run with another session_user (a server logged in as that
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
CREATE FUNCTION pg_temp.elapsed_ms(q text) RETURNS double precision LANGUAGE plpgsql AS $f$
DECLARE
	t0 timestamptz := clock_timestamp();
BEGIN
	BEGIN
		EXECUTE q;
	EXCEPTION WHEN OTHERS THEN
		NULL;
	END;
	RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END
$f$;

-- the tokens the acquires below returned, as a worker keeps them
CREATE TEMP TABLE tokens (namespace text, instance text, slot integer, token uuid,
						  PRIMARY KEY (namespace, instance));
CREATE FUNCTION pg_temp.acquire(ns text, inst text, bits integer, ttl interval,
								OUT slot integer, OUT previous_end bigint) LANGUAGE plpgsql AS $f$
DECLARE
	r record;
BEGIN
	SELECT * INTO r FROM cosid.lease_acquire(ns, inst, bits, ttl);
	INSERT INTO tokens VALUES (ns, inst, r.slot, r.token)
	ON CONFLICT ON CONSTRAINT tokens_pkey DO UPDATE SET slot = EXCLUDED.slot, token = EXCLUDED.token;
	slot := r.slot;
	previous_end := r.previous_end;
END
$f$;
CREATE FUNCTION pg_temp.tok(ns text, inst text) RETURNS uuid LANGUAGE sql AS $f$
	SELECT t.token FROM tokens t WHERE t.namespace = ns AND t.instance = inst
$f$;
DELETE FROM cosid.lease WHERE namespace IN ('p', 'q', 'p_role', 'p31', 'p1', 'p_holder');
-- rows of cosid.lease this transaction has read so far (seq_tup_read and
-- idx_tup_fetch count as the scans go, visible to the transaction itself)
CREATE TEMP TABLE reads (what text PRIMARY KEY, n bigint);
CREATE FUNCTION pg_temp.lease_reads() RETURNS bigint LANGUAGE sql AS $f$
	SELECT coalesce(s.seq_tup_read, 0) + coalesce(s.idx_tup_fetch, 0)
	FROM pg_catalog.pg_stat_xact_user_tables s WHERE s.relid = 'cosid.lease'::regclass
$f$;
CREATE FUNCTION pg_temp.reads_since(what text) RETURNS bigint LANGUAGE sql AS $f$
	SELECT pg_temp.lease_reads() - r.n FROM reads r WHERE r.what = reads_since.what
$f$;

-- ---- shape
SELECT has_table('cosid', 'lease', 'table cosid.lease exists');
SELECT col_is_pk('cosid', 'lease', ARRAY['namespace', 'slot'], 'one row per slot of a namespace');
SELECT results_eq($$SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index
	WHERE indrelid = 'cosid.lease'::regclass AND NOT indisprimary ORDER BY 1$$,
	$$VALUES ('cosid.lease_instance', 'CREATE INDEX lease_instance ON cosid.lease USING hash (instance)'),
			 ('cosid.lease_released', 'CREATE INDEX lease_released ON cosid.lease USING btree (namespace, slot) WHERE (instance IS NULL)')$$,
	'(1.4) an acquire finds its own lease (hash: an instance id of any length) and the lowest released slot by index');
SELECT col_type_is('cosid', 'lease', 'token', 'uuid', 'cosid.lease keeps a uuid fencing token');
SELECT has_function('cosid', 'lease_acquire', ARRAY['text', 'text', 'integer', 'interval']);
SELECT has_function('cosid', 'lease_renew', ARRAY['text', 'integer', 'text', 'uuid', 'bigint', 'interval']);
SELECT has_function('cosid', 'lease_release', ARRAY['text', 'integer', 'text', 'uuid', 'bigint']);
SELECT hasnt_function('cosid', 'lease_renew', ARRAY['text', 'integer', 'text', 'bigint', 'interval'],
	'the 1.0 lease_renew without a token is gone');
SELECT hasnt_function('cosid', 'lease_release', ARRAY['text', 'integer', 'text', 'bigint'],
	'the 1.0 lease_release without a token is gone');
SELECT is(pg_get_function_arguments('cosid.lease_acquire(text, text, integer, interval)'::regprocedure),
	'namespace text, instance text, slot_bits integer, ttl interval, OUT slot integer, OUT previous_end bigint, '
	'OUT expires_at timestamp with time zone, OUT token uuid',
	'lease_acquire takes slot bits and returns slot, previous end, expiry and token');
SELECT is(pg_get_function_arguments('cosid.lease_renew(text, integer, text, uuid, bigint, interval)'::regprocedure),
	'namespace text, slot integer, instance text, token uuid, window_end bigint, ttl interval',
	'lease_renew takes the token after the instance');
SELECT is(pg_get_function_arguments('cosid.lease_release(text, integer, text, uuid, bigint)'::regprocedure),
	'namespace text, slot integer, instance text, token uuid, last_end bigint',
	'lease_release takes the token after the instance');
SELECT is((SELECT count(*)::int FROM pg_proc
	WHERE oid IN ('cosid.lease_acquire(text, text, integer, interval)'::regprocedure,
				  'cosid.lease_renew(text, integer, text, uuid, bigint, interval)'::regprocedure,
				  'cosid.lease_release(text, integer, text, uuid, bigint)'::regprocedure)
	  AND prosecdef),
	3, 'the three functions are SECURITY DEFINER');
SELECT is((SELECT count(*)::int FROM pg_proc
	WHERE oid IN ('cosid.lease_acquire(text, text, integer, interval)'::regprocedure,
				  'cosid.lease_renew(text, integer, text, uuid, bigint, interval)'::regprocedure,
				  'cosid.lease_release(text, integer, text, uuid, bigint)'::regprocedure)
	  AND proconfig[1] = 'search_path=pg_catalog, pg_temp'),
	3, 'with a fixed search_path (pg_catalog, pg_temp)');
SELECT results_eq($$SELECT p.oid::regprocedure::text, array_to_string(p.proconfig, '; ') COLLATE "default" FROM pg_proc p
	WHERE p.oid IN ('cosid.lease_acquire(text, text, integer, interval)'::regprocedure,
					'cosid.lease_renew(text, integer, text, uuid, bigint, interval)'::regprocedure,
					'cosid.lease_release(text, integer, text, uuid, bigint)'::regprocedure)
	ORDER BY 1$$,
	$$VALUES ('cosid.lease_acquire(text,text,integer,interval)', 'search_path=pg_catalog, pg_temp; lock_timeout=4s; deadlock_timeout=5s'),
			 ('cosid.lease_release(text,integer,text,uuid,bigint)', 'search_path=pg_catalog, pg_temp; lock_timeout=4s; deadlock_timeout=5s'),
			 ('cosid.lease_renew(text,integer,text,uuid,bigint,interval)', 'search_path=pg_catalog, pg_temp')$$,
	'(1.4) acquire and release wait at most 4 s for a lock, so they answer before the server gives up a call (5 s), and never run the deadlock check (deadlock_timeout is longer); a renewal sets nothing more');
SELECT is((SELECT count(*)::int FROM pg_proc
	WHERE oid IN ('cosid.lease_acquire(text, text, integer, interval)'::regprocedure,
				  'cosid.lease_renew(text, integer, text, uuid, bigint, interval)'::regprocedure,
				  'cosid.lease_release(text, integer, text, uuid, bigint)'::regprocedure)
	  AND provolatile = 'v' AND proisstrict AND proparallel = 'u'),
	3, 'volatile, strict, parallel unsafe');
SELECT is((SELECT count(*)::int FROM pg_proc
	WHERE oid IN ('cosid.lease_acquire(text, text, integer, interval)'::regprocedure,
				  'cosid.lease_renew(text, integer, text, uuid, bigint, interval)'::regprocedure,
				  'cosid.lease_release(text, integer, text, uuid, bigint)'::regprocedure)
	  AND obj_description(oid, 'pg_proc') IS NOT NULL),
	3, 'each has a comment');

-- ---- privileges
CREATE ROLE cosid_lease_nobody;
SELECT ok(NOT has_function_privilege('cosid_lease_nobody',
	'cosid.lease_acquire(text, text, integer, interval)', 'EXECUTE'),
	'EXECUTE on lease_acquire is not granted to PUBLIC');
SELECT ok(NOT has_function_privilege('cosid_lease_nobody',
	'cosid.lease_renew(text, integer, text, uuid, bigint, interval)', 'EXECUTE'),
	'EXECUTE on lease_renew is not granted to PUBLIC');
SELECT ok(NOT has_function_privilege('cosid_lease_nobody',
	'cosid.lease_release(text, integer, text, uuid, bigint)', 'EXECUTE'),
	'EXECUTE on lease_release is not granted to PUBLIC');
SELECT is((SELECT array_agg(attname::text ORDER BY attnum) FROM pg_attribute
	WHERE attrelid = 'cosid.lease'::regclass AND attnum > 0 AND NOT attisdropped
	  AND has_column_privilege('cosid_lease_nobody', 'cosid.lease'::regclass, attnum, 'SELECT')),
	ARRAY['namespace', 'slot', 'expires_at', 'window_end', 'acquired_at', 'renewed_at'],
	'everyone may read every column of cosid.lease but the instance, the token and the holder');
SELECT ok(NOT has_column_privilege('cosid_lease_nobody', 'cosid.lease', 'token', 'SELECT'),
	'PUBLIC may not read the token');
SELECT ok(NOT has_column_privilege('cosid_lease_nobody', 'cosid.lease', 'instance', 'SELECT')
	  AND NOT has_column_privilege('cosid_lease_nobody', 'cosid.lease', 'holder', 'SELECT'),
	'nor the instance ids and holder roles (1.3)');
SELECT ok(NOT has_table_privilege('cosid_lease_nobody', 'cosid.lease', 'INSERT')
	  AND NOT has_table_privilege('cosid_lease_nobody', 'cosid.lease', 'UPDATE')
	  AND NOT has_table_privilege('cosid_lease_nobody', 'cosid.lease', 'DELETE'),
	'nobody else may write it');
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$SELECT slot::text FROM cosid.lease_acquire('p_role', 'x', 2, '1 minute')$$),
	'42501: permission denied for function lease_acquire', 'a role without EXECUTE cannot take a slot');
GRANT EXECUTE ON FUNCTION cosid.lease_acquire(text, text, integer, interval) TO cosid_lease_nobody;
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$SELECT slot || '/' || previous_end || '/' || (token IS NOT NULL) FROM cosid.lease_acquire('p_role', 'x', 2, '1 minute')$$),
	'0/0/true', 'granted EXECUTE, it takes a slot (and its token) though it may not write cosid.lease (SECURITY DEFINER)');
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$UPDATE cosid.lease SET instance = 'mine' RETURNING 'updated'$$),
	'42501: permission denied for table lease', 'but it cannot write the table itself');
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$SELECT namespace || '/' || slot || '/' || (expires_at > now()) || '/' || window_end
		|| '/' || (acquired_at IS NOT NULL) || '/' || (renewed_at IS NOT NULL)
	  FROM cosid.lease WHERE namespace = 'p_role'$$),
	'p_role/0/true/0/true/true', 'PUBLIC reads the other columns of a lease');
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$SELECT instance FROM cosid.lease WHERE namespace = 'p_role'$$),
	'42501: permission denied for table lease', 'but not its instance id');
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$SELECT token::text FROM cosid.lease WHERE namespace = 'p_role'$$),
	'42501: permission denied for table lease', 'but not its token');
SELECT is(pg_temp.as_role('cosid_lease_nobody', $$SELECT count(l)::text FROM cosid.lease l$$),
	'42501: permission denied for table lease', 'nor the whole row');
SELECT is(pg_temp.as_role('cosid_lease_nobody', format(
	$$SELECT cosid.lease_renew('p_role', 0, 'x', %L, 1, '1 minute')::text$$,
	(SELECT token FROM cosid.lease WHERE namespace = 'p_role' AND slot = 0))),
	'42501: permission denied for function lease_renew', 'and, even with the token, without EXECUTE it cannot renew');

-- ---- acquire: lowest free slot first
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p', 'a', 2, '1 minute')$$,
	$$VALUES (0, 0::bigint)$$, 'the first instance gets slot 0, no previous end');
SELECT ok((SELECT expires_at BETWEEN clock_timestamp() + interval '55 seconds' AND clock_timestamp() + interval '60 seconds'
	FROM cosid.lease WHERE namespace = 'p' AND slot = 0 AND instance = 'a'),
	'its lease expires a TTL from now');
SELECT is((SELECT token FROM cosid.lease WHERE namespace = 'p' AND slot = 0), pg_temp.tok('p', 'a'),
	'the store keeps the token acquire returned');
SELECT results_eq($$SELECT slot, previous_end, expires_at > clock_timestamp() + interval '55 seconds', token IS NOT NULL
	FROM cosid.lease_acquire('p', 'b', 2, '1 minute')$$,
	$$VALUES (1, 0::bigint, true, true)$$, 'a second instance gets the next slot, 1; acquire returns its expiry and token');
SELECT lives_ok($$SELECT pg_temp.acquire('p', 'b', 2, '1 minute')$$, 'b again: its own lease (the test keeps this token)');
SELECT isnt(pg_temp.tok('p', 'a'), pg_temp.tok('p', 'b'), 'every lease has its own token');

-- ---- renew
SELECT ok(cosid.lease_renew('p', 0, 'a', pg_temp.tok('p', 'a'), 5000, '1 minute') > clock_timestamp() + interval '55 seconds',
	'renew with the token returns the new expiry');
SELECT is((SELECT window_end FROM cosid.lease WHERE namespace = 'p' AND slot = 0), 5000::bigint,
	'renew records the window end');
UPDATE cosid.lease SET expires_at = clock_timestamp() + interval '10 seconds' WHERE namespace = 'p' AND slot = 0;
SELECT lives_ok($$SELECT cosid.lease_renew('p', 0, 'a', pg_temp.tok('p', 'a'), 3000, '1 minute')$$,
	'renew with a lower window end');
SELECT is((SELECT window_end FROM cosid.lease WHERE namespace = 'p' AND slot = 0), 5000::bigint,
	'the recorded window end never goes down (greatest)');
SELECT ok((SELECT expires_at > clock_timestamp() + interval '55 seconds' FROM cosid.lease
	WHERE namespace = 'p' AND slot = 0), 'renew extends the lease by the TTL');
SELECT throws_ok($$SELECT cosid.lease_renew('p', 0, 'b', pg_temp.tok('p', 'b'), 9000, '1 minute')$$, '55000',
	'cosid lease of slot 0 in namespace "p" is no longer held by b',
	'renew by an instance that does not hold the slot (with its own token): 55000');
SELECT throws_ok($$SELECT cosid.lease_renew('p', 0, 'a', pg_temp.tok('p', 'b'), 9000, '1 minute')$$, '55000',
	'cosid lease of slot 0 in namespace "p" is no longer held by a',
	'renew by the holder''s instance id with another lease''s token: 55000');
SELECT throws_ok($$SELECT cosid.lease_renew('p', 0, 'a', gen_random_uuid(), 9000, '1 minute')$$, '55000',
	'cosid lease of slot 0 in namespace "p" is no longer held by a',
	'renew by the holder''s instance id with a made-up token: 55000');
SELECT is(cosid.lease_renew('p', 0, 'a', NULL, 9000, '1 minute'), NULL, 'renew without a token: NULL (strict)');
SELECT throws_ok($$SELECT cosid.lease_renew('p', 3, 'a', pg_temp.tok('p', 'a'), 9000, '1 minute')$$, '55000',
	'cosid lease of slot 3 in namespace "p" is no longer held by a',
	'renew of a slot never leased: 55000');
SELECT is((SELECT window_end FROM cosid.lease WHERE namespace = 'p' AND slot = 0), 5000::bigint,
	'a refused renewal records nothing');
SELECT throws_ok($$SELECT cosid.lease_renew('p', 0, 'a', pg_temp.tok('p', 'a'), 9000, '10 years')$$, '22023',
	'invalid cosid lease request: ttl must be between 1 second and 1 day, not 10 years', 'renew with a TTL of years: 22023');
SELECT throws_ok($$SELECT cosid.lease_renew('p', 0, 'a', pg_temp.tok('p', 'a'), 9000, '0')$$, '22023',
	'invalid cosid lease request: ttl must be between 1 second and 1 day, not 00:00:00', 'renew with a TTL of 0: 22023');
SELECT is((SELECT window_end FROM cosid.lease WHERE namespace = 'p' AND slot = 0), 5000::bigint,
	'and records nothing');

-- ---- the same instance again (a restart): its own live lease, a new token
SELECT results_eq($$SELECT slot, previous_end FROM cosid.lease_acquire('p', 'a', 2, '1 minute')$$,
	$$VALUES (0, 5000::bigint)$$, 'the same instance gets its own live lease back, with its recorded end');
SELECT is((SELECT count(*)::int FROM cosid.lease WHERE namespace = 'p'), 2, 'and takes no other slot');
SELECT isnt((SELECT token FROM cosid.lease WHERE namespace = 'p' AND slot = 0), pg_temp.tok('p', 'a'),
	'with a new token');
SELECT throws_ok($$SELECT cosid.lease_renew('p', 0, 'a', pg_temp.tok('p', 'a'), 9000, '1 minute')$$, '55000',
	'cosid lease of slot 0 in namespace "p" is no longer held by a',
	'the earlier holder under the same instance id is fenced off: its token no longer renews');
SELECT throws_ok($$SELECT cosid.lease_release('p', 0, 'a', pg_temp.tok('p', 'a'), 9000)$$, '55000',
	'cosid lease of slot 0 in namespace "p" is no longer held by a', 'nor releases');
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p', 'a', 2, '1 minute')$$,
	$$VALUES (0, 5000::bigint)$$, 'acquired once more (the test keeps this token)');
SELECT lives_ok($$SELECT cosid.lease_renew('p', 0, 'a', pg_temp.tok('p', 'a'), 5000, '1 minute')$$,
	'the newest token renews');

-- ---- namespaces are separate
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('q', 'b', 2, '1 minute')$$,
	$$VALUES (0, 0::bigint)$$, 'in another namespace, slot 0 is free');
SELECT throws_ok($$SELECT cosid.lease_renew('p', 1, 'b', pg_temp.tok('q', 'b'), 9000, '1 minute')$$, '55000',
	'cosid lease of slot 1 in namespace "p" is no longer held by b',
	'a token of another namespace does not renew');

-- ---- no free slot
SELECT is((SELECT slot FROM pg_temp.acquire('p', 'c', 2, '1 minute')), 2, 'c gets slot 2');
SELECT is((SELECT slot FROM pg_temp.acquire('p', 'd', 2, '1 minute')), 3, 'd gets slot 3');
SELECT throws_ok($$SELECT * FROM cosid.lease_acquire('p', 'e', 2, '1 minute')$$, '55000',
	'no free slot in cosid namespace "p"', 'all 4 slots held: 55000 naming the namespace');
SELECT is(pg_temp.error_detail($$SELECT * FROM cosid.lease_acquire('p', 'e', 2, '1 minute')$$),
	'All 4 slots (cosid.machine_bits = 2) are held by live leases.', 'the detail names cosid.machine_bits');
SELECT is((SELECT count(*)::int FROM cosid.lease WHERE instance = 'e'), 0, 'e holds nothing');

-- ---- release
SELECT lives_ok($$SELECT cosid.lease_renew('p', 1, 'b', pg_temp.tok('p', 'b'), 6000, '1 minute')$$,
	'b records window end 6000');
SELECT throws_ok($$SELECT cosid.lease_release('p', 1, 'b', gen_random_uuid(), 4200)$$, '55000',
	'cosid lease of slot 1 in namespace "p" is no longer held by b',
	'release by the holder''s instance id with a made-up token: 55000');
SELECT throws_ok($$SELECT cosid.lease_release('p', 1, 'b', pg_temp.tok('p', 'a'), 4200)$$, '55000',
	'cosid lease of slot 1 in namespace "p" is no longer held by b',
	'release with another lease''s token: 55000');
SELECT throws_ok($$SELECT cosid.lease_release('p', 0, 'b', pg_temp.tok('p', 'b'), 1)$$, '55000',
	'cosid lease of slot 0 in namespace "p" is no longer held by b',
	'another instance cannot release a slot, even with a token of its own: 55000');
SELECT results_eq($$SELECT instance, window_end, expires_at > clock_timestamp() FROM cosid.lease
	WHERE namespace = 'p' AND slot IN (0, 1) ORDER BY slot$$,
	$$VALUES ('a'::text, 5000::bigint, true), ('b'::text, 6000::bigint, true)$$, 'refused releases change nothing');
SELECT is(cosid.lease_release('p', 1, 'b', pg_temp.tok('p', 'b'), 4200), true,
	'the holder releases its slot with its token: true');
SELECT results_eq($$SELECT instance, window_end, expires_at <= clock_timestamp()
	FROM cosid.lease WHERE namespace = 'p' AND slot = 1$$,
	$$VALUES (NULL::text, 4200::bigint, true)$$,
	'a released slot: no instance, expired, and the holder''s last end recorded, below the end it recorded ahead (1.4)');
SELECT is(cosid.lease_release('p', 1, 'b', pg_temp.tok('p', 'b'), 4300), false,
	'releasing it again with its token: false');
SELECT is((SELECT window_end FROM cosid.lease WHERE namespace = 'p' AND slot = 1), 4200::bigint,
	'and nothing changes');
SELECT throws_ok($$SELECT cosid.lease_renew('p', 1, 'b', pg_temp.tok('p', 'b'), 6400, '1 minute')$$, '55000',
	'cosid lease of slot 1 in namespace "p" is no longer held by b', 'a released lease cannot be renewed');
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p', 'e', 2, '1 minute')$$,
	$$VALUES (1, 4200::bigint)$$, 'the released slot is free: e gets it, starting at the recorded end');
SELECT throws_ok($$SELECT cosid.lease_release('p', 1, 'b', pg_temp.tok('p', 'b'), 4300)$$, '55000',
	'cosid lease of slot 1 in namespace "p" is no longer held by b',
	'once taken again, the old holder''s release is refused: 55000');
-- a release records no end below where the holder's window started: e
-- started at 4200 (b's last end), so its release with a lower last end
-- records 4200; a lease taken before 1.4 (no window_start) keeps the
-- greater, as in 1.3
SELECT lives_ok($$SELECT cosid.lease_renew('p', 1, 'e', pg_temp.tok('p', 'e'), 6500, '1 minute')$$,
	'e records window end 6500');
SELECT is(cosid.lease_release('p', 1, 'e', pg_temp.tok('p', 'e'), 100), true, 'e releases slot 1 with last end 100');
SELECT is((SELECT window_end FROM cosid.lease WHERE namespace = 'p' AND slot = 1), 4200::bigint,
	'the end recorded is where e''s window started, not below: a holder vouches for its own ids only');
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p', 'e', 2, '1 minute')$$,
	$$VALUES (1, 4200::bigint)$$, 'e takes slot 1 again, from 4200');
SELECT lives_ok($$SELECT cosid.lease_renew('p', 1, 'e', pg_temp.tok('p', 'e'), 6600, '1 minute')$$,
	'e records window end 6600');
UPDATE cosid.lease SET window_start = NULL WHERE namespace = 'p' AND slot = 1;
SELECT is(cosid.lease_release('p', 1, 'e', pg_temp.tok('p', 'e'), 5000), true,
	'a lease taken before 1.4 (no window_start) released with a lower last end');
SELECT is((SELECT window_end FROM cosid.lease WHERE namespace = 'p' AND slot = 1), 6600::bigint,
	'keeps the end it recorded, as in 1.3');
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p', 'e', 2, '1 minute')$$,
	$$VALUES (1, 6600::bigint)$$, 'and e takes it once more, from 6600');

-- ---- takeover of an expired lease
SELECT lives_ok($$SELECT cosid.lease_renew('p', 2, 'c', pg_temp.tok('p', 'c'), 7777, '1 minute')$$,
	'c records window end 7777');
UPDATE cosid.lease SET expires_at = clock_timestamp() - interval '1 second' WHERE namespace = 'p' AND slot = 2;
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p', 'f', 2, '1 minute')$$,
	$$VALUES (2, 7777::bigint)$$, 'an expired lease is taken over; previous_end is the old holder''s window end');
SELECT results_eq($$SELECT instance, window_end, expires_at > clock_timestamp() FROM cosid.lease
	WHERE namespace = 'p' AND slot = 2$$,
	$$VALUES ('f'::text, 7777::bigint, true)$$, 'the slot is f''s, live, its window end kept');
SELECT throws_ok($$SELECT cosid.lease_renew('p', 2, 'c', pg_temp.tok('p', 'c'), 8000, '1 minute')$$, '55000',
	'cosid lease of slot 2 in namespace "p" is no longer held by c', 'the old holder''s renewal fails: 55000');
SELECT throws_ok($$SELECT cosid.lease_release('p', 2, 'c', pg_temp.tok('p', 'c'), 8000)$$, '55000',
	'cosid lease of slot 2 in namespace "p" is no longer held by c', 'nor can it release the slot: 55000');
SELECT throws_ok($$SELECT cosid.lease_renew('p', 2, 'f', pg_temp.tok('p', 'c'), 8000, '1 minute')$$, '55000',
	'cosid lease of slot 2 in namespace "p" is no longer held by f',
	'the old holder''s token does not work under the new holder''s instance id either');
SELECT is((SELECT window_end FROM cosid.lease WHERE namespace = 'p' AND slot = 2), 7777::bigint,
	'its late window end is not recorded');

-- ---- lowest free first, among released and expired slots
SELECT is(cosid.lease_release('p', 3, 'd', pg_temp.tok('p', 'd'), 100), true, 'd releases slot 3');
SELECT is((SELECT window_end FROM cosid.lease WHERE namespace = 'p' AND slot = 3), 100::bigint,
	'a release with a last end above the recorded one raises it');
SELECT is(cosid.lease_release('p', 0, 'a', pg_temp.tok('p', 'a'), 5100), true, 'a releases slot 0');
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p', 'g', 2, '1 minute')$$,
	$$VALUES (0, 5100::bigint)$$, 'the next instance gets the lowest free slot, 0, not 3');
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p', 'a', 2, '1 minute')$$,
	$$VALUES (3, 100::bigint)$$, 'an instance whose lease was released gets no special treatment: slot 3');

-- ---- a lease not renewed within its TTL expires by the clock
SELECT is((SELECT slot FROM pg_temp.acquire('q', 'h', 2, '1 second')), 1, 'h takes slot 1 of q for 1 second');
SELECT lives_ok($$SELECT cosid.lease_renew('q', 1, 'h', pg_temp.tok('q', 'h'), 999, '1 second')$$,
	'h records window end 999');
SELECT pg_sleep(1.2);
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('q', 'j', 2, '1 minute')$$,
	$$VALUES (2, 0::bigint)$$, '(1.4) after its TTL, a slot never leased (2) still comes before h''s expired one');
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('q', 'i', 1, '1 minute')$$,
	$$VALUES (1, 999::bigint)$$, 'with no slot released or never leased (1 slot bit), h''s expired lease is taken over with its window end');

-- ---- many slot bits: the free slot is found from the rows, at once
SELECT ok(pg_temp.elapsed_ms($$SELECT pg_temp.acquire('p31', 'a', 31, '1 minute')$$) < 1000,
	'31 slot bits: acquire answers at once');
SELECT results_eq($$SELECT slot, instance FROM cosid.lease WHERE namespace = 'p31'$$,
	$$VALUES (0, 'a'::text)$$, 'with slot 0');
INSERT INTO cosid.lease (namespace, slot, instance, expires_at, window_end)
SELECT 'p31', s, 'x' || s, clock_timestamp() + interval '1 hour', s FROM generate_series(1, 999) s
UNION ALL
SELECT 'p31', 2147483647, 'top', clock_timestamp() + interval '1 hour', 1;
-- as autovacuum does on a store as its rows grow (the analyze also has every
-- backend plan the lease functions' statements again)
ANALYZE cosid.lease;
SELECT ok(pg_temp.elapsed_ms($$SELECT pg_temp.acquire('p31', 'b', 31, '1 minute')$$) < 1000,
	'with 1000 live leases and the top slot held, acquire still answers at once');
SELECT is(pg_temp.tok('p31', 'b') IS NOT NULL AND (SELECT slot FROM tokens WHERE namespace = 'p31' AND instance = 'b') = 1000,
	true, 'with slot 1000, the lowest free one (2^31 - 1 + 1 does not overflow)');
UPDATE cosid.lease SET instance = NULL, expires_at = clock_timestamp() WHERE namespace = 'p31' AND slot = 500;
UPDATE cosid.lease SET expires_at = clock_timestamp() - interval '1 second' WHERE namespace = 'p31' AND slot = 300;
UPDATE cosid.lease SET expires_at = clock_timestamp() - interval '10 seconds' WHERE namespace = 'p31' AND slot = 700;
INSERT INTO reads VALUES ('released', pg_temp.lease_reads());
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p31', 'c', 31, '1 minute')$$,
	$$VALUES (500, 500::bigint)$$, '(1.4) a released slot comes first, though expired ones (300, 700) are lower');
SELECT cmp_ok(pg_temp.reads_since('released'), '<', 20::bigint,
	'(1.4) and that acquire read a few of the namespace''s 1,001 rows, not all (by index)');
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p31', 'd', 31, '1 minute')$$,
	$$VALUES (1001, 0::bigint)$$, '(1.4) then the lowest slot never leased, the one past the last live lease');
INSERT INTO reads VALUES ('own', pg_temp.lease_reads());
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p31', 'top', 31, '1 minute')$$,
	$$VALUES (2147483647, 1::bigint)$$, 'the holder of the top slot, 2^31 - 1, gets it back');
SELECT cmp_ok(pg_temp.reads_since('own'), '<', 20::bigint,
	'(1.4) finding its own live lease read a few of the namespace''s rows, not all');
-- the counters count (with track_counts off the two above would pass on 0)
INSERT INTO reads VALUES ('control', pg_temp.lease_reads());
CREATE TEMP TABLE scanned AS SELECT count(*) AS n FROM cosid.lease WHERE namespace || '' = 'p31';
SELECT cmp_ok(pg_temp.reads_since('control'), '>=', 1001::bigint,
	'and a scan of the whole table counts every row it read');
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p31', 'f', 10, '1 minute')$$,
	$$VALUES (1002, 0::bigint)$$, 'with 10 bits as with 31, the lowest never leased');
INSERT INTO cosid.lease (namespace, slot, instance, expires_at)
SELECT 'p31', s, 'x' || s, clock_timestamp() + interval '1 hour' FROM generate_series(1003, 1023) s;
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p31', 'e', 10, '1 minute')$$,
	$$VALUES (700, 700::bigint)$$, 'with 10 bits and none of 0 .. 1023 released or never leased, the slot expired longest (700), not the lowest (300)');
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p31', 'h', 10, '1 minute')$$,
	$$VALUES (300, 300::bigint)$$, 'then the other expired one');
SELECT throws_ok($$SELECT * FROM cosid.lease_acquire('p31', 'g', 10, '1 minute')$$, '55000',
	'no free slot in cosid namespace "p31"', 'with 10 bits and slots 0 .. 1023 held: 55000');
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p31', 'g', 11, '1 minute')$$,
	$$VALUES (1024, 0::bigint)$$, 'with 11 bits, slot 1024 is free');
SELECT results_eq($$SELECT slot, previous_end FROM pg_temp.acquire('p1', 'a', 0, '1 minute')$$,
	$$VALUES (0, 0::bigint)$$, '0 slot bits: one slot, 0');
SELECT throws_ok($$SELECT * FROM cosid.lease_acquire('p1', 'b', 0, '1 minute')$$, '55000',
	'no free slot in cosid namespace "p1"', 'which only one instance may hold');
SELECT is(pg_temp.error_detail($$SELECT * FROM cosid.lease_acquire('p1', 'b', 0, '1 minute')$$),
	'All 1 slots (cosid.machine_bits = 0) are held by live leases.', 'the detail counts 2^0 slots');

-- ---- a lease belongs to the role that acquired it (1.3)
CREATE ROLE cosid_srv_a;
CREATE ROLE cosid_srv_b;
GRANT EXECUTE ON FUNCTION cosid.lease_acquire(text, text, integer, interval),
	cosid.lease_renew(text, integer, text, uuid, bigint, interval),
	cosid.lease_release(text, integer, text, uuid, bigint) TO cosid_srv_a, cosid_srv_b;
INSERT INTO tokens
SELECT 'p_holder', 'server-a', split_part(r, '/', 1)::int, split_part(r, '/', 2)::uuid
FROM pg_temp.as_session('cosid_srv_a',
	$$SELECT slot || '/' || token FROM cosid.lease_acquire('p_holder', 'server-a', 2, '1 minute')$$) r;
SELECT results_eq($$SELECT slot, instance, holder, token = pg_temp.tok('p_holder', 'server-a') FROM cosid.lease
	WHERE namespace = 'p_holder'$$,
	$$VALUES (0, 'server-a'::text, 'cosid_srv_a'::text, true)$$,
	'server a, logged in as role a, takes slot 0; the store records role a as its holder (session_user)');
SELECT is(pg_temp.as_session('cosid_srv_b',
	$$SELECT slot::text FROM cosid.lease_acquire('p_holder', 'server-a', 2, '1 minute')$$),
	'1', 'role b acquiring with server a''s instance id gets a free slot, 1, not server a''s live lease');
SELECT results_eq($$SELECT slot, instance, holder, token = pg_temp.tok('p_holder', 'server-a'), expires_at > clock_timestamp()
	FROM cosid.lease WHERE namespace = 'p_holder' ORDER BY slot$$,
	$$VALUES (0, 'server-a'::text, 'cosid_srv_a'::text, true, true), (1, 'server-a', 'cosid_srv_b', false, true)$$,
	'server a''s lease keeps its token and holder');
SELECT is(pg_temp.as_session('cosid_srv_b', format(
	$$SELECT cosid.lease_renew('p_holder', 0, 'server-a', %L, 1, '1 minute')::text$$,
	pg_temp.tok('p_holder', 'server-a'))),
	'55000: cosid lease of slot 0 in namespace "p_holder" is no longer held by server-a',
	'role b cannot renew server a''s lease, even with its token: 55000');
SELECT is(pg_temp.as_session('cosid_srv_b', format(
	$$SELECT cosid.lease_release('p_holder', 0, 'server-a', %L, 1)::text$$,
	pg_temp.tok('p_holder', 'server-a'))),
	'55000: cosid lease of slot 0 in namespace "p_holder" is no longer held by server-a',
	'nor release it');
SELECT is(pg_temp.as_session('cosid_srv_a', format(
	$$SELECT (cosid.lease_renew('p_holder', 0, 'server-a', %L, 1000, '1 minute') > now())::text$$,
	pg_temp.tok('p_holder', 'server-a'))),
	'true', 'role a renews it with its token');
SELECT is(pg_temp.as_session('cosid_srv_a',
	$$SELECT slot || '/' || previous_end FROM cosid.lease_acquire('p_holder', 'server-a', 2, '1 minute')$$),
	'0/1000', 'and, restarted, gets its own live lease back');
SELECT is((SELECT window_end FROM cosid.lease WHERE namespace = 'p_holder' AND slot = 0), 1000::bigint,
	'role b recorded nothing in it');
UPDATE tokens SET token = (SELECT token FROM cosid.lease WHERE namespace = 'p_holder' AND slot = 0)
WHERE namespace = 'p_holder' AND instance = 'server-a';

-- ---- a window end too far ahead of the store's clock is refused (1.3)
SELECT throws_like(format($$SELECT cosid.lease_renew('p_holder', 0, 'server-a', %L, 253402300799000, '1 minute')$$,
	pg_temp.tok('p_holder', 'server-a')),
	'invalid cosid lease request: window end 253402300799000 is % ms ahead of the lease store''s clock',
	'a window end in the year 9999 is refused');
SELECT is(pg_temp.error_detail(format($$SELECT cosid.lease_renew('p_holder', 0, 'server-a', %L, 253402300799000, '1 minute')$$,
	pg_temp.tok('p_holder', 'server-a'))),
	'A holder may record a window end at most its TTL (00:01:00) and 1 second ahead of the store''s clock, here 61000 ms.',
	'the detail says how far ahead a window end may be');
SELECT throws_ok(format($$SELECT cosid.lease_renew('p_holder', 0, 'server-a', %L, 253402300799000, '1 minute')$$,
	pg_temp.tok('p_holder', 'server-a')), '22023', NULL, 'with 22023');
SELECT throws_ok(format($$SELECT cosid.lease_renew('p_holder', 0, 'server-a', %L,
		(extract(epoch FROM clock_timestamp()) * 1000)::bigint + 63000, '1 minute')$$,
	pg_temp.tok('p_holder', 'server-a')), '22023', NULL, 'so is one 63 s ahead with a TTL of 1 minute');
SELECT is((SELECT window_end FROM cosid.lease WHERE namespace = 'p_holder' AND slot = 0), 1000::bigint,
	'refused: the slot''s window end stays where it was');
SELECT is(pg_temp.as_session('cosid_srv_a', format($$SELECT (cosid.lease_renew('p_holder', 0, 'server-a', %L,
		(extract(epoch FROM clock_timestamp()) * 1000)::bigint + 59000, '1 minute') > now())::text$$,
	pg_temp.tok('p_holder', 'server-a'))), 'true', 'a window end within the TTL is recorded');
SELECT alike(pg_temp.as_session('cosid_srv_a', format($$SELECT cosid.lease_renew('p_holder', 0, 'server-a', %L,
		(extract(epoch FROM clock_timestamp()) * 1000)::bigint + 3000, '1 second')::text$$,
	pg_temp.tok('p_holder', 'server-a'))), '22023: invalid cosid lease request: window end % is % ms ahead of the lease store''s clock',
	'the renewal''s TTL is the bound: 3 s ahead with a TTL of 1 s is refused');
SELECT is(pg_temp.as_session('cosid_srv_a', format($$SELECT (cosid.lease_renew('p_holder', 0, 'server-a', %L,
		(extract(epoch FROM clock_timestamp()) * 1000)::bigint + 1900, '1 second') > now())::text$$,
	pg_temp.tok('p_holder', 'server-a'))), 'true', '1.9 s ahead with a TTL of 1 s is fine (TTL and a second)');
SELECT alike(pg_temp.as_session('cosid_srv_a', format($$SELECT cosid.lease_release('p_holder', 0, 'server-a', %L, 253402300799000)::text$$,
	pg_temp.tok('p_holder', 'server-a'))), '22023: invalid cosid lease request: last end 253402300799000 is % ms ahead of the lease store''s clock',
	'a release with a last end in the year 9999 is refused too (22023)');
SELECT ok((SELECT window_end < 253402300799000 AND instance = 'server-a' FROM cosid.lease
	WHERE namespace = 'p_holder' AND slot = 0), 'and records nothing');
SELECT is(pg_temp.as_session('cosid_srv_a', format($$SELECT cosid.lease_release('p_holder', 0, 'server-a', %L, %s)::text$$,
	pg_temp.tok('p_holder', 'server-a'), (SELECT window_end FROM cosid.lease WHERE namespace = 'p_holder' AND slot = 0))),
	'true', 'a release at the recorded end works');

-- ---- leases from before 1.3 have no holder: the first renewal with the token claims them
INSERT INTO cosid.lease (namespace, slot, instance, expires_at, window_end, token)
VALUES ('p_holder', 2, 'old-server', clock_timestamp() + interval '1 minute', 100, '00000000-0000-4000-8000-000000000012'),
	   ('p_holder', 3, 'older-server', clock_timestamp() + interval '1 minute', 200, NULL);
SELECT is(pg_temp.as_session('cosid_srv_b',
	$$SELECT slot::text FROM cosid.lease_acquire('p_holder', 'old-server', 2, '1 minute')$$),
	'0', 'a 1.2 lease (a token, no holder) is not anyone''s by instance id: old-server''s acquire takes a free slot');
SELECT is(pg_temp.as_session('cosid_srv_a',
	$$SELECT (cosid.lease_renew('p_holder', 2, 'old-server', '00000000-0000-4000-8000-000000000012', 300, '1 minute') > now())::text$$),
	'true', 'its renewal with the token claims it');
SELECT is((SELECT holder FROM cosid.lease WHERE namespace = 'p_holder' AND slot = 2), 'cosid_srv_a',
	'for the role that renewed it');
SELECT is(pg_temp.as_session('cosid_srv_b',
	$$SELECT cosid.lease_renew('p_holder', 2, 'old-server', '00000000-0000-4000-8000-000000000012', 400, '1 minute')::text$$),
	'55000: cosid lease of slot 2 in namespace "p_holder" is no longer held by old-server',
	'then another role cannot renew it with the same token');
SELECT is(pg_temp.as_session('cosid_srv_b',
	$$SELECT slot || '/' || previous_end FROM cosid.lease_acquire('p_holder', 'older-server', 2, '1 minute')$$),
	'3/200', 'a 1.0 lease (no token) is taken back by its instance, as in 1.1, and becomes its role''s');

-- ---- the functions serialise per namespace on a lock only they can take
SELECT is((SELECT count(*)::int FROM pg_proc
	WHERE oid IN ('cosid.lease_acquire(text, text, integer, interval)'::regprocedure,
				  'cosid.lease_renew(text, integer, text, uuid, bigint, interval)'::regprocedure,
				  'cosid.lease_release(text, integer, text, uuid, bigint)'::regprocedure)
	  AND prosrc NOT LIKE '%advisory%'),
	3, 'none of them takes an advisory lock (which any role may take first)');
-- (1.4, Fleet) acquire and release run one at a time per namespace; renewals
-- lock only their lease's row (and acquire re-checks under that lock that a
-- slot it takes over is still free: the isolation spec lease_concurrency
-- races them), so they never wait behind an acquire or a release
SELECT is((SELECT string_agg(proname || ':' || coalesce(substring(prosrc FROM 'lease_namespace n WHERE n\.namespace = lease_[a-z]+\.namespace FOR (UPDATE|SHARE|KEY SHARE|NO KEY UPDATE);'), 'no namespace lock'), ',' ORDER BY proname)
	FROM pg_proc
	WHERE oid IN ('cosid.lease_acquire(text, text, integer, interval)'::regprocedure,
				  'cosid.lease_renew(text, integer, text, uuid, bigint, interval)'::regprocedure,
				  'cosid.lease_release(text, integer, text, uuid, bigint)'::regprocedure)),
	'lease_acquire:UPDATE,lease_release:UPDATE,lease_renew:no namespace lock',
	'acquire and release lock the namespace''s row FOR UPDATE (a row only the owner may lock); renew locks no namespace row');
SELECT ok((SELECT prosrc ~ 'WHERE own OR e\.instance IS NULL OR e\.expires_at <= pg_catalog\.clock_timestamp\(\)'
	FROM pg_proc WHERE oid = 'cosid.lease_acquire(text, text, integer, interval)'::regprocedure),
	'acquire takes a slot of someone else''s only if it is still released or expired under the lease row''s lock');
SELECT is((SELECT count(*)::int FROM cosid.lease_namespace WHERE namespace IN ('p', 'q', 'p_holder')), 3,
	'a row for each namespace called');
SELECT ok(NOT has_any_column_privilege('cosid_lease_nobody', 'cosid.lease_namespace', 'SELECT')
	  AND NOT has_table_privilege('cosid_lease_nobody', 'cosid.lease_namespace', 'UPDATE'),
	'no one else may read or write cosid.lease_namespace');
SELECT is(pg_temp.as_role('cosid_lease_nobody', $$SELECT 'locked' FROM cosid.lease_namespace FOR KEY SHARE$$),
	'42501: permission denied for table lease_namespace', 'so another role cannot lock a namespace''s row');
SELECT is(pg_temp.as_role('cosid_lease_nobody', $$LOCK TABLE cosid.lease_namespace IN SHARE MODE$$),
	'42501: permission denied for table lease_namespace', 'nor the table');
SELECT is(pg_temp.as_session('cosid_srv_a', $$SELECT 'locked' FROM cosid.lease_namespace FOR UPDATE$$),
	'42501: permission denied for table lease_namespace', 'nor can a server''s role, outside the functions');
SELECT is(pg_temp.as_role('cosid_lease_nobody', $$SELECT 'locked' FROM cosid.lease FOR KEY SHARE$$),
	'42501: permission denied for table lease', 'nor lock a lease''s row');

-- ---- the commit is durable whatever the caller set: a lease (and window
-- end) the store answered for survives a crash of the store, and with a
-- synchronous standby its failover
SET LOCAL synchronous_commit = off;
CREATE TEMP TABLE sync_lease AS SELECT * FROM cosid.lease_acquire('p_sync', 'a', 2, '1 minute');
SELECT is(current_setting('synchronous_commit'), 'on',
	'lease_acquire with synchronous_commit off turned it on for the transaction');
SET LOCAL synchronous_commit = off;
SELECT lives_ok($$SELECT cosid.lease_renew('p_sync', 0, 'a', (SELECT token FROM sync_lease), 0, '1 minute')$$,
	'lease_renew with synchronous_commit off');
SELECT is(current_setting('synchronous_commit'), 'on', 'it turned synchronous_commit on for the transaction');
SET LOCAL synchronous_commit = local;
SELECT ok(cosid.lease_release('p_sync', 0, 'a', (SELECT token FROM sync_lease), 0),
	'lease_release with synchronous_commit local');
SELECT is(current_setting('synchronous_commit'), 'on', 'it turned synchronous_commit on for the transaction');
SELECT is((SELECT count(*)::int FROM pg_proc
	WHERE oid IN ('cosid.lease_acquire(text, text, integer, interval)'::regprocedure,
				  'cosid.lease_renew(text, integer, text, uuid, bigint, interval)'::regprocedure,
				  'cosid.lease_release(text, integer, text, uuid, bigint)'::regprocedure)
	  AND prosrc LIKE '%set_config(''synchronous_commit'', ''on'', true)%'), 3,
	'each of the three turns synchronous_commit on');

-- ---- bad requests: 22023 at once
SELECT throws_ok($$SELECT * FROM cosid.lease_acquire('p', 'z', 32, '1 minute')$$, '22023',
	'invalid cosid lease request: slot_bits must be between 0 and 31, not 32', '32 slot bits: 22023');
SELECT throws_ok($$SELECT * FROM cosid.lease_acquire('p', 'z', -1, '1 minute')$$, '22023',
	'invalid cosid lease request: slot_bits must be between 0 and 31, not -1', '-1 slot bits: 22023');
SELECT throws_ok($$SELECT * FROM cosid.lease_acquire('p', 'z', 1024, '1 minute')$$, '22023',
	'invalid cosid lease request: slot_bits must be between 0 and 31, not 1024',
	'a slot count where the bits belong (what a 1.0 server sends): 22023');
SELECT throws_ok($$SELECT * FROM cosid.lease_acquire('p', 'z', 2, '10 years')$$, '22023',
	'invalid cosid lease request: ttl must be between 1 second and 1 day, not 10 years', 'a TTL of 10 years: 22023');
SELECT throws_ok($$SELECT * FROM cosid.lease_acquire('p', 'z', 2, '0')$$, '22023',
	'invalid cosid lease request: ttl must be between 1 second and 1 day, not 00:00:00', 'a TTL of 0: 22023');
SELECT throws_ok($$SELECT * FROM cosid.lease_acquire('p', 'z', 2, '-1 minute')$$, '22023', NULL,
	'a negative TTL: 22023');
SELECT lives_ok($$SELECT * FROM cosid.lease_acquire('p_role', 'y', 2, '1 second')$$, 'a TTL of 1 second is fine');
SELECT throws_ok($$SELECT * FROM cosid.lease_acquire('p_role', 'z', 2, '1 day')$$, '22023',
	'invalid cosid lease request: ttl 1 day is above the largest TTL of namespace "p_role", 00:01:00',
	'a TTL of 1 day is above the default largest TTL, 60 seconds (1.4): 22023');
INSERT INTO cosid.lease_namespace_config VALUES ('p_role', '1 day');
SELECT lives_ok($$SELECT * FROM cosid.lease_acquire('p_role', 'z', 2, '1 day')$$,
	'a TTL of 1 day is fine where the store''s superuser allows it');
SELECT throws_ok($$SELECT * FROM cosid.lease_acquire('', 'z', 2, '1 minute')$$, '22023',
	'invalid cosid lease request: the namespace and the instance must not be empty', 'an empty namespace: 22023');
SELECT throws_ok($$SELECT * FROM cosid.lease_acquire('p', '', 2, '1 minute')$$, '22023',
	'invalid cosid lease request: the namespace and the instance must not be empty', 'an empty instance: 22023');
SELECT ok(pg_temp.elapsed_ms($$SELECT * FROM cosid.lease_acquire('p', 'z', 32, '1 minute')$$)
		+ pg_temp.elapsed_ms($$SELECT * FROM cosid.lease_acquire('p', 'z', -1, '1 minute')$$)
		+ pg_temp.elapsed_ms($$SELECT * FROM cosid.lease_acquire('p', 'z', 2, '10 years')$$)
		+ pg_temp.elapsed_ms($$SELECT * FROM cosid.lease_acquire('p', 'z', 2, '0')$$) < 1000,
	'the four refusals come at once (under a second together)');
SELECT is((SELECT count(*)::int FROM cosid.lease
	WHERE namespace IN ('p', 'q', 'p_role', 'p31', 'p1', '') AND instance IN ('z', '')), 1,
	'refused requests take no slot (z holds only the 1-day lease of p_role)');
SELECT is((SELECT count(*)::int FROM cosid.lease_acquire(NULL, 'z', 2, '1 minute') WHERE slot IS NOT NULL), 0,
	'strict: a NULL namespace takes no slot');


-- ---- the largest TTL of a namespace and the wait of a new holder (1.4)
SELECT has_table('cosid', 'lease_namespace_config', 'cosid.lease_namespace_config exists');
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$INSERT INTO cosid.lease_namespace_config VALUES ('p_cap', '1 day') RETURNING 'inserted'$$),
	'42501: permission denied for table lease_namespace_config', 'a store role cannot set a largest TTL');
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$SELECT cosid.lease_acquire('p_cap', 'evil', 2, '1 day')::text$$),
	'22023: invalid cosid lease request: ttl 1 day is above the largest TTL of namespace "p_cap", 00:01:00',
	'nor lease with a TTL above it');
SELECT lives_ok($$SELECT pg_temp.acquire('p_cap', 'a', 2, '1 minute')$$, 'a TTL of 60 seconds is fine');
SELECT throws_like(format($$SELECT cosid.lease_renew('p_cap', 0, 'a', %L, 0, '61 seconds')$$, pg_temp.tok('p_cap', 'a')),
	'%ttl 00:01:01 is above the largest TTL of namespace "p_cap", 00:01:00', 'a renewal above it: 22023');
SELECT throws_like(format($$SELECT cosid.lease_renew('p_cap', 0, 'a', %L, %s, '1 minute')$$, pg_temp.tok('p_cap', 'a'),
		(extract(epoch FROM clock_timestamp()) * 1000)::bigint + 3600000),
	'%window end % is % ms ahead of the lease store''s clock', 'a window end an hour ahead: 22023');
UPDATE cosid.lease_namespace_config SET max_ttl = '2 seconds' WHERE namespace = 'p_role';
SELECT throws_like($$SELECT * FROM cosid.lease_acquire('p_role', 'w', 2, '1 minute')$$,
	'%ttl 00:01:00 is above the largest TTL of namespace "p_role", 00:00:02', 'the superuser may lower it too');
SELECT throws_ok($$INSERT INTO cosid.lease_namespace_config VALUES ('p_x', '2 days')$$, '23514', NULL,
	'a largest TTL is at most 1 day');
-- what a 1.3 store may hold: a slot released with a window end a day ahead
-- (the attack of a store role leasing with a 1-day TTL)
INSERT INTO cosid.lease (namespace, slot, instance, expires_at, window_end)
SELECT 'p_cap', 1, NULL, clock_timestamp(), (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 86400000;
SELECT ok((SELECT previous_end FROM pg_temp.acquire('p_cap', 'b', 2, '1 minute'))
		  <= (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 61000,
	'a new holder of that slot waits at most the largest TTL and a second, 61 seconds');
SELECT ok((SELECT window_end FROM cosid.lease WHERE namespace = 'p_cap' AND slot = 1)
		  <= (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 61000,
	'and the store recorded the capped end: the next holder does not wait a day either');
SELECT ok((SELECT window_end FROM cosid.lease WHERE namespace = 'p_cap' AND slot = 1)
		  >= (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 60000,
	'but no less than the largest TTL and a second past the clock when it took the slot: the furthest a holder may have recorded');
SELECT is((SELECT slot FROM cosid.lease WHERE namespace = 'p_cap' AND instance = 'b'), 1, 'b holds slot 1');

-- ---- schema cosid: a role that is not a superuser creates nothing there but sequences (1.4)
GRANT CREATE ON SCHEMA cosid TO cosid_lease_nobody;	-- as pg_database_owner has it
CREATE SCHEMA lease_hostile AUTHORIZATION cosid_lease_nobody;
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$CREATE FUNCTION cosid.lease_acquire(text, text, text, text, OUT slot integer, OUT previous_end bigint,
		OUT expires_at timestamptz, OUT token uuid) LANGUAGE sql AS 'SELECT 0, 0::bigint, now(), gen_random_uuid()';
	  SELECT 'created'$$),
	'42501: only a superuser may create or alter function cosid.lease_acquire(text,text,text,text) in schema cosid',
	'with CREATE on schema cosid, a role cannot put an overload of lease_acquire next to it');
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$CREATE FUNCTION cosid.segment_acquire(text, text, text, text, text, text, text, OUT first bigint, OUT last bigint)
		LANGUAGE sql AS 'SELECT 1::bigint, 10::bigint'; SELECT 'created'$$),
	'42501: only a superuser may create or alter function cosid.segment_acquire(text,text,text,text,text,text,text) in schema cosid',
	'nor of segment_acquire');
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$CREATE FUNCTION lease_hostile.lease_evil(text, text, text, text) RETURNS integer LANGUAGE sql AS 'SELECT 0';
	  ALTER FUNCTION lease_hostile.lease_evil(text, text, text, text) SET SCHEMA cosid; SELECT 'moved'$$),
	'42501: only a superuser may create or alter function cosid.lease_evil(text,text,text,text) in schema cosid',
	'nor move a function there');
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$CREATE TABLE cosid.lease_evil (x int); SELECT 'created'$$),
	'42501: only a superuser may create or alter table cosid.lease_evil in schema cosid', 'nor a table');
SELECT is(pg_temp.as_role('cosid_lease_nobody',
	$$CREATE SEQUENCE cosid.restored_seq; SELECT 'created'$$),
	'created', 'a sequence it may create (a restore by the database''s owner makes the backing sequences)');
SELECT is((SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'cosid'::regnamespace
	AND proname IN ('lease_acquire', 'segment_acquire', 'lease_evil')), 2,
	'cosid has only its own lease_acquire and segment_acquire');
SELECT is((SELECT evtenabled::text FROM pg_event_trigger WHERE evtname = 'cosid_schema_guard'), 'A',
	'the guard is enabled ALWAYS (session_replication_role does not turn it off)');
SELECT lives_ok($$CREATE FUNCTION cosid.superuser_own(int) RETURNS int LANGUAGE sql AS 'SELECT 1'$$,
	'a superuser creates there as ever');
REVOKE CREATE ON SCHEMA cosid FROM cosid_lease_nobody;
DROP SEQUENCE cosid.restored_seq;

SELECT * FROM finish();
ROLLBACK;
