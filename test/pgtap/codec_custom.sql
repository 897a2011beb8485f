-- pgTAP: who a custom codec function runs as.  An inline codec list
-- (cosid_encode_with(id, codec jsonb), cosid_decode_with(txt, codec jsonb)) runs its
-- custom functions as the current user: inside a SECURITY DEFINER function
-- that is the function's owner, so a list that such a function takes from its
-- caller runs whatever functions the caller names with the owner's rights,
-- also the caller's own and temporary ones, whatever search_path the function
-- pins.  A constant list with qualified names, or a generator's codec (bound
-- by OID, its functions owned by the generator's owner or a superuser, run
-- as that owner) runs only what the definer chose.
-- Roles cosid_tap_definer and cosid_tap_caller; all undone by the ROLLBACK.
BEGIN;
SELECT plan(10);

-- a statement run as another role: its first value, or 'SQLSTATE: message'
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

CREATE ROLE cosid_tap_definer;
CREATE ROLE cosid_tap_caller;
DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO cosid_tap_definer', current_database()); END $$;

-- a codec function that says whom it runs as
CREATE SCHEMA tap_codecs;
GRANT USAGE ON SCHEMA tap_codecs TO PUBLIC;
CREATE FUNCTION tap_codecs.whoami(bigint) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE
	AS $$ SELECT current_user || ':' || $1 $$;
CREATE FUNCTION tap_codecs.unwho(text) RETURNS bigint LANGUAGE sql STABLE PARALLEL SAFE
	AS $$ SELECT split_part($1, ':', 2)::bigint $$;

-- the definer's SECURITY DEFINER functions, with search_path pinned: one
-- encodes with a list its caller gives, one with a constant list, one with a
-- generator's codec
CREATE SCHEMA tap_sd AUTHORIZATION cosid_tap_definer;
GRANT USAGE ON SCHEMA tap_sd TO PUBLIC;
SET LOCAL ROLE cosid_tap_definer;
CREATE FUNCTION tap_sd.encode_with(id bigint, codec jsonb) RETURNS text
	LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$ SELECT public.cosid_encode_with(id, codec) $$;
CREATE FUNCTION tap_sd.encode_fixed(id bigint) RETURNS text
	LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$ SELECT public.cosid_encode_with(id, '[{"custom": {"encode": "tap_codecs.whoami(bigint)", "decode": "tap_codecs.unwho(text)"}}]'::jsonb) $$;
CREATE FUNCTION tap_sd.encode_unqualified(id bigint) RETURNS text
	LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$ SELECT public.cosid_encode_with(id, '[{"custom": {"encode": "whoami(bigint)", "decode": "unwho(text)"}}]'::jsonb) $$;
SELECT public.cosid_define('tap_sd_gen', '{"codec": [{"custom": {"encode": "tap_codecs.whoami(bigint)", "decode": "tap_codecs.unwho(text)"}}]}');
CREATE FUNCTION tap_sd.encode_gen(id bigint) RETURNS text
	LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$ SELECT public.cosid_encode('tap_sd_gen', id) $$;
RESET ROLE;

-- the caller's own schema and function
CREATE SCHEMA tap_caller AUTHORIZATION cosid_tap_caller;
SET LOCAL ROLE cosid_tap_caller;
GRANT USAGE ON SCHEMA tap_caller TO PUBLIC;
CREATE FUNCTION tap_caller.mine(bigint) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE
	AS $$ SELECT 'mine as ' || current_user $$;
CREATE FUNCTION pg_temp.temp_mine(bigint) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE
	AS $$ SELECT 'temp as ' || current_user $$;
RESET ROLE;

-- an inline list runs as the current user
SELECT is(pg_temp.as_role('cosid_tap_caller', $q$
	SELECT public.cosid_encode_with(5, '[{"custom": {"encode": "tap_codecs.whoami(bigint)", "decode": "tap_codecs.unwho(text)"}}]')$q$),
	'cosid_tap_caller:5', 'an inline list called directly runs its custom function as the caller');
SELECT is(pg_temp.as_role('cosid_tap_caller', $q$
	SELECT tap_sd.encode_with(5, '[{"custom": {"encode": "tap_codecs.whoami(bigint)", "decode": "tap_codecs.unwho(text)"}}]')$q$),
	'cosid_tap_definer:5', 'inside a SECURITY DEFINER function, the same list runs it as the function''s owner');

-- a list the caller gives a SECURITY DEFINER function: the caller's code with the owner's rights
SELECT is(pg_temp.as_role('cosid_tap_caller', $q$
	SELECT tap_sd.encode_with(5, '[{"custom": {"encode": "tap_caller.mine(bigint)", "decode": "tap_codecs.unwho(text)"}}]')$q$),
	'mine as cosid_tap_definer', 'a list from the caller runs the caller''s own function as the owner: never pass one on');
SELECT is(pg_temp.as_role('cosid_tap_caller', $q$
	SELECT tap_sd.encode_with(5, '[{"custom": {"encode": "pg_temp.temp_mine(bigint)", "decode": "tap_codecs.unwho(text)"}}]')$q$),
	'temp as cosid_tap_definer', '... also a temporary one named pg_temp.f: a pinned search_path does not stop it');

-- a constant list: what the definer chose
SELECT is(pg_temp.as_role('cosid_tap_caller', $q$SELECT tap_sd.encode_fixed(7)$q$),
	'cosid_tap_definer:7', 'a constant list with qualified names runs the function the definer named');
SET LOCAL search_path = tap_codecs, public;
SELECT is(pg_temp.as_role('cosid_tap_caller', $q$SELECT tap_sd.encode_unqualified(7)$q$),
	'22023: invalid codec list', 'an unqualified name is found on the pinned search_path only, never the caller''s');
RESET search_path;

-- a generator's codec: bound by OID, run as the generator's owner
SELECT is(pg_temp.as_role('cosid_tap_caller', $q$SELECT tap_sd.encode_gen(9)$q$),
	'cosid_tap_definer:9', 'a generator''s codec inside it runs as the generator''s owner');
SELECT is(pg_temp.as_role('cosid_tap_caller', $q$SELECT public.cosid_encode('tap_sd_gen', 9)$q$),
	'cosid_tap_definer:9', '... as it does for any caller');
SELECT is((SELECT codec_functions FROM cosid.generator WHERE name = 'tap_sd_gen'),
	ARRAY['tap_codecs.whoami(bigint)'::regprocedure, 'tap_codecs.unwho(text)'::regprocedure]::oid[],
	'the generator holds its functions by OID');
SELECT is(pg_temp.as_role('cosid_tap_definer', $q$
	SELECT public.cosid_define('tap_sd_mine', '{"codec": [{"custom": {"encode": "tap_caller.mine(bigint)", "decode": "tap_codecs.unwho(text)"}}]}')$q$),
	'42501: permission denied for function tap_caller.mine(bigint) of generator "tap_sd_mine"',
	'a generator cannot take a function of a role other than its owner (or a superuser)');

SELECT * FROM finish();
ROLLBACK;
