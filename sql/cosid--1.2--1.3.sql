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
	dropped_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	-- time-based: the dropped generator's identity and what its ids were
	-- made with; defined again, the name keeps the identity (and its state)
	identity bigint,
	strategy text,
	epoch_ms bigint,
	unit_ms integer,
	time_bits integer,
	node_bits integer,
	seq_bits integer,
	uncertainty_bits integer
);
COMMENT ON TABLE cosid.generator_history IS 'dropped generators of each name: the highest number segment generators handed out, the identity and layout of time-based ones; a name defined again continues above them';
SELECT pg_catalog.pg_extension_config_dump('cosid.generator_history', '');
REVOKE ALL ON cosid.generator_history FROM PUBLIC;
GRANT SELECT ON cosid.generator_history TO PUBLIC;

DROP FUNCTION cosid_drop(text, boolean);
CREATE FUNCTION cosid_drop(name text, if_exists boolean DEFAULT false,
						   forget_history boolean DEFAULT false) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION cosid_drop(text, boolean, boolean) IS 'drop a generator; forget_history: let the name start over (its numbers may be handed out again)';

-------------------------------------------------------------------------------
-- Custom codec functions bound by OID (1.3).  1.2 kept a generator's custom
-- functions as schema-qualified names and looked them up again in every
-- backend, so a function dropped and created again under its name by another
-- role ran as the generator's owner.  The new column holds the functions by
-- OID; the trigger below binds each row's functions by its names once, as
-- 1.2 found them (search_path = pg_catalog, pg_temp), and warns about any it
-- cannot bind.
-------------------------------------------------------------------------------
ALTER TABLE cosid.generator ADD COLUMN codec_functions pg_catalog.oid[]
	CHECK (pg_catalog.cardinality(codec_functions) OPERATOR(pg_catalog.=) 2);
COMMENT ON COLUMN cosid.generator.codec_functions IS 'the custom codec''s encode and decode functions, fixed when its codec was defined or altered: never looked up by name again';

-- Custom codec functions (1.3): a generator's codec is bound to its custom
-- item's encode and decode functions by OID (codec_functions, written by
-- cosid_define and cosid_alter), and every backend uses those functions,
-- never a name.  A row written with OIDs that are not the functions its codec
-- list names (a restore brings the OIDs of another database, the update from
-- 1.2 none) is bound by those names, once, as it is written; with
-- search_path = pg_catalog, pg_temp, the names are the schema-qualified ones
-- cosid wrote.  A name that finds no function (or a temporary one) leaves
-- codec_functions NULL: the codec then fails (55000) until cosid_alter binds
-- it again.
CREATE FUNCTION cosid.generator_bind_codec() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	item jsonb;
	i bigint;
	k text;
	fn oid;
	fns oid[];
BEGIN
	IF jsonb_typeof(NEW.config -> 'codec') = 'array' THEN
		SELECT e, n - 1 INTO item, i FROM jsonb_array_elements(NEW.config -> 'codec') WITH ORDINALITY c(e, n)
		 WHERE jsonb_typeof(e -> 'custom') = 'object' ORDER BY n LIMIT 1;
	END IF;
	IF item IS NULL THEN
		NEW.codec_functions := NULL;
		RETURN NEW;
	END IF;
	-- the functions the list names, as cosid names them
	IF cardinality(NEW.codec_functions) = 2 AND
	   (SELECT count(*) FROM unnest(NEW.codec_functions, ARRAY['encode', 'decode']) u(f, key)
		  JOIN pg_proc p ON p.oid = u.f JOIN pg_namespace n ON n.oid = p.pronamespace
		 WHERE concat(quote_ident(n.nspname), '.', quote_ident(p.proname), '(',
					  format_type(p.proargtypes[0], NULL), ')') = (item -> 'custom' ->> u.key)) = 2 THEN
		RETURN NEW;
	END IF;
	FOREACH k IN ARRAY ARRAY['encode', 'decode'] LOOP
		fn := to_regprocedure(item -> 'custom' ->> k);
		IF fn IS NOT NULL AND (SELECT p.pronamespace = pg_my_temp_schema() OR pg_is_other_temp_schema(p.pronamespace)
							   FROM pg_proc p WHERE p.oid = fn) THEN
			fn := NULL;
		END IF;
		IF fn IS NULL THEN
			RAISE WARNING 'function % of the custom codec of cosid generator "%" could not be resolved',
				item -> 'custom' ->> k, NEW.name
				USING DETAIL = 'The generator''s codec fails (55000) until it is bound again.',
					  HINT = 'Bind it again with cosid_alter(), giving its "codec".';
			NEW.codec_functions := NULL;
			RETURN NEW;
		END IF;
		fns := fns || fn;
		-- the name as cosid writes it (and checks it at every bind)
		NEW.config := jsonb_set(NEW.config, ARRAY['codec', i::text, 'custom', k],
			(SELECT to_jsonb(concat(quote_ident(n.nspname), '.', quote_ident(p.proname), '(',
									format_type(p.proargtypes[0], NULL), ')'))
			   FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.oid = fn));
	END LOOP;
	NEW.codec_functions := fns;
	RETURN NEW;
END
$f$;
COMMENT ON FUNCTION cosid.generator_bind_codec() IS 'binds a written generator''s custom codec functions by the names its codec list gives, unless codec_functions already holds them';
CREATE TRIGGER generator_bind_codec
	BEFORE INSERT OR UPDATE OF config, codec_functions ON cosid.generator
	FOR EACH ROW EXECUTE FUNCTION cosid.generator_bind_codec();

-- Bind the generators 1.2 defined (the trigger resolves their names).
UPDATE cosid.generator SET codec_functions = NULL
 WHERE pg_catalog.jsonb_typeof(config OPERATOR(pg_catalog.->) 'codec') OPERATOR(pg_catalog.=) 'array';

-- 1.3 runs a generator's custom functions only if the generator's owner or a
-- superuser owns them (whoever owns a function can replace its code, which
-- runs as the generator's owner): say which generators now fail (42501).
DO $$
DECLARE
	g record;
BEGIN
	FOR g IN SELECT r.name, r.owner::pg_catalog.text AS owner, f.fn::pg_catalog.regprocedure::pg_catalog.text AS fn,
					pg_catalog.pg_get_userbyid(p.proowner) AS fnowner
			 FROM cosid.generator r, pg_catalog.unnest(r.codec_functions) f(fn), pg_catalog.pg_proc p
			 WHERE p.oid OPERATOR(pg_catalog.=) f.fn
			   AND p.proowner OPERATOR(pg_catalog.<>) r.owner::pg_catalog.oid
			   AND NOT (SELECT a.rolsuper FROM pg_catalog.pg_roles a WHERE a.oid OPERATOR(pg_catalog.=) p.proowner)
	LOOP
		RAISE WARNING 'function % of the custom codec of cosid generator "%" is owned by role %', g.fn, g.name, g.fnowner
			USING DETAIL = pg_catalog.format('A generator''s custom functions must be owned by its owner (%s) or by a superuser; its codec is refused (42501) until then.', g.owner),
				  HINT = 'Give the function to the generator''s owner with ALTER FUNCTION ... OWNER TO.';

-- pg_dump and pg_restore by the database's owner (1.3).  The extension is
-- created by a superuser; its tables and schema belong to that role.  What
-- the database's owner (pg_database_owner) needs beyond reading:
-- - pg_dump reads every column of the configuration tables (cosid.lease's
--   fencing tokens too) and the backing sequences cosid makes (cosid_define
--   grants SELECT on each to the generator's owner and to
--   pg_database_owner; SELECT neither advances nor sets a sequence);
-- - a restore creates those sequences in schema cosid (as their new owner),
--   and loads the configuration tables.  Its rows go through
--   cosid.restore_check(): a generator whose owner the restoring role
--   speaks for, whose definition, layout and codec are valid, and whose
--   sequence is its own (cosid's, named after it) or the restoring role's;
--   no row of the lease store's tables (a superuser restores a store).
-- cosid's own writes run as the tables' owner and are not checked.
-------------------------------------------------------------------------------

GRANT CREATE ON SCHEMA cosid TO pg_database_owner;
GRANT SELECT ON cosid.lease TO pg_database_owner;
GRANT INSERT ON cosid.generator, cosid.generator_history, cosid.lease, cosid.segment_counter
	TO pg_database_owner;

CREATE FUNCTION cosid.restore_check() RETURNS trigger
	AS 'MODULE_PATHNAME', 'cosid_restore_check' LANGUAGE C;
REVOKE ALL ON FUNCTION cosid.restore_check() FROM PUBLIC;
COMMENT ON FUNCTION cosid.restore_check() IS 'what a restore by a role other than a superuser may load into cosid''s tables';
CREATE TRIGGER generator_restore_check
	BEFORE INSERT ON cosid.generator
	FOR EACH ROW EXECUTE FUNCTION cosid.restore_check();
CREATE TRIGGER lease_restore_check
	BEFORE INSERT ON cosid.lease
	FOR EACH ROW EXECUTE FUNCTION cosid.restore_check();
CREATE TRIGGER segment_counter_restore_check
	BEFORE INSERT ON cosid.segment_counter
	FOR EACH ROW EXECUTE FUNCTION cosid.restore_check();

-- The backing sequences cosid made before 1.3: SELECT for pg_database_owner
-- and their generators' owners (those that still exist, unless they own the
-- sequence), as cosid_define grants it now.
DO $$
DECLARE
	s record;
BEGIN
	FOR s IN
		SELECT c.relname, r.rolname
		FROM cosid.generator g
		JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) g.sequence::pg_catalog.oid
		JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
		LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) g.owner::pg_catalog.oid
			AND r.oid OPERATOR(pg_catalog.<>) c.relowner
		WHERE g.owns_sequence AND c.relkind OPERATOR(pg_catalog.=) 'S' AND n.nspname OPERATOR(pg_catalog.=) 'cosid'
	LOOP
		IF s.rolname IS NULL THEN
			EXECUTE pg_catalog.format('GRANT SELECT ON SEQUENCE cosid.%I TO pg_database_owner', s.relname);
		ELSE
			EXECUTE pg_catalog.format('GRANT SELECT ON SEQUENCE cosid.%I TO pg_database_owner, %I',
									  s.relname, s.rolname);
		END IF;
	END LOOP;
END
$$;

-- A generator's identity (1.3): whose state a time-based generator has on a
-- server, so that another database's generator of the same name is another
-- generator.  Generators defined before keep 1.2's state, which is their
-- name's (identity 0): copies of a database made before this update go on
-- sharing it.
ALTER TABLE cosid.generator ADD COLUMN identity bigint NOT NULL DEFAULT 0;
ALTER TABLE cosid.generator ALTER COLUMN identity DROP DEFAULT;

-- cosid.stats() shows this database's entries only, with the identity of
-- time-based ones, which the view matches to the catalog.
DROP VIEW cosid_stats;
DROP FUNCTION cosid.stats();
CREATE FUNCTION cosid.stats(OUT name text, OUT issued bigint, OUT seq_waits bigint,
							OUT clock_borrows bigint, OUT clock_waits bigint, OUT clock_failures bigint,
							OUT segment_fetches bigint, OUT segment_waits bigint,
							OUT epoch_ms bigint, OUT unit_ms integer, OUT time_bits integer,
							OUT node_bits integer, OUT seq_bits integer, OUT sequence oid,
							OUT identity bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'cosid_stats' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION cosid.stats() IS 'the shared-memory entries of this database''s generators since the server started';

CREATE VIEW cosid_stats AS
	SELECT g.name, g.strategy,
		   coalesce(s.issued, 0) AS issued,
		   coalesce(s.seq_waits, 0) AS seq_waits,
		   coalesce(s.clock_borrows, 0) AS clock_borrows,
		   coalesce(s.clock_waits, 0) AS clock_waits,
		   coalesce(s.clock_failures, 0) AS clock_failures,
		   coalesce(s.segment_fetches, 0) AS segment_fetches,
		   coalesce(s.segment_waits, 0) AS segment_waits
	FROM cosid.generator g
		LEFT JOIN cosid.stats() s
		  ON s.name = g.name
		 AND s.sequence IS NOT DISTINCT FROM g.sequence::oid
		 AND s.identity IS NOT DISTINCT FROM CASE WHEN g.strategy <> 'segment' THEN g.identity END
		 AND s.epoch_ms IS NOT DISTINCT FROM g.epoch_ms AND s.unit_ms IS NOT DISTINCT FROM g.unit_ms
		 AND s.time_bits IS NOT DISTINCT FROM g.time_bits AND s.node_bits IS NOT DISTINCT FROM g.node_bits
		 AND s.seq_bits IS NOT DISTINCT FROM g.seq_bits;
COMMENT ON VIEW cosid_stats IS 'per generator of this database since the server started: ids issued, waits, clock borrows and failures, segment fetches';
