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

-------------------------------------------------------------------------------
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
