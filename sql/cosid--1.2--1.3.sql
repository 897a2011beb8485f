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
