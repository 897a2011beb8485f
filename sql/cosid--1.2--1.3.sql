/* cosid--1.2--1.3.sql: from 1.2 to 1.3 */

\echo Use "ALTER EXTENSION cosid UPDATE TO '1.3'" to load this file. \quit

-- The history of names (1.3): the highest number segment generators of a
-- name handed out from their sequence before they were dropped, and whether
-- some took numbers from the lease store (whose counter only the store
-- knows).  cosid_define continues above it, so a name defined again never
-- hands out a number twice; cosid_drop(name, forget_history => true)
-- deletes it.  Written by cosid_drop as the catalog's owner; a
-- configuration table, so pg_dump keeps it.
CREATE TABLE cosid.generator_history (
	name text PRIMARY KEY,
	last_number bigint NOT NULL,
	lease_store boolean NOT NULL DEFAULT false,
	dropped_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE cosid.generator_history IS 'the highest number dropped segment generators of each name handed out: a name defined again continues above it';
SELECT pg_catalog.pg_extension_config_dump('cosid.generator_history', '');
REVOKE ALL ON cosid.generator_history FROM PUBLIC;
GRANT SELECT ON cosid.generator_history TO PUBLIC;

DROP FUNCTION cosid_drop(text, boolean);
CREATE FUNCTION cosid_drop(name text, if_exists boolean DEFAULT false,
						   forget_history boolean DEFAULT false) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION cosid_drop(text, boolean, boolean) IS 'drop a generator; forget_history: let the name start over (its numbers may be handed out again)';

-- The lease store authenticates servers (1.3).  A lease belongs to the role
-- that acquired it (holder), and only that role renews or releases it.
-- Leases live at the update have no holder: the first renew or release with
-- the lease's token claims it for the role that makes it (a lease from 1.0,
-- with no token, is claimed by its instance's next acquire).  PUBLIC no
-- longer reads instance ids.  The functions serialise per namespace on a
-- row only they can lock, not on an advisory lock anyone could take, and a
-- window end too far ahead of the store's clock is refused.
ALTER TABLE cosid.lease ADD COLUMN holder text;
COMMENT ON COLUMN cosid.lease.holder IS 'the role (session_user) that acquired the lease: only it may renew or release it; readable by no one but the owner';
REVOKE SELECT (instance) ON cosid.lease FROM PUBLIC;

-- One row per namespace the lease functions were called for: each call locks
-- its namespace's row (FOR UPDATE) until it commits, so calls of one
-- namespace run one after the other and other namespaces do not wait.  No
-- other role may read, write or lock it (1.3; before, an advisory lock that
-- any role could take first and hold).  Not dumped: a row is made again by
-- the first call that needs it.
CREATE TABLE cosid.lease_namespace (
	namespace text NOT NULL,
	CONSTRAINT lease_namespace_pkey PRIMARY KEY (namespace)
);
COMMENT ON TABLE cosid.lease_namespace IS 'the namespaces of cosid.lease: the lease functions lock a namespace''s row to serialise their calls; no one else may lock it';
REVOKE ALL ON cosid.lease_namespace FROM PUBLIC;

-- Take a slot for an instance: its own live lease if it has one (a restart),
-- else the lowest slot of 0 .. 2^slot_bits - 1 that has no live lease (never
-- leased, released or expired).  A lease belongs to the role that acquired
-- it (session_user, the role the server logs in as: holder): "its own" is a
-- live lease of this instance id held by this role, so another role naming
-- the same instance id never gets that lease (only a free slot, as any new
-- instance would).  A lease from before 1.1 (no token, no holder) is its
-- instance's until claimed.  previous_end is the window end the slot's last
-- holder recorded: the new window starts no earlier.  token is the lease's
-- fencing token, new at every acquire: renew and release need it, so
-- whoever held the slot before (even under the same instance id) can no
-- longer touch it.  The free slot is found from the namespace's rows: the
-- lowest free slot is 0 or one past a slot with a row (a live lease), so the
-- candidates are 0, every row's slot + 1 and the slots of released or
-- expired rows; 2^31 slots are never enumerated.  Calls serialise per
-- namespace on its row of cosid.lease_namespace, which only the owner may
-- lock (not on an advisory lock, which any role could take first).
CREATE OR REPLACE FUNCTION cosid.lease_acquire(namespace text, instance text, slot_bits integer, ttl interval,
									OUT slot integer, OUT previous_end bigint, OUT expires_at timestamptz,
									OUT token uuid)
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	slots bigint;
	l record;
BEGIN
	IF lease_acquire.namespace = '' OR lease_acquire.instance = '' THEN
		RAISE EXCEPTION 'invalid cosid lease request: the namespace and the instance must not be empty'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF slot_bits < 0 OR slot_bits > 31 THEN
		RAISE EXCEPTION 'invalid cosid lease request: slot_bits must be between 0 and 31, not %', slot_bits
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'slot_bits is cosid.machine_bits: the namespace has 2^slot_bits slots.';
	END IF;
	IF ttl < interval '1 second' OR ttl > interval '1 day' THEN
		RAISE EXCEPTION 'invalid cosid lease request: ttl must be between 1 second and 1 day, not %', ttl
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	slots := 1::bigint << slot_bits;
	-- one call per namespace at a time: the namespace's row, which only the
	-- table's owner may lock
	INSERT INTO cosid.lease_namespace AS n (namespace) VALUES (lease_acquire.namespace)
	ON CONFLICT ON CONSTRAINT lease_namespace_pkey DO NOTHING;
	PERFORM FROM cosid.lease_namespace n WHERE n.namespace = lease_acquire.namespace FOR UPDATE;
	SELECT e.slot, e.window_end INTO l FROM cosid.lease e
	WHERE e.namespace = lease_acquire.namespace AND e.instance = lease_acquire.instance
	  AND (e.holder = session_user OR (e.holder IS NULL AND e.token IS NULL))
	  AND e.expires_at > pg_catalog.clock_timestamp() AND e.slot < slots
	ORDER BY e.slot LIMIT 1;
	IF NOT FOUND THEN
		SELECT c.s::integer AS slot, e.window_end INTO l
		FROM (SELECT 0::bigint AS s
			  UNION
			  SELECT r.slot::bigint + 1 FROM cosid.lease r
			  WHERE r.namespace = lease_acquire.namespace
			  UNION
			  SELECT r.slot FROM cosid.lease r
			  WHERE r.namespace = lease_acquire.namespace
				AND (r.instance IS NULL OR r.expires_at <= pg_catalog.clock_timestamp())) c
			LEFT JOIN cosid.lease e ON e.namespace = lease_acquire.namespace AND e.slot = c.s
		WHERE c.s < slots
		  AND (e.slot IS NULL OR e.instance IS NULL OR e.expires_at <= pg_catalog.clock_timestamp())
		ORDER BY c.s LIMIT 1;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'no free slot in cosid namespace "%"', lease_acquire.namespace
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = pg_catalog.format('All %s slots (cosid.machine_bits = %s) are held by live leases.',
												 slots, slot_bits),
					  HINT = 'Raise cosid.machine_bits on every server of the namespace, or stop a server.';
		END IF;
	END IF;
	INSERT INTO cosid.lease AS e (namespace, slot, instance, expires_at, window_end, acquired_at, renewed_at,
								  token, holder)
	VALUES (lease_acquire.namespace, l.slot, lease_acquire.instance, pg_catalog.clock_timestamp() + ttl, 0,
			pg_catalog.clock_timestamp(), pg_catalog.clock_timestamp(), pg_catalog.gen_random_uuid(),
			session_user)
	ON CONFLICT ON CONSTRAINT lease_pkey DO UPDATE
		SET instance = EXCLUDED.instance, expires_at = EXCLUDED.expires_at,
			acquired_at = CASE WHEN e.instance IS DISTINCT FROM EXCLUDED.instance
									OR e.holder IS DISTINCT FROM EXCLUDED.holder
							   THEN EXCLUDED.acquired_at ELSE e.acquired_at END,
			renewed_at = EXCLUDED.renewed_at, token = EXCLUDED.token, holder = EXCLUDED.holder
	RETURNING e.slot, e.window_end, e.expires_at, e.token INTO slot, previous_end, expires_at, token;
END
$$;

-- Extend a lease and record the holder's new window end (never lower).
-- Fails with 55000 unless this role holds the slot under this instance id
-- with this token: the lease was taken over or released meanwhile (or the
-- token or the role is wrong).  A lease taken before 1.3 (no holder yet)
-- becomes the lease of the role that renews it with its token.  A window end
-- further ahead of the store's clock than the TTL and one second allow is
-- refused (22023) and nothing is recorded: a holder whose clock runs ahead
-- cannot push the slot's next holders into the future.
CREATE OR REPLACE FUNCTION cosid.lease_renew(namespace text, slot integer, instance text, token uuid, window_end bigint,
								  ttl interval)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	expiry timestamptz;
	now_ms bigint;
	ahead_ms bigint;
BEGIN
	IF ttl < interval '1 second' OR ttl > interval '1 day' THEN
		RAISE EXCEPTION 'invalid cosid lease request: ttl must be between 1 second and 1 day, not %', ttl
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- one call per namespace at a time: the namespace's row, which only the
	-- table's owner may lock
	INSERT INTO cosid.lease_namespace AS n (namespace) VALUES (lease_renew.namespace)
	ON CONFLICT ON CONSTRAINT lease_namespace_pkey DO NOTHING;
	PERFORM FROM cosid.lease_namespace n WHERE n.namespace = lease_renew.namespace FOR UPDATE;
	now_ms := (EXTRACT(epoch FROM pg_catalog.clock_timestamp()) * 1000)::bigint;
	ahead_ms := (EXTRACT(epoch FROM ttl) * 1000)::bigint + 1000;
	IF lease_renew.window_end > now_ms + ahead_ms THEN
		RAISE EXCEPTION 'invalid cosid lease request: window end % is % ms ahead of the lease store''s clock',
			lease_renew.window_end, lease_renew.window_end - now_ms
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = pg_catalog.format('A holder may record a window end at most its TTL (%s) and 1 second ahead of the store''s clock, here %s ms.',
											 ttl, ahead_ms),
				  HINT = 'The clock of the server that holds the slot is probably ahead of the lease store''s: synchronise them (NTP).';
	END IF;
	UPDATE cosid.lease e
	SET expires_at = pg_catalog.clock_timestamp() + ttl,
		window_end = GREATEST(e.window_end, lease_renew.window_end),
		renewed_at = pg_catalog.clock_timestamp(),
		holder = session_user
	WHERE e.namespace = lease_renew.namespace AND e.slot = lease_renew.slot
	  AND e.instance = lease_renew.instance AND e.token = lease_renew.token
	  AND (e.holder = session_user OR e.holder IS NULL)
	RETURNING e.expires_at INTO expiry;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'cosid lease of slot % in namespace "%" is no longer held by %',
			lease_renew.slot, lease_renew.namespace, lease_renew.instance
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The lease was taken over or released, or the token is not the one its acquire returned, or this role did not acquire it.';
	END IF;
	RETURN expiry;
END
$$;

-- Give a slot back.  last_end is the true end of what was issued; the
-- recorded window end never goes down (the next holder starts after the
-- greater of the two).  true: released now; false: this holder had already
-- released it (a retried release); 55000 unless this role holds the slot
-- under this instance id with this token.  A last end above both the
-- recorded window end and one second past the store's clock is refused
-- (22023): a holder issues only below an end it recorded.
CREATE OR REPLACE FUNCTION cosid.lease_release(namespace text, slot integer, instance text, token uuid, last_end bigint)
RETURNS boolean
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	now_ms bigint;
	recorded bigint;
BEGIN
	-- one call per namespace at a time: the namespace's row, which only the
	-- table's owner may lock
	INSERT INTO cosid.lease_namespace AS n (namespace) VALUES (lease_release.namespace)
	ON CONFLICT ON CONSTRAINT lease_namespace_pkey DO NOTHING;
	PERFORM FROM cosid.lease_namespace n WHERE n.namespace = lease_release.namespace FOR UPDATE;
	now_ms := (EXTRACT(epoch FROM pg_catalog.clock_timestamp()) * 1000)::bigint;
	SELECT e.window_end INTO recorded FROM cosid.lease e
	WHERE e.namespace = lease_release.namespace AND e.slot = lease_release.slot
	  AND e.instance = lease_release.instance AND e.token = lease_release.token
	  AND (e.holder = session_user OR e.holder IS NULL);
	IF FOUND THEN
		IF lease_release.last_end > GREATEST(recorded, now_ms + 1000) THEN
			RAISE EXCEPTION 'invalid cosid lease request: last end % is % ms ahead of the lease store''s clock',
				lease_release.last_end, lease_release.last_end - now_ms
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = pg_catalog.format('A release may not raise the window end the holder recorded (%s) past 1 second ahead of the store''s clock.',
												 recorded),
					  HINT = 'The clock of the server that holds the slot is probably ahead of the lease store''s: synchronise them (NTP).';
		END IF;
		UPDATE cosid.lease e
		SET instance = NULL, expires_at = pg_catalog.clock_timestamp(),
			window_end = GREATEST(e.window_end, lease_release.last_end),
			holder = session_user
		WHERE e.namespace = lease_release.namespace AND e.slot = lease_release.slot;
		RETURN true;
	END IF;
	PERFORM FROM cosid.lease e
	WHERE e.namespace = lease_release.namespace AND e.slot = lease_release.slot
	  AND e.instance IS NULL AND e.token = lease_release.token AND e.holder = session_user;
	IF FOUND THEN
		RETURN false;
	END IF;
	RAISE EXCEPTION 'cosid lease of slot % in namespace "%" is no longer held by %',
		lease_release.slot, lease_release.namespace, lease_release.instance
		USING ERRCODE = 'object_not_in_prerequisite_state',
			  DETAIL = 'The lease was taken over, or the token is not the one its acquire returned, or this role did not acquire it.';
END
$$;

REVOKE ALL ON FUNCTION cosid.lease_acquire(text, text, integer, interval),
	cosid.lease_renew(text, integer, text, uuid, bigint, interval),
	cosid.lease_release(text, integer, text, uuid, bigint) FROM PUBLIC;
COMMENT ON FUNCTION cosid.lease_acquire(text, text, integer, interval) IS 'take a slot of 2^slot_bits for an instance, as this role (the lease''s holder); returns its fencing token (grant EXECUTE to each server''s own role)';
COMMENT ON FUNCTION cosid.lease_renew(text, integer, text, uuid, bigint, interval) IS 'extend a lease this role holds with its token and record the holder''s window end (never lower, at most the TTL and 1 second ahead of the store''s clock)';
COMMENT ON FUNCTION cosid.lease_release(text, integer, text, uuid, bigint) IS 'give back a slot this role holds with its token; the recorded window end never goes down';

-- Shared counters belong to someone (1.3): named by namespace, database name
-- and generator name, owned by the generators' owner and the store role that
-- created them.  The 1.2 counters (per namespace and name) stay, with
-- database '', as floors: a counter of the same namespace and name created
-- later starts above the 1.2 counter's last number, so nothing a 1.2 server
-- handed out is handed out again, in whichever database the name lives.
ALTER TABLE cosid.segment_counter ADD COLUMN database text NOT NULL DEFAULT '',
	ADD COLUMN owner text, ADD COLUMN store_role text;
ALTER TABLE cosid.segment_counter DROP CONSTRAINT segment_counter_pkey,
	ADD CONSTRAINT segment_counter_pkey PRIMARY KEY (namespace, database, name),
	ADD CONSTRAINT segment_counter_owner_check
		CHECK ((database = '') = (owner IS NULL) AND (database = '') = (store_role IS NULL));
COMMENT ON TABLE cosid.segment_counter IS 'segments handed out to the servers that use this database as their cosid.lease_store: the last number of each namespace, database name and generator name';
REVOKE SELECT ON cosid.segment_counter FROM PUBLIC;
GRANT SELECT (namespace, name, last_number, fetches, updated_at, database) ON cosid.segment_counter TO PUBLIC;
DROP FUNCTION cosid.segment_acquire(text, text, bigint, bigint, integer);

-- Hand out count segments of step numbers: the range [first, last], above
-- every number handed out before for this counter and at least start.  A
-- counter is named by the namespace, the name of the server's database and
-- the generator's name (1.3): a definition in another database names another
-- counter.  It belongs to the generator's owner (owner, a role name the
-- server sends from its catalog) and to the store role that created it
-- (session_user): a request for it with another owner, or by a store role
-- that neither created it nor shares with its creator a role granted
-- EXECUTE on this function, is refused (42501), so no one else can move it
-- or re-base it with start.  A new counter starts above the counter of the
-- namespace and name from before 1.3 (database ''), if there is one.  The
-- counter's row is locked (FOR UPDATE, which PUBLIC may not take), so
-- callers from any server get disjoint ranges; the commit is made durable
-- (synchronous_commit on), so a store crash never gives a range out again.
-- 22023 for a bad argument, 22003 when the range would pass 2^63 - 1.
CREATE FUNCTION cosid.segment_acquire(namespace text, database text, name text, owner text, step bigint,
									  start bigint, count integer, OUT first bigint, OUT last bigint)
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	size bigint;
	floor_number bigint;
	top bigint;
	c record;
	shared boolean;
BEGIN
	IF segment_acquire.namespace = '' OR segment_acquire.database = '' OR segment_acquire.name = ''
	   OR segment_acquire.owner = '' THEN
		RAISE EXCEPTION 'invalid cosid segment request: the namespace, the database, the name and the owner must not be empty'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF segment_acquire.step < 1 OR segment_acquire.step > 1000000000 THEN
		RAISE EXCEPTION 'invalid cosid segment request: step must be between 1 and 1000000000, not %',
			segment_acquire.step
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF segment_acquire.count < 1 OR segment_acquire.count > 100000 THEN
		RAISE EXCEPTION 'invalid cosid segment request: count must be between 1 and 100000, not %',
			segment_acquire.count
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF segment_acquire.start < 0 THEN
		RAISE EXCEPTION 'invalid cosid segment request: start must not be negative, not %', segment_acquire.start
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	size := segment_acquire.step * segment_acquire.count;	-- at most 10^14
	IF segment_acquire.start - 1 > 9223372036854775807 - size THEN
		RAISE EXCEPTION 'cosid segment counter "%" of database "%" in namespace "%" cannot go past 9223372036854775807',
			segment_acquire.name, segment_acquire.database, segment_acquire.namespace
			USING ERRCODE = 'numeric_value_out_of_range',
				  DETAIL = pg_catalog.format('%s segments of %s from %s do not fit a bigint.',
											 segment_acquire.count, segment_acquire.step, segment_acquire.start);
	END IF;
	PERFORM pg_catalog.set_config('synchronous_commit', 'on', true);
	-- twice at most: a first fetch that lost the race to create the counter
	-- finds it on the second turn
	FOR turn IN 1 .. 2 LOOP
		SELECT r.last_number, r.owner, r.store_role INTO c FROM cosid.segment_counter r
		WHERE r.namespace = segment_acquire.namespace AND r.database = segment_acquire.database
		  AND r.name = segment_acquire.name
		FOR UPDATE;
		IF FOUND THEN
			IF c.owner IS DISTINCT FROM segment_acquire.owner THEN
				RAISE EXCEPTION 'cosid segment counter "%" of database "%" in namespace "%" belongs to another owner',
					segment_acquire.name, segment_acquire.database, segment_acquire.namespace
					USING ERRCODE = 'insufficient_privilege',
						  DETAIL = pg_catalog.format('It counts for a generator of another role; this request is for one owned by %s.',
													 pg_catalog.quote_ident(segment_acquire.owner)),
						  HINT = 'A shared counter is used only by generators of the same owner, in databases of the same name.';
			END IF;
			shared := c.store_role = session_user;
			IF NOT shared AND EXISTS (SELECT FROM pg_catalog.pg_roles o WHERE o.rolname = c.store_role) THEN
				SELECT EXISTS (
					SELECT FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
					WHERE p.oid = 'cosid.segment_acquire(text, text, text, text, bigint, bigint, integer)'::pg_catalog.regprocedure
					  AND a.privilege_type = 'EXECUTE' AND a.grantee <> 0 AND a.grantee <> p.proowner
					  AND pg_catalog.pg_has_role(session_user, a.grantee, 'MEMBER')
					  AND pg_catalog.pg_has_role(c.store_role::name, a.grantee, 'MEMBER'))
				INTO shared;
			END IF;
			IF NOT shared THEN
				RAISE EXCEPTION 'cosid segment counter "%" of database "%" in namespace "%" belongs to another store role',
					segment_acquire.name, segment_acquire.database, segment_acquire.namespace
					USING ERRCODE = 'insufficient_privilege',
						  DETAIL = pg_catalog.format('Role %s did not create it, and shares no role granted EXECUTE on cosid.segment_acquire with the role that did.',
													 pg_catalog.quote_ident(session_user)),
						  HINT = 'Servers share counters when the roles they connect as are members of one role granted EXECUTE on cosid.segment_acquire.';
			END IF;
			IF GREATEST(c.last_number, segment_acquire.start - 1) > 9223372036854775807 - size THEN
				RAISE EXCEPTION 'cosid segment counter "%" of database "%" in namespace "%" cannot go past 9223372036854775807',
					segment_acquire.name, segment_acquire.database, segment_acquire.namespace
					USING ERRCODE = 'numeric_value_out_of_range',
						  DETAIL = pg_catalog.format('%s segments of %s do not fit above the last number handed out.',
													 segment_acquire.count, segment_acquire.step);
			END IF;
			UPDATE cosid.segment_counter r
			SET last_number = GREATEST(r.last_number, segment_acquire.start - 1) + size,
				fetches = r.fetches + 1,
				updated_at = pg_catalog.clock_timestamp()
			WHERE r.namespace = segment_acquire.namespace AND r.database = segment_acquire.database
			  AND r.name = segment_acquire.name
			RETURNING r.last_number INTO top;
			EXIT;
		END IF;
		-- a new counter: above the namespace's counter of this name from 1.2
		SELECT r.last_number INTO floor_number FROM cosid.segment_counter r
		WHERE r.namespace = segment_acquire.namespace AND r.database = '' AND r.name = segment_acquire.name;
		floor_number := GREATEST(floor_number, segment_acquire.start - 1);
		IF floor_number > 9223372036854775807 - size THEN
			RAISE EXCEPTION 'cosid segment counter "%" of database "%" in namespace "%" cannot go past 9223372036854775807',
				segment_acquire.name, segment_acquire.database, segment_acquire.namespace
				USING ERRCODE = 'numeric_value_out_of_range',
					  DETAIL = pg_catalog.format('%s segments of %s do not fit above the last number handed out.',
												 segment_acquire.count, segment_acquire.step);
		END IF;
		INSERT INTO cosid.segment_counter AS r (namespace, name, last_number, database, owner, store_role)
		VALUES (segment_acquire.namespace, segment_acquire.name, floor_number + size, segment_acquire.database,
				segment_acquire.owner, session_user)
		ON CONFLICT ON CONSTRAINT segment_counter_pkey DO NOTHING
		RETURNING r.last_number INTO top;
		EXIT WHEN top IS NOT NULL;
	END LOOP;
	IF top IS NULL THEN
		RAISE EXCEPTION 'cosid segment counter "%" of database "%" in namespace "%" could not be created',
			segment_acquire.name, segment_acquire.database, segment_acquire.namespace
			USING ERRCODE = 'serialization_failure';
	END IF;
	first := top - size + 1;
	last := top;
END
$$;
REVOKE ALL ON FUNCTION cosid.segment_acquire(text, text, text, text, bigint, bigint, integer) FROM PUBLIC;
COMMENT ON FUNCTION cosid.segment_acquire(text, text, text, text, bigint, bigint, integer) IS 'hand out count segments of step numbers from the counter of a namespace, database and generator name, above every number it handed out and at least start; only for the generator''s owner and the store role that created the counter (grant EXECUTE to a role of the servers that share counters)';
