/* cosid--1.3--1.4.sql: from 1.3 to 1.4 */

\echo Use "ALTER EXTENSION cosid UPDATE TO '1.4'" to load this file. \quit

-------------------------------------------------------------------------------
-- Comments on every function (1.4): each function and aggregate says in one
-- line what it does and what it returns (\df+, \da+ and \dd show them).
-------------------------------------------------------------------------------

-- the ulid type's I/O
COMMENT ON FUNCTION ulid_in(cstring) IS 'ulid input: 26 Crockford base32 characters in either case, or a uuid''s canonical text (8-4-4-4-12 hexadecimal digits); 22P02 for anything else';
COMMENT ON FUNCTION ulid_out(ulid) IS 'ulid output: 26 upper-case Crockford base32 characters';
COMMENT ON FUNCTION ulid_recv(internal) IS 'ulid binary input: the 16 bytes, as uuid_recv reads them';
COMMENT ON FUNCTION ulid_send(ulid) IS 'ulid binary output: the 16 bytes, as uuid_send writes them';

-- ulid with ulid: byte order (memcmp), which is time order
COMMENT ON FUNCTION ulid_eq(ulid, ulid) IS 'ulid = ulid: the same 16 bytes';
COMMENT ON FUNCTION ulid_ne(ulid, ulid) IS 'ulid <> ulid: not the same 16 bytes';
COMMENT ON FUNCTION ulid_lt(ulid, ulid) IS 'ulid < ulid, in byte order (time first)';
COMMENT ON FUNCTION ulid_le(ulid, ulid) IS 'ulid <= ulid, in byte order (time first)';
COMMENT ON FUNCTION ulid_gt(ulid, ulid) IS 'ulid > ulid, in byte order (time first)';
COMMENT ON FUNCTION ulid_ge(ulid, ulid) IS 'ulid >= ulid, in byte order (time first)';
COMMENT ON FUNCTION ulid_cmp(ulid, ulid) IS 'btree support: -1, 0 or 1 as the first ulid sorts before, with or after the second (byte order)';
COMMENT ON FUNCTION ulid_sortsupport(internal) IS 'btree sort support: byte comparison, with abbreviated keys (the first 8 bytes) as core''s uuid has';
COMMENT ON FUNCTION ulid_hash(ulid) IS 'hash support: the 32-bit hash of a ulid, uuid_hash''s of the same 16 bytes';
COMMENT ON FUNCTION ulid_hash_extended(ulid, bigint) IS 'hash support: the 64-bit hash of a ulid with a seed, uuid_hash_extended''s of the same 16 bytes';
COMMENT ON FUNCTION ulid_larger(ulid, ulid) IS 'the larger of two ulids (max(ulid)''s state function)';
COMMENT ON FUNCTION ulid_smaller(ulid, ulid) IS 'the smaller of two ulids (min(ulid)''s state function)';
COMMENT ON AGGREGATE min(ulid) IS 'the lowest ulid, in byte order (of the earliest millisecond)';
COMMENT ON AGGREGATE max(ulid) IS 'the highest ulid, in byte order (of the latest millisecond)';

-- ulid with uuid, either way round: the same bytes, the same order
COMMENT ON FUNCTION ulid_uuid_eq(ulid, uuid) IS 'ulid = uuid: the same 16 bytes (an index on either column serves it)';
COMMENT ON FUNCTION ulid_uuid_ne(ulid, uuid) IS 'ulid <> uuid: not the same 16 bytes';
COMMENT ON FUNCTION ulid_uuid_lt(ulid, uuid) IS 'ulid < uuid, in byte order (an index on either column serves it)';
COMMENT ON FUNCTION ulid_uuid_le(ulid, uuid) IS 'ulid <= uuid, in byte order (an index on either column serves it)';
COMMENT ON FUNCTION ulid_uuid_gt(ulid, uuid) IS 'ulid > uuid, in byte order (an index on either column serves it)';
COMMENT ON FUNCTION ulid_uuid_ge(ulid, uuid) IS 'ulid >= uuid, in byte order (an index on either column serves it)';
COMMENT ON FUNCTION ulid_uuid_cmp(ulid, uuid) IS 'btree support: -1, 0 or 1 as a ulid sorts before, with or after a uuid (byte order)';
COMMENT ON FUNCTION uuid_ulid_eq(uuid, ulid) IS 'uuid = ulid: the same 16 bytes (an index on either column serves it)';
COMMENT ON FUNCTION uuid_ulid_ne(uuid, ulid) IS 'uuid <> ulid: not the same 16 bytes';
COMMENT ON FUNCTION uuid_ulid_lt(uuid, ulid) IS 'uuid < ulid, in byte order (an index on either column serves it)';
COMMENT ON FUNCTION uuid_ulid_le(uuid, ulid) IS 'uuid <= ulid, in byte order (an index on either column serves it)';
COMMENT ON FUNCTION uuid_ulid_gt(uuid, ulid) IS 'uuid > ulid, in byte order (an index on either column serves it)';
COMMENT ON FUNCTION uuid_ulid_ge(uuid, ulid) IS 'uuid >= ulid, in byte order (an index on either column serves it)';
COMMENT ON FUNCTION uuid_ulid_cmp(uuid, ulid) IS 'btree support: -1, 0 or 1 as a uuid sorts before, with or after a ulid (byte order)';

-- ulid with text (and varchar): the text read as a ulid, 22P02 if it is
-- none; inlined SQL functions, so the planner sees ulid with ulid
COMMENT ON FUNCTION ulid_text_eq(ulid, text) IS 'ulid = text, the text read as a ulid (inlined: an index on the ulid serves it)';
COMMENT ON FUNCTION ulid_text_ne(ulid, text) IS 'ulid <> text, the text read as a ulid';
COMMENT ON FUNCTION ulid_text_lt(ulid, text) IS 'ulid < text, the text read as a ulid (inlined: an index on the ulid serves it)';
COMMENT ON FUNCTION ulid_text_le(ulid, text) IS 'ulid <= text, the text read as a ulid (inlined: an index on the ulid serves it)';
COMMENT ON FUNCTION ulid_text_gt(ulid, text) IS 'ulid > text, the text read as a ulid (inlined: an index on the ulid serves it)';
COMMENT ON FUNCTION ulid_text_ge(ulid, text) IS 'ulid >= text, the text read as a ulid (inlined: an index on the ulid serves it)';
COMMENT ON FUNCTION text_ulid_eq(text, ulid) IS 'text = ulid, the text read as a ulid (inlined: an index on the ulid serves it)';
COMMENT ON FUNCTION text_ulid_ne(text, ulid) IS 'text <> ulid, the text read as a ulid';
COMMENT ON FUNCTION text_ulid_lt(text, ulid) IS 'text < ulid, the text read as a ulid (inlined: an index on the ulid serves it)';
COMMENT ON FUNCTION text_ulid_le(text, ulid) IS 'text <= ulid, the text read as a ulid (inlined: an index on the ulid serves it)';
COMMENT ON FUNCTION text_ulid_gt(text, ulid) IS 'text > ulid, the text read as a ulid (inlined: an index on the ulid serves it)';
COMMENT ON FUNCTION text_ulid_ge(text, ulid) IS 'text >= ulid, the text read as a ulid (inlined: an index on the ulid serves it)';

-- trigger functions of schema cosid
COMMENT ON FUNCTION cosid.catalog_changed() IS 'trigger on cosid.generator: after any change (a restore too), every backend reads the generators again once the transaction commits';
COMMENT ON FUNCTION cosid.citus_changed() IS 'trigger on cosid.citus_generator and its Citus placements: after a change, the node''s backends read their generators again once it commits';

-- 1.3's comment on cosid_alter named the keys of time-based generators only
-- (cosid--1.4.sql has the new one at the function)
COMMENT ON FUNCTION cosid_alter(text, jsonb) IS 'change the given keys of a generator (time-based: codec, clock-regression, seq-reset-threshold, int; segment: step, reserve, codec, int); null resets a key';

-- Identities belong to a database (1.4)
-- A time-based generator's identity belongs to the database that first
-- defined it or issued with it on this server (pg_cosid/names keeps which);
-- another database gets it only through a copy made by a superuser or a
-- member of that database's owner role.  cosid.restore_check() checks the
-- rows of cosid.generator_history too.  Every generator of identity 0
-- (defined before 1.3), and every dropped one in the history, gets an
-- identity of its own, with a floor above what identity 0 of its name
-- issued on this server, once.
-------------------------------------------------------------------------------

CREATE TRIGGER generator_history_restore_check
	BEFORE INSERT ON cosid.generator_history
	FOR EACH ROW EXECUTE FUNCTION cosid.restore_check();

CREATE FUNCTION cosid.give_identities() RETURNS integer
	AS 'MODULE_PATHNAME', 'cosid_give_identities' LANGUAGE C VOLATILE STRICT;
SELECT cosid.give_identities();
DROP FUNCTION cosid.give_identities();

-------------------------------------------------------------------------------
-- The lease store trusts only superusers (1.4).  Servers call the store's
-- functions with every parameter's type named and their search_path pinned
-- to pg_catalog, pg_temp, and refuse a store whose cosid objects (the
-- schema, every function of a name they call, the tables those functions
-- use) a role other than a superuser owns.  On every database with cosid:
-- - no role but a superuser may create anything in schema cosid but a
--   sequence (the backing sequences a restore by the database's owner
--   makes, which is why pg_database_owner keeps CREATE on it): an event
--   trigger refuses every other object, so the database's owner cannot put
--   an overload of a store function next to cosid's (1.3 let it);
-- - the store's superuser sets the largest TTL of each namespace
--   (cosid.lease_namespace_config; 60 seconds without a row): a lease, a
--   renewal or a window end beyond it is refused (22023), and the next
--   holder of a slot never waits longer than it, whatever a lease recorded
--   before (the end it is given, and the one recorded, are capped);
-- - a shared counter belongs to the store role that created it: another
--   store role uses it only after a superuser of the store grants it
--   (cosid.segment_counter_grant), and cannot raise it with start (only its
--   creator or a superuser can).  1.3's sharing through a role granted
--   EXECUTE on cosid.segment_acquire is gone.
-------------------------------------------------------------------------------

-- Only a superuser creates in schema cosid, but a sequence.  Also ALTER
-- ... SET SCHEMA cosid (a function moved there) is such a command.  Enabled
-- ALWAYS: session_replication_role does not turn it off.
CREATE FUNCTION cosid.schema_guard() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	o record;
BEGIN
	IF EXISTS (SELECT FROM pg_catalog.pg_roles r WHERE r.rolname = current_user AND r.rolsuper) THEN
		RETURN;
	END IF;
	FOR o IN SELECT pg_catalog.pg_describe_object(c.classid, c.objid, c.objsubid) AS object, c.command_tag
			 FROM pg_catalog.pg_event_trigger_ddl_commands() c
			 WHERE c.schema_name = 'cosid' AND c.object_type <> 'sequence'
	LOOP
		RAISE EXCEPTION 'only a superuser may create or alter % in schema cosid', o.object
			USING ERRCODE = 'insufficient_privilege',
				  DETAIL = pg_catalog.format('Role %s ran %s. Schema cosid holds the functions the servers of a lease store call: an object of another role there could answer for them.',
											 pg_catalog.quote_ident(current_user), o.command_tag),
				  HINT = 'Create it in a schema of your own.';
	END LOOP;
END
$$;
REVOKE ALL ON FUNCTION cosid.schema_guard() FROM PUBLIC;
COMMENT ON FUNCTION cosid.schema_guard() IS 'refuses an object other than a sequence in schema cosid from a role that is not a superuser';
CREATE EVENT TRIGGER cosid_schema_guard ON ddl_command_end EXECUTE FUNCTION cosid.schema_guard();
ALTER EVENT TRIGGER cosid_schema_guard ENABLE ALWAYS;

-- What a restore by the database's owner may load into the two tables
-- below: nothing (they are the store superuser's settings; a superuser
-- restores a store).  pg_dump by the owner reads them.
CREATE FUNCTION cosid.store_settings_check() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles r WHERE r.rolname = current_user AND r.rolsuper) THEN
		RAISE EXCEPTION 'only a superuser may write %.%', TG_TABLE_SCHEMA, TG_TABLE_NAME
			USING ERRCODE = 'insufficient_privilege',
				  DETAIL = 'It holds settings of the lease store that its superuser makes.';
	END IF;
	RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION cosid.store_settings_check() FROM PUBLIC;
COMMENT ON FUNCTION cosid.store_settings_check() IS 'refuses a row of the lease store''s settings (largest TTLs, counter grants) from a role that is not a superuser';

-- The largest TTL of a namespace: a lease, a renewal (and the window end it
-- records) is refused beyond it, and a new holder is never asked to wait
-- longer.  A namespace without a row: 60 seconds.
CREATE TABLE cosid.lease_namespace_config (
	namespace text PRIMARY KEY,
	max_ttl interval NOT NULL
		CHECK (max_ttl >= interval '1 second' AND max_ttl <= interval '1 day')
);
COMMENT ON TABLE cosid.lease_namespace_config IS 'the largest lease TTL of each namespace (60 seconds without a row): only superusers write it';
SELECT pg_catalog.pg_extension_config_dump('cosid.lease_namespace_config', '');
REVOKE ALL ON cosid.lease_namespace_config FROM PUBLIC;
GRANT SELECT ON cosid.lease_namespace_config TO PUBLIC;
GRANT INSERT ON cosid.lease_namespace_config TO pg_database_owner;
CREATE TRIGGER lease_namespace_config_check
	BEFORE INSERT OR UPDATE ON cosid.lease_namespace_config
	FOR EACH ROW EXECUTE FUNCTION cosid.store_settings_check();

-- Which store role, other than the one that created it, may use a counter:
-- one row per counter and role (a role name of the store), written by a
-- superuser of the store.
CREATE TABLE cosid.segment_counter_grant (
	namespace text NOT NULL,
	database text NOT NULL,
	name text NOT NULL,
	role text NOT NULL,
	CONSTRAINT segment_counter_grant_pkey PRIMARY KEY (namespace, database, name, role)
);
COMMENT ON TABLE cosid.segment_counter_grant IS 'store roles that may use a shared counter another store role created: only superusers write it';
SELECT pg_catalog.pg_extension_config_dump('cosid.segment_counter_grant', '');
REVOKE ALL ON cosid.segment_counter_grant FROM PUBLIC;
-- store roles' names, as cosid.segment_counter.store_role: pg_dump by the
-- database's owner reads them, PUBLIC does not
GRANT SELECT ON cosid.segment_counter_grant TO pg_database_owner;
GRANT INSERT ON cosid.segment_counter_grant TO pg_database_owner;
CREATE TRIGGER segment_counter_grant_check
	BEFORE INSERT OR UPDATE ON cosid.segment_counter_grant
	FOR EACH ROW EXECUTE FUNCTION cosid.store_settings_check();

-- Where a holder's window started (1.4): the end its acquire gave it, kept
-- so that its release may record its true last end, below the end it
-- recorded ahead, but never below that start.  NULL: a lease taken before
-- 1.4 (its release never lowers the end).
ALTER TABLE cosid.lease ADD COLUMN window_start bigint;
COMMENT ON COLUMN cosid.lease.window_start IS 'the window end the holder''s acquire gave it (1.4): its release never records an end below it';

-- lease_release: as in 1.3, but the end recorded is the holder's last end,
-- even when that is below the end it recorded ahead (1.4: a clean
-- shutdown's next start, above every id it issued, so the slot's next
-- holder, often the same server restarted, does not wait for the lead it
-- recorded), never below where its window started (window_start: a holder
-- vouches for its own ids only, never for its predecessors'); a lease taken
-- before 1.4 keeps the greater of the two, as in 1.3.  It waits for a
-- lock as lease_acquire does (at most 4 seconds for each, no deadlock
-- check).
CREATE OR REPLACE FUNCTION cosid.lease_release(namespace text, slot integer, instance text, token uuid,
											   last_end bigint)
RETURNS boolean
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '4s'
SET deadlock_timeout = '5s' AS $$
DECLARE
	now_ms bigint;
	recorded bigint;
BEGIN
	-- one acquire or release per namespace at a time: the namespace's row,
	-- which only the table's owner may lock
	INSERT INTO cosid.lease_namespace AS n (namespace) VALUES (lease_release.namespace)
	ON CONFLICT ON CONSTRAINT lease_namespace_pkey DO NOTHING;
	PERFORM FROM cosid.lease_namespace n WHERE n.namespace = lease_release.namespace FOR UPDATE;
	-- the answer is durable whatever the caller or the store set: a lease (and
	-- window end) the store answered for survives its crash, and with a
	-- synchronous standby its failover
	PERFORM pg_catalog.set_config('synchronous_commit', 'on', true);
	now_ms := (EXTRACT(epoch FROM pg_catalog.clock_timestamp()) * 1000)::bigint;
	SELECT e.window_end INTO recorded FROM cosid.lease e
	WHERE e.namespace = lease_release.namespace AND e.slot = lease_release.slot
	  AND e.instance = lease_release.instance AND e.token = lease_release.token
	  AND (e.holder = session_user OR e.holder IS NULL)
	FOR NO KEY UPDATE;
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
			window_end = CASE WHEN e.window_start IS NULL THEN GREATEST(e.window_end, lease_release.last_end)
							  ELSE GREATEST(e.window_start, lease_release.last_end) END,
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

-- lease_acquire: as in 1.3, and a TTL beyond the namespace's largest is
-- refused; the window end a new holder of a slot is given, and the one
-- recorded, are at most the largest TTL and a second past the store's clock
-- when it takes the row, under the row's lock (the furthest any holder may
-- have recorded: a renewal records at most its TTL and a second ahead; an
-- instance that takes its own live lease again keeps its end: it waits for
-- no one but itself).  Acquires and releases of a namespace still run one
-- after the other (its row of cosid.lease_namespace); renewals do not lock
-- the namespace (1.4, Fleet), only their lease's row.  So a released or
-- expired slot is chosen and locked at once (FOR NO KEY UPDATE SKIP
-- LOCKED): a row a renewal holds is skipped (that renewal may bring it back
-- to life), a row whose lease a renewal brought back to life since the
-- statement began fails the re-check, and a losing acquire holds no lock
-- of a slot it does not take, so a renewal does not wait for an acquire of
-- another slot (but for one case: PostgreSQL keeps the lock of a row whose
-- re-check failed, so a renewal that commits between the statement's
-- snapshot and its reaching that row leaves the row locked until the
-- acquire commits); a renewal that comes after the lock waits for the
-- commit, finds the new token and fails (55000).  The new holder's window start is
-- kept (window_start): its release may lower the end to its last one, never
-- below that.  A slot is chosen in a new order: the lowest released one,
-- else the lowest never leased, else the one expired longest (a lease that
-- lapsed a moment ago most often has a holder still reconnecting); the
-- lowest slot without a row is counted before it is searched for.  An
-- acquire or a release waits at most 4 seconds for each lock
-- (lock_timeout, 55P03), a second less than a server waits for a call's
-- answer: a call that queued too long ends with that answer and the server
-- keeps its connection, and a store whose clients went away does not go on
-- queueing their calls behind the namespace's lock.  Its deadlock_timeout
-- (5 seconds) is longer, so a waiting call never runs the deadlock check
-- (calls made one per transaction cannot deadlock: see cosid--1.4.sql).
CREATE OR REPLACE FUNCTION cosid.lease_acquire(namespace text, instance text, slot_bits integer, ttl interval,
									OUT slot integer, OUT previous_end bigint, OUT expires_at timestamptz,
									OUT token uuid)
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '4s'
SET deadlock_timeout = '5s' AS $$
DECLARE
	slots bigint;
	ttl_limit interval;
	own boolean;
	chosen bigint;
	gap bigint;
	taken bigint;
	top bigint;
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
	SELECT c.max_ttl INTO ttl_limit FROM cosid.lease_namespace_config c WHERE c.namespace = lease_acquire.namespace;
	ttl_limit := coalesce(ttl_limit, interval '60 seconds');
	IF ttl > ttl_limit THEN
		RAISE EXCEPTION 'invalid cosid lease request: ttl % is above the largest TTL of namespace "%", %',
			ttl, lease_acquire.namespace, ttl_limit
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A superuser of the lease store sets the largest TTL of each namespace in cosid.lease_namespace_config (60 seconds without a row).',
				  HINT = 'Lower cosid.lease_ttl on the server, or have a superuser of the lease store raise the namespace''s max_ttl.';
	END IF;
	slots := 1::bigint << slot_bits;
	-- one acquire or release per namespace at a time: the namespace's row,
	-- which only the table's owner may lock
	INSERT INTO cosid.lease_namespace AS n (namespace) VALUES (lease_acquire.namespace)
	ON CONFLICT ON CONSTRAINT lease_namespace_pkey DO NOTHING;
	PERFORM FROM cosid.lease_namespace n WHERE n.namespace = lease_acquire.namespace FOR UPDATE;
	-- the answer is durable whatever the caller or the store set: a lease (and
	-- window end) the store answered for survives its crash, and with a
	-- synchronous standby its failover
	PERFORM pg_catalog.set_config('synchronous_commit', 'on', true);
	SELECT e.slot INTO chosen FROM cosid.lease e
	WHERE e.namespace = lease_acquire.namespace AND e.instance = lease_acquire.instance
	  AND (e.holder = session_user OR (e.holder IS NULL AND e.token IS NULL))
	  AND e.expires_at > pg_catalog.clock_timestamp() AND e.slot < slots
	ORDER BY e.slot LIMIT 1;
	own := FOUND;
	IF NOT own THEN
		-- which slot (1.4, Fleet): the lowest released one (its holder is
		-- gone and said where it ended); else the lowest slot without a row;
		-- else the one expired longest.  A lease that lapsed a moment ago is
		-- most often one whose holder is still reconnecting (a store that
		-- failed over, a partition that healed), and it may renew it as long
		-- as no one took it: taking it while another slot is free would cost
		-- that holder its slot and a new acquire.  Released and expired rows
		-- are chosen and locked at once.
		SELECT r.slot INTO chosen FROM cosid.lease r
		WHERE r.namespace = lease_acquire.namespace AND r.slot < slots AND r.instance IS NULL
		ORDER BY r.slot LIMIT 1
		FOR NO KEY UPDATE SKIP LOCKED;
		IF NOT FOUND THEN
			-- the lowest slot without a row (rows are made only here, one
			-- acquire at a time).  Counted first (1.4, Fleet): all slots
			-- below 2^slot_bits have rows (a full fleet) or they run from 0
			-- without a hole (a growing one), as is usual, and no row is
			-- visited twice; else a second pass over the namespace's rows in slot
			-- order, whatever the plan (an anti-join of every row's slot + 1
			-- could be planned as a nested loop, n^2: 66 ms at 1,024 rows),
			-- that stops at the first hole
			SELECT count(*), max(r.slot) INTO taken, top
			FROM cosid.lease r WHERE r.namespace = lease_acquire.namespace AND r.slot < slots;
			IF taken = slots THEN
				gap := slots;
			ELSIF taken = coalesce(top + 1, 0) THEN
				gap := taken;
			ELSE
				-- (x.slot is the column itself, not a cast: the scan's order,
				-- so the LIMIT stops it without a sort)
				SELECT x.prev + 1 INTO gap
				FROM (SELECT r.slot, lag(r.slot::bigint, 1, -1::bigint) OVER (ORDER BY r.slot) AS prev
					  FROM cosid.lease r WHERE r.namespace = lease_acquire.namespace) x
				WHERE x.slot > x.prev + 1
				ORDER BY x.slot LIMIT 1;
				-- (a row made by hand since the count filled the hole)
				IF NOT FOUND THEN
					gap := slots;
				END IF;
			END IF;
			IF gap < slots THEN
				chosen := gap;
			ELSE
				SELECT r.slot INTO chosen FROM cosid.lease r
				WHERE r.namespace = lease_acquire.namespace AND r.slot < slots
				  AND r.expires_at <= pg_catalog.clock_timestamp()
				ORDER BY r.expires_at, r.slot LIMIT 1
				FOR NO KEY UPDATE SKIP LOCKED;
			END IF;
		END IF;
		IF chosen IS NULL THEN
			RAISE EXCEPTION 'no free slot in cosid namespace "%"', lease_acquire.namespace
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = pg_catalog.format('All %s slots (cosid.machine_bits = %s) are held by live leases.',
												 slots, slot_bits),
					  HINT = 'Raise cosid.machine_bits on every server of the namespace, or stop a server.';
		END IF;
	END IF;
	-- the re-check under the row's lock stays, for a row made by hand
	INSERT INTO cosid.lease AS e (namespace, slot, instance, expires_at, window_end, acquired_at, renewed_at,
								  token, holder, window_start)
	VALUES (lease_acquire.namespace, chosen, lease_acquire.instance, pg_catalog.clock_timestamp() + ttl, 0,
			pg_catalog.clock_timestamp(), pg_catalog.clock_timestamp(), pg_catalog.gen_random_uuid(),
			session_user, 0)
	ON CONFLICT ON CONSTRAINT lease_pkey DO UPDATE
		SET instance = EXCLUDED.instance, expires_at = EXCLUDED.expires_at,
			window_end = CASE WHEN own THEN e.window_end
							  ELSE LEAST(e.window_end,
										 (EXTRACT(epoch FROM pg_catalog.clock_timestamp() + ttl_limit) * 1000)::bigint
										 + 1000) END,
			acquired_at = CASE WHEN e.instance IS DISTINCT FROM EXCLUDED.instance
									OR e.holder IS DISTINCT FROM EXCLUDED.holder
							   THEN EXCLUDED.acquired_at ELSE e.acquired_at END,
			renewed_at = EXCLUDED.renewed_at, token = EXCLUDED.token, holder = EXCLUDED.holder
		WHERE own OR e.instance IS NULL OR e.expires_at <= pg_catalog.clock_timestamp()
	RETURNING e.slot, e.window_end, e.expires_at, e.token INTO slot, previous_end, expires_at, token;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'no free slot in cosid namespace "%"', lease_acquire.namespace
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = pg_catalog.format('Slot %s was taken while it was chosen.', chosen),
				  HINT = 'The server tries again.';
	END IF;
	-- where this holder's window starts: its release never records less
	UPDATE cosid.lease e SET window_start = e.window_end
	WHERE e.namespace = lease_acquire.namespace AND e.slot = lease_acquire.slot;
END
$$;

-- lease_renew: as in 1.3, and a TTL beyond the namespace's largest is
-- refused (so is a window end further ahead than it and one second).
CREATE OR REPLACE FUNCTION cosid.lease_renew(namespace text, slot integer, instance text, token uuid,
								  window_end bigint, ttl interval)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	expiry timestamptz;
	now_ms bigint;
	ahead_ms bigint;
	ttl_limit interval;
BEGIN
	IF ttl < interval '1 second' OR ttl > interval '1 day' THEN
		RAISE EXCEPTION 'invalid cosid lease request: ttl must be between 1 second and 1 day, not %', ttl
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	SELECT c.max_ttl INTO ttl_limit FROM cosid.lease_namespace_config c WHERE c.namespace = lease_renew.namespace;
	ttl_limit := coalesce(ttl_limit, interval '60 seconds');
	IF ttl > ttl_limit THEN
		RAISE EXCEPTION 'invalid cosid lease request: ttl % is above the largest TTL of namespace "%", %',
			ttl, lease_renew.namespace, ttl_limit
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A superuser of the lease store sets the largest TTL of each namespace in cosid.lease_namespace_config (60 seconds without a row).',
				  HINT = 'Lower cosid.lease_ttl on the server, or have a superuser of the lease store raise the namespace''s max_ttl.';
	END IF;
	-- renewals take no lock of the namespace (1.4, Fleet): one renewal and
	-- an acquire that would take its slot over, or two renewals of one
	-- slot, are ordered by the lease's own row (the UPDATE below, which
	-- only the table's owner may lock); lease_acquire takes a slot of
	-- someone else's only if, under that row's lock, it is still released
	-- or expired.  So renewals never wait for an acquire or a release of
	-- another slot, nor they for renewals.
	-- the answer is durable whatever the caller or the store set: a lease (and
	-- window end) the store answered for survives its crash, and with a
	-- synchronous standby its failover
	PERFORM pg_catalog.set_config('synchronous_commit', 'on', true);
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
COMMENT ON FUNCTION cosid.lease_acquire(text, text, integer, interval) IS 'take a slot of 2^slot_bits for an instance, as this role (the lease''s holder), for at most the namespace''s largest TTL; returns its fencing token (grant EXECUTE to each server''s own role)';
COMMENT ON FUNCTION cosid.lease_renew(text, integer, text, uuid, bigint, interval) IS 'extend a lease this role holds with its token, for at most the namespace''s largest TTL, and record the holder''s window end (never lower, at most the TTL and 1 second ahead of the store''s clock)';
COMMENT ON FUNCTION cosid.lease_release(text, integer, text, uuid, bigint) IS 'give back a slot this role holds with its token, recording its last end (1.4: even below the end it recorded, never below where its window started)';

-- segment_acquire: as in 1.3, but a counter is for the store role that
-- created it (session_user), for the roles a superuser granted it to in
-- cosid.segment_counter_grant, and for superusers; what a server says
-- (database, owner) names the counter and must match its owner, but never
-- gives a role the right to use it.  Only its creator (or a superuser) may
-- raise it with start: a granted role asking for a start above the counter
-- is refused (42501).
CREATE OR REPLACE FUNCTION cosid.segment_acquire(namespace text, database text, name text, owner text, step bigint,
									  start bigint, count integer, OUT first bigint, OUT last bigint)
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	size bigint;
	floor_number bigint;
	top bigint;
	c record;
	creator boolean;
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
			creator := c.store_role = session_user
				OR EXISTS (SELECT FROM pg_catalog.pg_roles o WHERE o.rolname = session_user AND o.rolsuper);
			IF NOT creator AND NOT EXISTS (
					SELECT FROM cosid.segment_counter_grant g
					WHERE g.namespace = segment_acquire.namespace AND g.database = segment_acquire.database
					  AND g.name = segment_acquire.name AND g.role = session_user) THEN
				RAISE EXCEPTION 'cosid segment counter "%" of database "%" in namespace "%" belongs to another store role',
					segment_acquire.name, segment_acquire.database, segment_acquire.namespace
					USING ERRCODE = 'insufficient_privilege',
						  DETAIL = pg_catalog.format('Store role %s created it; role %s was not granted it.',
													 pg_catalog.quote_ident(c.store_role), pg_catalog.quote_ident(session_user)),
						  HINT = 'Servers that log in as different store roles share a counter only when a superuser of the lease store grants it: a row (namespace, database, name, role) in cosid.segment_counter_grant.';
			END IF;
			IF NOT creator AND segment_acquire.start - 1 > c.last_number THEN
				RAISE EXCEPTION 'cosid segment counter "%" of database "%" in namespace "%" can be raised only by the store role that created it',
					segment_acquire.name, segment_acquire.database, segment_acquire.namespace
					USING ERRCODE = 'insufficient_privilege',
						  DETAIL = pg_catalog.format('Role %s asked for numbers from %s; the counter handed out up to %s. Store role %s created it.',
													 pg_catalog.quote_ident(session_user), segment_acquire.start,
													 c.last_number, pg_catalog.quote_ident(c.store_role)),
						  HINT = 'The server that logs in as the counter''s store role, or a superuser of the lease store, can raise it.';
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
COMMENT ON FUNCTION cosid.segment_acquire(text, text, text, text, bigint, bigint, integer) IS 'hand out count segments of step numbers from the counter of a namespace, database and generator name, above every number it handed out and at least start; only for the generator''s owner, through the store role that created the counter or one a superuser granted it to (cosid.segment_counter_grant)';
-- End of "The lease store trusts only superusers (1.4)".

-- Capacity (1.4)
-- cosid_capacity(name): a generator's limits, from its stored layout and this
-- server's cosid.machine_bits, and when its ids run out (inspect.c).  STABLE:
-- it reads the catalog and the transaction's now().
CREATE FUNCTION cosid_capacity(name text,
							   OUT strategy text, OUT unit text, OUT epoch timestamptz,
							   OUT time_bits integer, OUT node_bits integer, OUT seq_bits integer,
							   OUT uncertainty_bits integer, OUT machine_bits integer,
							   OUT servers bigint, OUT slots bigint,
							   OUT ids_per_unit_per_server bigint, OUT ids_per_second_per_server numeric,
							   OUT max_value numeric, OUT runs_out_at timestamptz,
							   OUT years_left double precision, OUT js_safe boolean,
							   OUT last_value bigint, OUT numbers_left numeric)
	AS 'MODULE_PATHNAME', 'cosid_capacity' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cosid_capacity(text) IS 'a generator''s limits (servers, ids per time unit and server, its largest id, JavaScript safety) and when its ids run out, from its layout and this server''s cosid.machine_bits; for a segment generator its range and the numbers left';
-- end of Capacity (1.4)

-- Fleet (1.4)
-- One store for a fleet (issue 31, bench/fleet.sh): lease_renew, defined in
-- "The lease store trusts only superusers (1.4)" above, lets renewals run
-- side by side.  Every call of a namespace used to lock the
-- namespace's row FOR UPDATE until it committed, and each commits
-- synchronously, so a namespace's renewals ran one fsync after another: at
-- 1,024 busy holders (2,560 renewals a second) they queued.  A renewal now
-- takes no lock of the namespace at all: a renewal and an acquire that
-- would take its slot over are ordered by the lease's own row, and the
-- acquire takes a slot of someone else's only if, under that row's lock, it
-- is still released or expired (else it chooses again).  Acquire and
-- release keep FOR UPDATE on the namespace's row, so they run one at a
-- time; renewals share their WAL flushes and never wait behind them (a
-- FOR SHARE that 1.4's first change took queued every renewal behind each
-- acquire and release: 9 ms a renewal on average at 2 restarts a second).
-- A fleet that acquires all at once (1,024 servers started together, or
-- back after the store was away past the TTL) queues on the namespace's
-- row, one acquire after another.  On two cores that queue never drained:
-- each acquire scanned the namespace's rows four times under the lock (4.7
-- ms at 1,024 rows, 10 ms in a new backend), a thousand waiters each ran
-- the deadlock check after a second, and the calls that waited past the
-- servers' 5 s came back on new connections, whose new backends made the
-- next acquires slower still.  Now acquires find this instance's own live
-- lease and the lowest released slot by index (a hash index for the
-- instance id: one of any length, even one a 1.3 store took, can be
-- indexed) and count before they search for the lowest slot without a
-- row; lease_acquire and lease_release wait at most 4 s for each lock,
-- answering before the server gives up, and never run the deadlock check.
-- Renewals touch neither index (their updates stay HOT).
CREATE INDEX lease_instance ON cosid.lease USING hash (instance);
CREATE INDEX lease_released ON cosid.lease (namespace, slot) WHERE instance IS NULL;
-- end of Fleet (1.4)

-- The trigger that binds a written row's custom codec functions runs only
-- for a row it may change (1.4): one whose codec list has a custom item, or
-- with codec_functions to clear (most rows have neither: cosid_define then
-- calls no PL/pgSQL).
DROP TRIGGER generator_bind_codec ON cosid.generator;
CREATE TRIGGER generator_bind_codec
	BEFORE INSERT OR UPDATE OF config, codec_functions ON cosid.generator
	FOR EACH ROW
	WHEN (NEW.codec_functions IS NOT NULL OR NEW.config @? '$.codec[*].custom')
	EXECUTE FUNCTION cosid.generator_bind_codec();

-- The generator a sequence backs, found by index (1.4): a define that adopts
-- a sequence, and every row a restore writes, look it up (a scan of every
-- generator for each restored row before).
CREATE INDEX generator_sequence ON cosid.generator (sequence);
