--
-- Segment generators in transactions: a number handed out is never handed
-- out again, whatever rolls back (step changes, adoption, definition, in
-- transactions and savepoints); a name dropped and defined again continues
-- above everything it handed out, unless its history is forgotten.
--
-- every test starts from a fresh install, whatever ran before it
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS cosid CASCADE;
CREATE EXTENSION cosid;
RESET client_min_messages;

CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d text;
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN others THEN
	-- the detail of an invalid definition names the JSON path
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || SQLERRM ||
		CASE WHEN SQLERRM = 'invalid generator definition' THEN ' | ' || d ELSE '' END;
END $$;

-- every number handed out below, in rolled-back transactions too (a
-- temporary table's rows would roll back with them: psql's \gset keeps them)
CREATE TEMP TABLE handed (g text, n bigint);
CREATE FUNCTION pg_temp.twice() RETURNS TABLE (generator text, num bigint, times bigint)
	LANGUAGE sql AS $$ SELECT h.g, h.n, count(*) FROM handed h GROUP BY h.g, h.n HAVING count(*) > 1 $$;

SELECT cosid_define('sa', '{"strategy": "segment", "step": 10}');
SELECT string_agg(x::text, ',') AS before FROM cosid_next_many('sa', 5) x \gset
INSERT INTO handed SELECT 'sa', unnest(string_to_array(:'before', ','))::bigint;
SELECT :'before' AS before;

-- a step changed in a transaction that rolls back: the transaction cannot
-- issue from the sequence it rewrote, so the rollback takes nothing back
BEGIN;
SELECT cosid_alter('sa', '{"step": 50}');
SELECT pg_temp.err($$SELECT cosid_next('sa')$$) AS after_alter_in_tx;
SELECT pg_temp.err($$SELECT count(*) FROM cosid_next_many('sa', 100)$$) AS many_after_alter_in_tx;
ROLLBACK;
SELECT seqincrement FROM pg_sequence WHERE seqrelid = (SELECT sequence FROM cosid.generator WHERE name = 'sa');
SELECT string_agg(x::text, ',') AS after FROM cosid_next_many('sa', 30) x \gset
INSERT INTO handed SELECT 'sa', unnest(string_to_array(:'after', ','))::bigint;
SELECT :'after' AS after;

-- the same inside a savepoint: rolled back to, issuing goes on in the same
-- transaction, above what it issued before the savepoint
BEGIN;
SELECT cosid_next('sa') AS before_savepoint \gset
SAVEPOINT s1;
SELECT cosid_alter('sa', '{"step": 20}');
SELECT pg_temp.err($$SELECT cosid_next('sa')$$) AS in_savepoint;
ROLLBACK TO s1;
SELECT cosid_next('sa') AS after_rollback_to \gset
SELECT :after_rollback_to > :before_savepoint AS above;
COMMIT;
INSERT INTO handed VALUES ('sa', :before_savepoint), ('sa', :after_rollback_to);

-- two step changes, the second rolled back to a savepoint: the sequence is
-- still the first change's (PostgreSQL forgets the latest change then, not
-- the first), so issuing is still refused
BEGIN;
SELECT cosid_alter('sa', '{"step": 30}');
SAVEPOINT s2;
SELECT cosid_alter('sa', '{"step": 40}');
ROLLBACK TO s2;
SELECT pg_temp.err($$SELECT cosid_next('sa')$$) AS after_second_alter_rolled_back;
ROLLBACK;

-- committed, the new step holds and numbers go on above
SELECT max(n) AS prev_max FROM handed \gset
SELECT cosid_alter('sa', '{"step": 20}');
SELECT string_agg(x::text, ',') AS committed FROM cosid_next_many('sa', 45) x \gset
INSERT INTO handed SELECT 'sa', unnest(string_to_array(:'committed', ','))::bigint;
SELECT min(n) > :prev_max AS above, count(*) FROM unnest(string_to_array(:'committed', ',')::bigint[]) n;
SELECT seqincrement FROM pg_sequence WHERE seqrelid = (SELECT sequence FROM cosid.generator WHERE name = 'sa');
-- an alter that changes no step (a codec, int) rewrites nothing: issuing goes on
BEGIN;
SELECT cosid_alter('sa', '{"codec": [{"radix": {"radix": 36}}], "int": true}');
SELECT cosid_next('sa') AS codec_alter_does_not_rewrite \gset
SELECT :codec_alter_does_not_rewrite > :prev_max AS codec_alter_does_not_rewrite;
ROLLBACK;
INSERT INTO handed VALUES ('sa', :codec_alter_does_not_rewrite);

-- adopting a sequence in a transaction that rolls back: the sequence is not moved
CREATE TABLE orders (id bigserial PRIMARY KEY);
INSERT INTO orders DEFAULT VALUES;
INSERT INTO orders DEFAULT VALUES;
INSERT INTO orders DEFAULT VALUES;
BEGIN;
SELECT cosid_define('orders', '{"strategy": "segment", "adopt-sequence": "orders_id_seq", "step": 10}');
SELECT pg_temp.err($$SELECT cosid_next('orders')$$) AS after_adopt_in_tx;
ROLLBACK;
SELECT last_value, is_called FROM orders_id_seq;
SELECT cosid_define('orders', '{"strategy": "segment", "adopt-sequence": "orders_id_seq", "step": 10}');
SELECT array_agg(x) AS adopted FROM cosid_next_many('orders', 12) x;

-- defined in the transaction: its new sequence would vanish with a rollback
BEGIN;
SELECT cosid_define('fresh', '{"strategy": "segment"}');
SELECT pg_temp.err($$SELECT cosid_next('fresh')$$) AS in_defining_tx;
COMMIT;
SELECT cosid_next('fresh') AS after_commit;
-- a time-based generator defined in a transaction issues at once (no sequence)
BEGIN;
SELECT cosid_define('snow', '{"strategy": "snowflake"}');
SELECT cosid_next('snow') > 0 AS time_based_in_defining_tx;
ROLLBACK;

-- dropped and defined again: the name continues above what it handed out
SELECT cosid_define('dd', '{"strategy": "segment", "step": 10}');
SELECT max(x) AS dd_max FROM cosid_next_many('dd', 25) x \gset
SELECT cosid_drop('dd');
SELECT name, last_number >= :dd_max AS covers_handed_out FROM cosid.generator_history;
SELECT cosid_define('dd', '{"strategy": "segment", "step": 10}');
SELECT cosid_next('dd') > :dd_max AS continues_above;
-- in one transaction, as a migration would
BEGIN;
SELECT cosid_drop('dd');
SELECT cosid_define('dd', '{"strategy": "segment", "step": 10}');
COMMIT;
SELECT cosid_next('dd') > :dd_max AS continues_above_again;
SELECT max(x) AS dd_max FROM cosid_next_many('dd', 5) x \gset
-- a start at or below it is refused, naming the number; above it is taken
SELECT cosid_drop('dd');
SELECT pg_temp.err($$SELECT cosid_define('dd', '{"strategy": "segment", "start": 5}')$$)
	~ ('^22023: invalid generator definition \| At start: expected a number above ' ||
	   (SELECT last_number FROM cosid.generator_history WHERE name = 'dd') ||
	   ': generators named "dd" in this database handed out numbers up to \d+ before they were dropped') AS refused;
SELECT cosid_define('dd', '{"strategy": "segment", "start": 100000}');
SELECT cosid_next('dd') AS from_start;
-- a drop that rolls back writes no history
BEGIN;
SELECT cosid_drop('dd');
ROLLBACK;
SELECT last_number < 100000 AS history_unchanged FROM cosid.generator_history WHERE name = 'dd';
-- forgetting the history: the name starts over (its numbers come back)
SELECT cosid_drop('dd', forget_history => true);
SELECT count(*) AS history_rows FROM cosid.generator_history WHERE name = 'dd';
SELECT cosid_define('dd', '{"strategy": "segment"}');
SELECT cosid_next('dd') AS starts_over;
-- forgetting a name without history, and if_exists
SELECT cosid_drop('nothing', true, true);

-- an adopted sequence's generator: dropped, then the name defined anew (its
-- own sequence) continues above the adopted numbers
SELECT max(x) AS orders_max FROM cosid_next_many('orders', 3) x \gset
SELECT cosid_drop('orders');
SELECT cosid_define('orders', '{"strategy": "segment"}');
SELECT cosid_next('orders') > :orders_max AS above_adopted;

-- a name whose numbers move between a local sequence and the lease store
-- (no store is needed to define, drop or read a definition)
SELECT cosid_define('ls', '{"strategy": "segment", "step": 10}');
SELECT max(x) AS ls_max FROM cosid_next_many('ls', 15) x \gset
SELECT cosid_drop('ls');
SELECT cosid_define('ls', '{"strategy": "segment", "distributor": "lease-store"}');
SELECT (config ->> 'start')::bigint > :ls_max AS store_start_above_local_numbers
FROM cosid.generator WHERE name = 'ls';
SELECT cosid_drop('ls');
SELECT lease_store FROM cosid.generator_history WHERE name = 'ls';
SELECT pg_temp.err($$SELECT cosid_define('ls', '{"strategy": "segment"}')$$) AS local_after_store;
SELECT cosid_define('ls', '{"strategy": "segment", "distributor": "lease-store"}');
SELECT cosid_drop('ls', forget_history => true);
SELECT cosid_define('ls', '{"strategy": "segment"}');
SELECT cosid_next('ls') AS local_after_forgetting;

-- no number was handed out twice
SELECT * FROM pg_temp.twice();
-- the history is readable, not writable, by others
CREATE ROLE cosid_txn_reader;
SET ROLE cosid_txn_reader;
SELECT count(*) >= 0 AS readable FROM cosid.generator_history;
SELECT pg_temp.err($$DELETE FROM cosid.generator_history$$) AS delete_refused;
RESET ROLE;
DROP ROLE cosid_txn_reader;
