/* cosid--1.3--1.4.sql: from 1.3 to 1.4 */

\echo Use "ALTER EXTENSION cosid UPDATE TO '1.4'" to load this file. \quit

-------------------------------------------------------------------------------
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
