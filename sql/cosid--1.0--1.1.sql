/* cosid--1.0--1.1.sql: from 1.0 to 1.1 (security and lifecycle release) */

\echo Use "ALTER EXTENSION cosid UPDATE TO '1.1'" to load this file. \quit

-------------------------------------------------------------------------------
-- Leases (section 3 of the 1.1 release): fencing tokens.
-------------------------------------------------------------------------------

-- Every lease gets a fencing token, which PUBLIC cannot read.  Leases taken
-- by 1.0 servers have none: their holders (which call the 1.0 functions,
-- dropped below) can no longer renew them; they expire, or their instance
-- takes them again with a token.
ALTER TABLE cosid.lease ADD COLUMN token uuid;
COMMENT ON COLUMN cosid.lease.token IS 'fencing token of the last acquire, required by renew and release: readable by no one but the owner';
REVOKE ALL ON cosid.lease FROM PUBLIC;
GRANT SELECT (namespace, slot, instance, expires_at, window_end, acquired_at, renewed_at) ON cosid.lease TO PUBLIC;

-- acquire takes slot bits instead of a slot count and returns the token;
-- renew and release require it.  The 1.0 signatures go (acquire's arguments
-- keep their types but its result changes, so it is dropped and created).
DROP FUNCTION cosid.lease_acquire(text, text, integer, interval);
DROP FUNCTION cosid.lease_renew(text, integer, text, bigint, interval);
DROP FUNCTION cosid.lease_release(text, integer, text, bigint);

-- Take a slot for an instance: its own live lease if it has one (a restart),
-- else the lowest slot of 0 .. 2^slot_bits - 1 that has no live lease (never
-- leased, released or expired).  previous_end is the window end the slot's
-- last holder recorded: the new window starts no earlier.  token is the
-- lease's fencing token, new at every acquire: renew and release need it, so
-- whoever held the slot before (even under the same instance id) can no
-- longer touch it.  The free slot is found from the namespace's rows: the
-- lowest free slot is 0 or one past a slot with a row (a live lease), so the
-- candidates are 0, every row's slot + 1 and the slots of released or
-- expired rows; 2^31 slots are never enumerated.
CREATE FUNCTION cosid.lease_acquire(namespace text, instance text, slot_bits integer, ttl interval,
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
	PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('cosid.lease'),
											 pg_catalog.hashtext(lease_acquire.namespace));
	SELECT e.slot, e.window_end INTO l FROM cosid.lease e
	WHERE e.namespace = lease_acquire.namespace AND e.instance = lease_acquire.instance
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
								  token)
	VALUES (lease_acquire.namespace, l.slot, lease_acquire.instance, pg_catalog.clock_timestamp() + ttl, 0,
			pg_catalog.clock_timestamp(), pg_catalog.clock_timestamp(), pg_catalog.gen_random_uuid())
	ON CONFLICT ON CONSTRAINT lease_pkey DO UPDATE
		SET instance = EXCLUDED.instance, expires_at = EXCLUDED.expires_at,
			acquired_at = CASE WHEN e.instance IS DISTINCT FROM EXCLUDED.instance
							   THEN EXCLUDED.acquired_at ELSE e.acquired_at END,
			renewed_at = EXCLUDED.renewed_at, token = EXCLUDED.token
	RETURNING e.slot, e.window_end, e.expires_at, e.token INTO slot, previous_end, expires_at, token;
END
$$;

-- Extend a lease and record the holder's new window end (never lower).
-- Fails with 55000 unless the instance holds the slot with this token: the
-- lease was taken over or released meanwhile (or the token is wrong).
CREATE FUNCTION cosid.lease_renew(namespace text, slot integer, instance text, token uuid, window_end bigint,
								  ttl interval)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	expiry timestamptz;
BEGIN
	IF ttl < interval '1 second' OR ttl > interval '1 day' THEN
		RAISE EXCEPTION 'invalid cosid lease request: ttl must be between 1 second and 1 day, not %', ttl
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('cosid.lease'),
											 pg_catalog.hashtext(lease_renew.namespace));
	UPDATE cosid.lease e
	SET expires_at = pg_catalog.clock_timestamp() + ttl,
		window_end = GREATEST(e.window_end, lease_renew.window_end),
		renewed_at = pg_catalog.clock_timestamp()
	WHERE e.namespace = lease_renew.namespace AND e.slot = lease_renew.slot
	  AND e.instance = lease_renew.instance AND e.token = lease_renew.token
	RETURNING e.expires_at INTO expiry;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'cosid lease of slot % in namespace "%" is no longer held by %',
			lease_renew.slot, lease_renew.namespace, lease_renew.instance
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'The lease was taken over or released, or the token is not the one its acquire returned.';
	END IF;
	RETURN expiry;
END
$$;

-- Give a slot back.  last_end is the true end of what was issued; the
-- recorded window end never goes down (the next holder starts after the
-- greater of the two).  true: released now; false: this holder had already
-- released it (a retried release); 55000 unless the instance holds the slot
-- with this token.
CREATE FUNCTION cosid.lease_release(namespace text, slot integer, instance text, token uuid, last_end bigint)
RETURNS boolean
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('cosid.lease'),
											 pg_catalog.hashtext(lease_release.namespace));
	UPDATE cosid.lease e
	SET instance = NULL, expires_at = pg_catalog.clock_timestamp(),
		window_end = GREATEST(e.window_end, lease_release.last_end)
	WHERE e.namespace = lease_release.namespace AND e.slot = lease_release.slot
	  AND e.instance = lease_release.instance AND e.token = lease_release.token;
	IF FOUND THEN
		RETURN true;
	END IF;
	PERFORM FROM cosid.lease e
	WHERE e.namespace = lease_release.namespace AND e.slot = lease_release.slot
	  AND e.instance IS NULL AND e.token = lease_release.token;
	IF FOUND THEN
		RETURN false;
	END IF;
	RAISE EXCEPTION 'cosid lease of slot % in namespace "%" is no longer held by %',
		lease_release.slot, lease_release.namespace, lease_release.instance
		USING ERRCODE = 'object_not_in_prerequisite_state',
			  DETAIL = 'The lease was taken over, or the token is not the one its acquire returned.';
END
$$;

REVOKE ALL ON FUNCTION cosid.lease_acquire(text, text, integer, interval),
	cosid.lease_renew(text, integer, text, uuid, bigint, interval),
	cosid.lease_release(text, integer, text, uuid, bigint) FROM PUBLIC;
COMMENT ON FUNCTION cosid.lease_acquire(text, text, integer, interval) IS 'take a slot of 2^slot_bits for an instance; returns its fencing token (grant EXECUTE to the role the servers connect as)';
COMMENT ON FUNCTION cosid.lease_renew(text, integer, text, uuid, bigint, interval) IS 'extend a lease held with its token and record the holder''s window end (never lower)';
COMMENT ON FUNCTION cosid.lease_release(text, integer, text, uuid, bigint) IS 'give back a slot held with its token; the recorded window end never goes down';


-------------------------------------------------------------------------------
-- Custom codec functions (section 1 of the 1.1 release): a generator's
-- functions are kept as they were resolved when it was defined, schema-
-- qualified, and 1.1 looks them up with search_path = pg_catalog, pg_temp
-- whatever the caller's.  1.0 kept them as written; resolve them now, with
-- this script's search_path (the extension's schema), and say which could
-- not be resolved: define those again with cosid_alter().
-------------------------------------------------------------------------------

-- Every operator is qualified: this script runs as a superuser with the
-- extension's schema on its search_path.
DO $$
DECLARE
	g record;
	item jsonb;
	i integer;
	k text;
	fn oid;
	cfg jsonb;
	changed boolean;
BEGIN
	FOR g IN SELECT r.name, r.config FROM cosid.generator r
			 WHERE pg_catalog.jsonb_typeof(r.config OPERATOR(pg_catalog.->) 'codec') OPERATOR(pg_catalog.=) 'array'
	LOOP
		cfg := g.config;
		changed := false;
		FOR i IN 0 .. pg_catalog.jsonb_array_length(cfg OPERATOR(pg_catalog.->) 'codec') OPERATOR(pg_catalog.-) 1 LOOP
			item := (cfg OPERATOR(pg_catalog.->) 'codec') OPERATOR(pg_catalog.->) i;
			CONTINUE WHEN coalesce(pg_catalog.jsonb_typeof(item OPERATOR(pg_catalog.->) 'custom')
								   OPERATOR(pg_catalog.<>) 'object', true);
			FOREACH k IN ARRAY ARRAY['encode', 'decode'] LOOP
				fn := pg_catalog.to_regprocedure((item OPERATOR(pg_catalog.->) 'custom') OPERATOR(pg_catalog.->>) k);
				IF fn IS NULL THEN
					RAISE WARNING 'cosid generator "%": function % of its custom codec could not be resolved',
						g.name, (item OPERATOR(pg_catalog.->) 'custom') OPERATOR(pg_catalog.->>) k
						USING HINT = 'Set it again, schema-qualified, with cosid_alter().';
					CONTINUE;
				END IF;
				SELECT pg_catalog.jsonb_set(cfg, ARRAY['codec', i::text, 'custom', k],
						   pg_catalog.to_jsonb(pg_catalog.concat(pg_catalog.quote_ident(n.nspname), '.',
											   pg_catalog.quote_ident(p.proname), '(',
											   pg_catalog.format_type(p.proargtypes[0], NULL), ')')))
				  INTO cfg
				  FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n
					ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
				 WHERE p.oid OPERATOR(pg_catalog.=) fn;
				changed := true;
			END LOOP;
		END LOOP;
		IF changed THEN
			UPDATE cosid.generator r SET config = cfg WHERE r.name OPERATOR(pg_catalog.=) g.name;
		END IF;
	END LOOP;
END
$$;

-- 1.1 refuses to adopt an unlogged sequence (a crash resets it, so its numbers
-- would be issued again); say which generators 1.0 let adopt one.
DO $$
DECLARE
	g record;
BEGIN
	FOR g IN SELECT r.name, c.relname FROM cosid.generator r
			 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.sequence::pg_catalog.oid
			 WHERE c.relpersistence OPERATOR(pg_catalog.<>) 'p'
	LOOP
		RAISE WARNING 'cosid generator "%" is backed by sequence "%", which is not logged', g.name, g.relname
			USING DETAIL = 'A crash resets an unlogged sequence, so the generator could issue its numbers again.',
				  HINT = 'Make it logged with ALTER SEQUENCE ... SET LOGGED.';
	END LOOP;
END
$$;
