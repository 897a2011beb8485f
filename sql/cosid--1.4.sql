/* cosid--1.4.sql: distributed id generation (CosId 5.0) and the ulid type */

\echo Use "CREATE EXTENSION cosid" to load this file. \quit

-------------------------------------------------------------------------------
-- The ulid type: 16 bytes, 48-bit Unix milliseconds then 80 random bits.
-------------------------------------------------------------------------------

CREATE TYPE ulid;

CREATE FUNCTION ulid_in(cstring) RETURNS ulid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ulid_out(ulid) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ulid_recv(internal) RETURNS ulid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ulid_send(ulid) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE ulid (
	INPUT = ulid_in,
	OUTPUT = ulid_out,
	RECEIVE = ulid_recv,
	SEND = ulid_send,
	INTERNALLENGTH = 16,
	ALIGNMENT = char,
	STORAGE = plain
);
COMMENT ON TYPE ulid IS 'universally unique lexicographically sortable identifier (26 Crockford base32 characters)';

-- comparison

CREATE FUNCTION ulid_eq(ulid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;
CREATE FUNCTION ulid_ne(ulid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;
CREATE FUNCTION ulid_lt(ulid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;
CREATE FUNCTION ulid_le(ulid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;
CREATE FUNCTION ulid_gt(ulid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;
CREATE FUNCTION ulid_ge(ulid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;
CREATE FUNCTION ulid_cmp(ulid, ulid) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;
CREATE FUNCTION ulid_sortsupport(internal) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ulid_hash(ulid) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;
CREATE FUNCTION ulid_hash_extended(ulid, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;
CREATE FUNCTION ulid_larger(ulid, ulid) RETURNS ulid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ulid_smaller(ulid, ulid) RETURNS ulid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR = (
	LEFTARG = ulid, RIGHTARG = ulid, PROCEDURE = ulid_eq,
	COMMUTATOR = =, NEGATOR = <>,
	RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES
);
CREATE OPERATOR <> (
	LEFTARG = ulid, RIGHTARG = ulid, PROCEDURE = ulid_ne,
	COMMUTATOR = <>, NEGATOR = =,
	RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR < (
	LEFTARG = ulid, RIGHTARG = ulid, PROCEDURE = ulid_lt,
	COMMUTATOR = >, NEGATOR = >=,
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
	LEFTARG = ulid, RIGHTARG = ulid, PROCEDURE = ulid_le,
	COMMUTATOR = >=, NEGATOR = >,
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR > (
	LEFTARG = ulid, RIGHTARG = ulid, PROCEDURE = ulid_gt,
	COMMUTATOR = <, NEGATOR = <=,
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE OPERATOR >= (
	LEFTARG = ulid, RIGHTARG = ulid, PROCEDURE = ulid_ge,
	COMMUTATOR = <=, NEGATOR = <,
	RESTRICT = scalargesel, JOIN = scalargejoinsel
);

CREATE OPERATOR CLASS ulid_ops
	DEFAULT FOR TYPE ulid USING btree AS
		OPERATOR 1 <,
		OPERATOR 2 <=,
		OPERATOR 3 =,
		OPERATOR 4 >=,
		OPERATOR 5 >,
		FUNCTION 1 ulid_cmp(ulid, ulid),
		FUNCTION 2 ulid_sortsupport(internal);

CREATE OPERATOR CLASS ulid_ops
	DEFAULT FOR TYPE ulid USING hash AS
		OPERATOR 1 =,
		FUNCTION 1 ulid_hash(ulid),
		FUNCTION 2 ulid_hash_extended(ulid, bigint);

-- ULIDs made over time are ordered on disk: a BRIN index stays small.
CREATE OPERATOR CLASS ulid_minmax_ops
	DEFAULT FOR TYPE ulid USING brin AS
		OPERATOR 1 <,
		OPERATOR 2 <=,
		OPERATOR 3 =,
		OPERATOR 4 >=,
		OPERATOR 5 >,
		FUNCTION 1 brin_minmax_opcinfo(internal),
		FUNCTION 2 brin_minmax_add_value(internal, internal, internal, internal),
		FUNCTION 3 brin_minmax_consistent(internal, internal, internal),
		FUNCTION 4 brin_minmax_union(internal, internal, internal);

CREATE AGGREGATE min(ulid) (
	SFUNC = ulid_smaller, STYPE = ulid, SORTOP = <,
	COMBINEFUNC = ulid_smaller, PARALLEL = SAFE
);
CREATE AGGREGATE max(ulid) (
	SFUNC = ulid_larger, STYPE = ulid, SORTOP = >,
	COMBINEFUNC = ulid_larger, PARALLEL = SAFE
);

-- time

CREATE FUNCTION ulid_time(ulid) RETURNS timestamptz
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ulid_time(ulid) IS 'the millisecond a ULID was made';

CREATE FUNCTION ulid_from_time(timestamptz) RETURNS ulid
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ulid_from_time(timestamptz) IS 'the lowest ULID of the millisecond a time falls in, for range scans';

CREATE FUNCTION ulid_parts(ulid, OUT time_part text, OUT random_part text)
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ulid_parts(ulid) IS 'the 10-character time part and the 16-character random part of a ULID';

-- casts: uuid has the same 16-byte representation; no implicit cast at all,
-- so that operators on ulid never become ambiguous.

CREATE CAST (ulid AS uuid) WITHOUT FUNCTION AS ASSIGNMENT;
CREATE CAST (uuid AS ulid) WITHOUT FUNCTION AS ASSIGNMENT;
CREATE CAST (ulid AS timestamptz) WITH FUNCTION ulid_time(ulid);
CREATE CAST (text AS ulid) WITH INOUT AS ASSIGNMENT;
CREATE CAST (ulid AS text) WITH INOUT AS ASSIGNMENT;

-- generation

CREATE FUNCTION gen_ulid() RETURNS ulid
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION gen_ulid() IS 'a new ULID: the current millisecond and 80 CSPRNG bits';

CREATE FUNCTION gen_ulid_monotonic() RETURNS ulid
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION gen_ulid_monotonic() IS 'a new ULID greater than every ULID this function made before on this server (needs shared_preload_libraries)';

-- Native uuid ids (1.3): RFC 9562 version 7, from the same CSPRNG batches as
-- gen_ulid(), and a monotonic form under gen_ulid_monotonic()'s mark.
CREATE FUNCTION gen_uuidv7() RETURNS uuid
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION gen_uuidv7() IS 'a new RFC 9562 version 7 uuid: the current millisecond and 74 CSPRNG bits';

CREATE FUNCTION gen_uuidv7_monotonic() RETURNS uuid
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION gen_uuidv7_monotonic() IS 'a new version 7 uuid greater than every uuid this function made before on this server (needs shared_preload_libraries)';

CREATE FUNCTION uuidv7_time(uuid) RETURNS timestamptz
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION uuidv7_time(uuid) IS 'the time of a version 7 (or 1) uuid, as PostgreSQL 18''s uuid_extract_timestamp gives it; NULL for other versions';

-------------------------------------------------------------------------------
-- ulid next to uuid (1.2): ulid and uuid compared with each other, indexes
-- that serve either, ulid text from text and varchar parameters.
-------------------------------------------------------------------------------

-- ulid and uuid hold the same 16 bytes, ordered by memcmp and hashed alike,
-- so ulid's btree and hash operator families take both types: an index on a
-- ulid column serves "id = $1::uuid" and "$1::uuid = id", and ulid and uuid
-- columns join by hash and by merge.  The planner support function lets an
-- index of a family without the cross-type operators (core's uuid_ops on a
-- uuid column, ulid's BRIN family) serve them too, rewritten to its own type.

CREATE FUNCTION ulid_uuid_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ulid_uuid_support(internal) IS 'planner support: an index on a uuid (or ulid) column serves a comparison with a ulid (or uuid)';

CREATE FUNCTION ulid_uuid_eq(ulid, uuid) RETURNS boolean
	AS 'MODULE_PATHNAME', 'ulid_eq' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION ulid_uuid_ne(ulid, uuid) RETURNS boolean
	AS 'MODULE_PATHNAME', 'ulid_ne' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;
CREATE FUNCTION ulid_uuid_lt(ulid, uuid) RETURNS boolean
	AS 'MODULE_PATHNAME', 'ulid_lt' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION ulid_uuid_le(ulid, uuid) RETURNS boolean
	AS 'MODULE_PATHNAME', 'ulid_le' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION ulid_uuid_gt(ulid, uuid) RETURNS boolean
	AS 'MODULE_PATHNAME', 'ulid_gt' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION ulid_uuid_ge(ulid, uuid) RETURNS boolean
	AS 'MODULE_PATHNAME', 'ulid_ge' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION ulid_uuid_cmp(ulid, uuid) RETURNS integer
	AS 'MODULE_PATHNAME', 'ulid_cmp' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;
CREATE FUNCTION uuid_ulid_eq(uuid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME', 'ulid_eq' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION uuid_ulid_ne(uuid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME', 'ulid_ne' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;
CREATE FUNCTION uuid_ulid_lt(uuid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME', 'ulid_lt' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION uuid_ulid_le(uuid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME', 'ulid_le' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION uuid_ulid_gt(uuid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME', 'ulid_gt' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION uuid_ulid_ge(uuid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME', 'ulid_ge' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION uuid_ulid_cmp(uuid, ulid) RETURNS integer
	AS 'MODULE_PATHNAME', 'ulid_cmp' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;

CREATE OPERATOR = (
	LEFTARG = ulid, RIGHTARG = uuid, PROCEDURE = ulid_uuid_eq,
	COMMUTATOR = =, NEGATOR = <>,
	RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES
);
CREATE OPERATOR <> (
	LEFTARG = ulid, RIGHTARG = uuid, PROCEDURE = ulid_uuid_ne,
	COMMUTATOR = <>, NEGATOR = =,
	RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR < (
	LEFTARG = ulid, RIGHTARG = uuid, PROCEDURE = ulid_uuid_lt,
	COMMUTATOR = >, NEGATOR = >=,
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
	LEFTARG = ulid, RIGHTARG = uuid, PROCEDURE = ulid_uuid_le,
	COMMUTATOR = >=, NEGATOR = >,
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR > (
	LEFTARG = ulid, RIGHTARG = uuid, PROCEDURE = ulid_uuid_gt,
	COMMUTATOR = <, NEGATOR = <=,
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE OPERATOR >= (
	LEFTARG = ulid, RIGHTARG = uuid, PROCEDURE = ulid_uuid_ge,
	COMMUTATOR = <=, NEGATOR = <,
	RESTRICT = scalargesel, JOIN = scalargejoinsel
);
CREATE OPERATOR = (
	LEFTARG = uuid, RIGHTARG = ulid, PROCEDURE = uuid_ulid_eq,
	COMMUTATOR = =, NEGATOR = <>,
	RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES
);
CREATE OPERATOR <> (
	LEFTARG = uuid, RIGHTARG = ulid, PROCEDURE = uuid_ulid_ne,
	COMMUTATOR = <>, NEGATOR = =,
	RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR < (
	LEFTARG = uuid, RIGHTARG = ulid, PROCEDURE = uuid_ulid_lt,
	COMMUTATOR = >, NEGATOR = >=,
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
	LEFTARG = uuid, RIGHTARG = ulid, PROCEDURE = uuid_ulid_le,
	COMMUTATOR = >=, NEGATOR = >,
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR > (
	LEFTARG = uuid, RIGHTARG = ulid, PROCEDURE = uuid_ulid_gt,
	COMMUTATOR = <, NEGATOR = <=,
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE OPERATOR >= (
	LEFTARG = uuid, RIGHTARG = ulid, PROCEDURE = uuid_ulid_ge,
	COMMUTATOR = <=, NEGATOR = <,
	RESTRICT = scalargesel, JOIN = scalargejoinsel
);

-- A btree family is consistent when it holds every operator and support
-- function 1 for every pair of its types: (ulid, ulid) from 1.0, the two
-- cross-type pairs, and (uuid, uuid), which are core's own operators and
-- functions (core's uuid_ops family stays as it is).
ALTER OPERATOR FAMILY ulid_ops USING btree ADD
	OPERATOR 1 < (ulid, uuid),
	OPERATOR 2 <= (ulid, uuid),
	OPERATOR 3 = (ulid, uuid),
	OPERATOR 4 >= (ulid, uuid),
	OPERATOR 5 > (ulid, uuid),
	FUNCTION 1 (ulid, uuid) ulid_uuid_cmp(ulid, uuid),
	OPERATOR 1 < (uuid, ulid),
	OPERATOR 2 <= (uuid, ulid),
	OPERATOR 3 = (uuid, ulid),
	OPERATOR 4 >= (uuid, ulid),
	OPERATOR 5 > (uuid, ulid),
	FUNCTION 1 (uuid, ulid) uuid_ulid_cmp(uuid, ulid),
	OPERATOR 1 pg_catalog.< (uuid, uuid),
	OPERATOR 2 pg_catalog.<= (uuid, uuid),
	OPERATOR 3 pg_catalog.= (uuid, uuid),
	OPERATOR 4 pg_catalog.>= (uuid, uuid),
	OPERATOR 5 pg_catalog.> (uuid, uuid),
	FUNCTION 1 (uuid, uuid) pg_catalog.uuid_cmp(uuid, uuid),
	FUNCTION 2 (uuid, uuid) pg_catalog.uuid_sortsupport(internal);

-- ulid_hash is uuid_hash (hash_any of the 16 bytes): equal values of either
-- type hash alike, which cross-type hashing needs.
ALTER OPERATOR FAMILY ulid_ops USING hash ADD
	OPERATOR 1 = (ulid, uuid),
	OPERATOR 1 = (uuid, ulid),
	OPERATOR 1 pg_catalog.= (uuid, uuid),
	FUNCTION 1 pg_catalog.uuid_hash(uuid),
	FUNCTION 2 pg_catalog.uuid_hash_extended(uuid, bigint);

-- Text and varchar.  ulid_in reads ULID text and the canonical text of a
-- uuid.  A varchar goes into a ulid column as a text does (pgjdbc's
-- setString sends varchar), and ulid compares with text (and so with
-- varchar, which is text to the parser) by reading the text as a ulid.
-- These functions are inlined, so "id = $1::varchar" is "id = $1::ulid" to
-- the planner and uses an index on id; text that is no ulid is 22P02.

CREATE CAST (varchar AS ulid) WITH INOUT AS ASSIGNMENT;

CREATE FUNCTION ulid_text_eq(ulid, text) RETURNS boolean
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN $1 = $2::ulid;
CREATE FUNCTION ulid_text_ne(ulid, text) RETURNS boolean
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN $1 <> $2::ulid;
CREATE FUNCTION ulid_text_lt(ulid, text) RETURNS boolean
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN $1 < $2::ulid;
CREATE FUNCTION ulid_text_le(ulid, text) RETURNS boolean
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN $1 <= $2::ulid;
CREATE FUNCTION ulid_text_gt(ulid, text) RETURNS boolean
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN $1 > $2::ulid;
CREATE FUNCTION ulid_text_ge(ulid, text) RETURNS boolean
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN $1 >= $2::ulid;
CREATE FUNCTION text_ulid_eq(text, ulid) RETURNS boolean
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN $1::ulid = $2;
CREATE FUNCTION text_ulid_ne(text, ulid) RETURNS boolean
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN $1::ulid <> $2;
CREATE FUNCTION text_ulid_lt(text, ulid) RETURNS boolean
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN $1::ulid < $2;
CREATE FUNCTION text_ulid_le(text, ulid) RETURNS boolean
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN $1::ulid <= $2;
CREATE FUNCTION text_ulid_gt(text, ulid) RETURNS boolean
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN $1::ulid > $2;
CREATE FUNCTION text_ulid_ge(text, ulid) RETURNS boolean
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN $1::ulid >= $2;

CREATE OPERATOR = (
	LEFTARG = ulid, RIGHTARG = text, PROCEDURE = ulid_text_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel
);
CREATE OPERATOR <> (
	LEFTARG = ulid, RIGHTARG = text, PROCEDURE = ulid_text_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR < (
	LEFTARG = ulid, RIGHTARG = text, PROCEDURE = ulid_text_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
	LEFTARG = ulid, RIGHTARG = text, PROCEDURE = ulid_text_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR > (
	LEFTARG = ulid, RIGHTARG = text, PROCEDURE = ulid_text_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE OPERATOR >= (
	LEFTARG = ulid, RIGHTARG = text, PROCEDURE = ulid_text_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);
CREATE OPERATOR = (
	LEFTARG = text, RIGHTARG = ulid, PROCEDURE = text_ulid_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel
);
CREATE OPERATOR <> (
	LEFTARG = text, RIGHTARG = ulid, PROCEDURE = text_ulid_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR < (
	LEFTARG = text, RIGHTARG = ulid, PROCEDURE = text_ulid_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
	LEFTARG = text, RIGHTARG = ulid, PROCEDURE = text_ulid_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR > (
	LEFTARG = text, RIGHTARG = ulid, PROCEDURE = text_ulid_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE OPERATOR >= (
	LEFTARG = text, RIGHTARG = ulid, PROCEDURE = text_ulid_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);

-------------------------------------------------------------------------------
-- Generators: one row per generator in cosid.generator (per database).
-------------------------------------------------------------------------------

CREATE SCHEMA cosid;
GRANT USAGE ON SCHEMA cosid TO PUBLIC;
COMMENT ON SCHEMA cosid IS 'cosid''s catalog of generators';

-- The layout columns are what ids were made with: fixed at definition, so a
-- later change to a preset never changes an existing generator.
CREATE TABLE cosid.generator (
	name text PRIMARY KEY,
	strategy text NOT NULL CHECK (strategy IN ('snowflake', 'cosid80', 'segment')),
	config jsonb NOT NULL,
	-- time-based generators
	epoch_ms bigint,
	unit_ms integer,
	time_bits integer,
	node_bits integer,
	seq_bits integer,
	seq_reset_threshold bigint,
	-- segment generators: the sequence numbers are allocated from
	sequence regclass,
	owns_sequence boolean NOT NULL DEFAULT false,
	owner regrole NOT NULL,
	-- a custom codec's encode and decode functions, fixed by OID (1.3)
	codec_functions oid[] CHECK (cardinality(codec_functions) = 2),
	-- whose state a time-based generator has on a server: random at
	-- definition (the name's dropped one's when it has history), copied with
	-- the database; 0: defined before 1.3 (also a row of a 1.2 dump restored
	-- here, a copy of one), whose state is its name's
	identity bigint NOT NULL DEFAULT 0,
	-- segments from the lease store: the database part of the shared
	-- counter's name, this database's name at definition (a copy or a
	-- renamed database keeps its counter)
	counter_database text,
	-- a segment generator with "distributor": "lease-store" (1.2) has no
	-- backing sequence; every other segment generator has one
	CONSTRAINT generator_sequence_check
		CHECK ((strategy = 'segment'
				AND coalesce(lower(config ->> 'distributor'), 'local') <> 'lease-store') = (sequence IS NOT NULL)),
	-- named as the unnamed CHECK of 1.0 and 1.1 was (generator_check was the
	-- one before it, which the update to 1.2 replaced)
	CONSTRAINT generator_check1 CHECK ((strategy = 'segment') = (epoch_ms IS NULL))
);
COMMENT ON TABLE cosid.generator IS 'generator definitions: change them with cosid_define(), cosid_alter() and cosid_drop()';
SELECT pg_catalog.pg_extension_config_dump('cosid.generator', '');
REVOKE ALL ON cosid.generator FROM PUBLIC;
GRANT SELECT ON cosid.generator TO PUBLIC;
COMMENT ON COLUMN cosid.generator.codec_functions IS 'the custom codec''s encode and decode functions, fixed when its codec was defined or altered: never looked up by name again';

-- The generator a sequence backs, found by index (1.4): a define that adopts
-- a sequence, and every row a restore writes, look it up.
CREATE INDEX generator_sequence ON cosid.generator (sequence);

-- Any change to the catalog (also a restore) makes backends re-read it.
CREATE FUNCTION cosid.catalog_changed() RETURNS trigger
	AS 'MODULE_PATHNAME', 'cosid_catalog_changed' LANGUAGE C;
CREATE TRIGGER generator_changed
	AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON cosid.generator
	FOR EACH STATEMENT EXECUTE FUNCTION cosid.catalog_changed();

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
-- Only for a row it may change (1.4): one whose codec list has a custom item,
-- or with codec_functions to clear (most rows have neither: cosid_define
-- then calls no PL/pgSQL).
CREATE TRIGGER generator_bind_codec
	BEFORE INSERT OR UPDATE OF config, codec_functions ON cosid.generator
	FOR EACH ROW
	WHEN (NEW.codec_functions IS NOT NULL OR NEW.config @? '$.codec[*].custom')
	EXECUTE FUNCTION cosid.generator_bind_codec();

CREATE VIEW cosid.generators AS
	SELECT name, strategy, owner,
		   pg_catalog.to_timestamp(epoch_ms / 1000.0) AS epoch,
		   CASE unit_ms WHEN 1 THEN 'ms' WHEN 1000 THEN 's' END AS unit,
		   time_bits, node_bits, seq_bits, seq_reset_threshold,
		   coalesce((config ->> 'uncertainty-bits')::int, 0) AS uncertainty_bits,
		   time_bits + node_bits + seq_bits + coalesce((config ->> 'uncertainty-bits')::int, 0) AS total_bits,
		   strategy <> 'cosid80'
			 AND time_bits + node_bits + seq_bits + coalesce((config ->> 'uncertainty-bits')::int, 0) <= 53 AS js_safe,
		   sequence,
		   config,
		   CASE WHEN strategy = 'segment'
				THEN coalesce(lower(config ->> 'distributor'), 'local') END AS distributor
	FROM cosid.generator;
COMMENT ON VIEW cosid.generators IS 'generators of this database with their resolved layout';
GRANT SELECT ON cosid.generators TO PUBLIC;

CREATE FUNCTION cosid_define(name text, config jsonb) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION cosid_define(text, jsonb) IS 'define a generator from a JSON document with the keys of CosId''s configuration';

CREATE FUNCTION cosid_alter(name text, config jsonb) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION cosid_alter(text, jsonb) IS 'change the given keys of a generator (time-based: codec, clock-regression, seq-reset-threshold, int; segment: step, reserve, codec, int); null resets a key';

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

CREATE FUNCTION cosid_drop(name text, if_exists boolean DEFAULT false,
						   forget_history boolean DEFAULT false) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION cosid_drop(text, boolean, boolean) IS 'drop a generator; forget_history: let the name start over (its numbers may be handed out again)';

-- issuing

CREATE FUNCTION cosid_next(name text) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION cosid_next(text) IS 'the next id of a generator';

CREATE FUNCTION cosid_next_text(name text) RETURNS text
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION cosid_next_text(text) IS 'the next id of a generator as text';

CREATE FUNCTION cosid_next_int(name text) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION cosid_next_int(text) IS 'the next id of a generator as int4; an error past 2147483647';

CREATE FUNCTION cosid_next_many(name text, n integer) RETURNS SETOF bigint
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE ROWS 1000;
COMMENT ON FUNCTION cosid_next_many(text, integer) IS 'n ids of a generator in one call, in order';

-- layouts

CREATE FUNCTION cosid_unpack(name text, id bigint,
							 OUT "time" timestamptz, OUT node integer, OUT seq bigint)
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cosid_unpack(text, bigint) IS 'when, where and in what order an id was made';

-- (1.3: a name of its own, so that cosid_unpack($1, $2) with parameters of
-- no declared type always means the id form, whose id may come as text)
CREATE FUNCTION cosid_unpack_text(name text, txt text,
								  OUT "time" timestamptz, OUT node integer, OUT seq bigint)
	AS 'MODULE_PATHNAME', 'cosid_unpack_text' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cosid_unpack_text(text, text) IS 'when, where and in what order an id given as text (through its generator''s codec) was made';

CREATE FUNCTION cosid_pack(name text, "time" timestamptz, node integer DEFAULT 0, seq bigint DEFAULT 0)
	RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cosid_pack(text, timestamptz, integer, bigint) IS 'the id with these parts: with the defaults, the lowest id of that time, for range scans';

CREATE FUNCTION cosid_is_js_safe(id bigint) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cosid_is_js_safe(bigint) IS 'whether an id is exact as a JavaScript number (|id| <= 2^53 - 1)';

-- state

CREATE FUNCTION cosid_slot(OUT mode text, OUT slot integer, OUT namespace text, OUT state text,
						   OUT window_start timestamptz, OUT window_end timestamptz,
						   OUT renewals bigint, OUT renewal_failures bigint,
						   OUT instance text, OUT store_connected boolean,
						   OUT last_renewal timestamptz, OUT last_error text)
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cosid_slot() IS 'this server''s slot and the window in which it issues ids';

-- A copy of a server is not the same server (1.3): a server started from a
-- copy (base backup, point-in-time recovery, file copy) of one that uses its
-- manual slot issues nothing until a superuser confirms the slot is its own.
CREATE FUNCTION cosid_slot_confirm() RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION cosid_slot_confirm() FROM PUBLIC;
COMMENT ON FUNCTION cosid_slot_confirm() IS 'confirm that this server, started from a copy of another, may use its manual slot (the original no longer does)';

CREATE FUNCTION cosid.stats(OUT name text, OUT issued bigint, OUT seq_waits bigint,
							OUT clock_borrows bigint, OUT clock_waits bigint, OUT clock_failures bigint,
							OUT segment_fetches bigint, OUT segment_waits bigint,
							OUT epoch_ms bigint, OUT unit_ms integer, OUT time_bits integer,
							OUT node_bits integer, OUT seq_bits integer, OUT sequence oid,
							OUT identity bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'cosid_stats' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION cosid.stats() IS 'the shared-memory entries of this database''s generators since the server started';

-- (1.3: in schema cosid, where schema tools leave it alone)
CREATE VIEW cosid.generator_stats AS
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
COMMENT ON VIEW cosid.generator_stats IS 'per generator of this database since the server started: ids issued, waits, clock borrows and failures, segment fetches';

-------------------------------------------------------------------------------
-- Codecs: ids to text and back.
-------------------------------------------------------------------------------

CREATE FUNCTION cosid_encode(name text, id bigint) RETURNS text
	AS 'MODULE_PATHNAME', 'cosid_encode_named' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cosid_encode(text, bigint) IS 'an id as text, through its generator''s codec';

CREATE FUNCTION cosid_decode(name text, txt text) RETURNS bigint
	AS 'MODULE_PATHNAME', 'cosid_decode_named' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cosid_decode(text, text) IS 'the id a text stands for, through its generator''s codec';

-- An inline codec list (1.3: names of their own, so that cosid_encode($1, $2)
-- and cosid_decode($1, $2) with parameters of no declared type always mean
-- the generator forms)
CREATE FUNCTION cosid_encode_with(id bigint, codec jsonb) RETURNS text
	AS 'MODULE_PATHNAME', 'cosid_encode_adhoc' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cosid_encode_with(bigint, jsonb) IS 'a number as text, through any codec list';

CREATE FUNCTION cosid_decode_with(txt text, codec jsonb) RETURNS bigint
	AS 'MODULE_PATHNAME', 'cosid_decode_adhoc' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cosid_decode_with(text, jsonb) IS 'the number a text stands for, through any codec list';

-------------------------------------------------------------------------------
-- Leases: when this database is the lease store of several servers.
-- A slot of a namespace is held by at most one instance at a time; each call
-- is one atomic function: acquires and releases are serialised per
-- namespace, renewals per lease (1.4).  Every acquire gives the holder a
-- fencing token, which renew and release require, and binds the lease to
-- the role that acquired it (1.3).  The largest TTL of each namespace
-- (cosid.lease_namespace_config, 1.4) is in "The lease store trusts only
-- superusers (1.4)" below.
-------------------------------------------------------------------------------

CREATE TABLE cosid.lease (
	namespace text NOT NULL,
	slot integer NOT NULL CHECK (slot >= 0),
	instance text,					-- NULL: released
	expires_at timestamptz NOT NULL,	-- by the store's clock
	window_end bigint NOT NULL DEFAULT 0,	-- Unix ms, the holder's clock: no id of
										-- this slot used a unit starting at or after it
	acquired_at timestamptz,
	renewed_at timestamptz,
	token uuid,						-- the fencing token of the last acquire
	holder text,					-- the role that acquired it (1.3): only it renews and releases
	window_start bigint,			-- where the holder's window started (1.4): the end its
									-- acquire gave it; its release may record its true last
									-- end, below the end it recorded ahead, never below this;
									-- NULL: a lease taken before 1.4 (its release never lowers
									-- the end).  Last: the update from 1.3 adds it.
	PRIMARY KEY (namespace, slot)
);
COMMENT ON TABLE cosid.lease IS 'slot leases of the servers that use this database as their cosid.lease_store';
COMMENT ON COLUMN cosid.lease.token IS 'fencing token of the last acquire, required by renew and release: readable by no one but the owner';
SELECT pg_catalog.pg_extension_config_dump('cosid.lease', '');
COMMENT ON COLUMN cosid.lease.holder IS 'the role (session_user) that acquired the lease: only it may renew or release it; readable by no one but the owner';
COMMENT ON COLUMN cosid.lease.window_start IS 'the window end the holder''s acquire gave it (1.4): its release never records an end below it';
REVOKE ALL ON cosid.lease FROM PUBLIC;
GRANT SELECT (namespace, slot, expires_at, window_end, acquired_at, renewed_at) ON cosid.lease TO PUBLIC;

-- One row per namespace the lease functions were called for: each acquire
-- and release locks its namespace's row (FOR UPDATE) until it commits, so
-- they run one after the other in a namespace and other namespaces do not
-- wait (renewals lock no namespace row since 1.4, only their lease's).  No
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
-- else a slot of 0 .. 2^slot_bits - 1 that has no live lease: the lowest
-- released one, else the lowest never leased, else the one expired longest
-- (1.4; before, the lowest of the three kinds).  A lease belongs to the
-- role that acquired it (session_user, the role the server logs in as:
-- holder): "its own" is a live lease of this instance id held by this
-- role, so another role naming the same instance id never gets that lease
-- (only a free slot, as any new instance would).  A lease from before 1.1
-- (no token, no holder) is its instance's until claimed.  previous_end is the window end the slot's last
-- holder recorded: the new window starts no earlier.  token is the lease's
-- fencing token, new at every acquire: renew and release need it, so
-- whoever held the slot before (even under the same instance id) can no
-- longer touch it.  The free slot is found from the namespace's rows (2^31
-- slots are never enumerated).
-- Since 1.4: a TTL beyond the namespace's largest is refused; the window end
-- a new holder of a slot is given, and the one recorded, are at most the
-- largest TTL and a second past the store's clock when it takes the row,
-- under the row's lock (the furthest any holder may have recorded: a
-- renewal records at most its TTL and a second ahead; an instance that takes
-- its own live lease again keeps its end: it waits for no one but itself).
-- Acquires and releases of a namespace run one after the other (its row of
-- cosid.lease_namespace, which only the owner may lock, not an advisory
-- lock, which any role could take first); renewals do not lock the
-- namespace (1.4, Fleet), only their lease's row.  So a released or
-- expired slot is chosen and locked at once (FOR NO KEY UPDATE SKIP
-- LOCKED): a row a renewal holds is skipped (that renewal may bring it back
-- to life), a row whose lease a renewal brought back to life since the
-- statement began fails the re-check, and a losing acquire holds no lock
-- of a slot it does not take, so a renewal does not wait for an acquire of
-- another slot (but for one case: PostgreSQL keeps the lock of a row whose
-- re-check failed, so a renewal that commits between the statement's
-- snapshot and its reaching that row leaves the row locked until the
-- acquire commits); a renewal that comes after the lock waits for the
-- commit, finds the new token and fails (55000).  The new holder's window
-- start is kept (window_start): its release may lower the end to its last
-- one, never below that.  An acquire or a release waits at most 4 seconds
-- for each lock (lock_timeout, 55P03; a call queued for the namespace's row
-- waits about that long in all), a second less than a server waits for a
-- call's answer (5 seconds): a call that queued too long ends with that
-- answer, so the server keeps its connection (and the store its warm
-- backend) for the next try instead of dropping it, and a store whose
-- clients went away does not go on queueing their calls behind the
-- namespace's lock.  Its deadlock_timeout (5 seconds) is longer, so a
-- waiting call never runs PostgreSQL's deadlock check (nor does
-- log_lock_waits log its wait): when a fleet's acquires queued together,
-- each of a thousand waiters ran it after a second, holding every lock
-- partition while it walked the queue.  Calls made one per transaction, as
-- the servers make them, cannot deadlock: an acquire or a release locks
-- its namespace's row before any lease's, a renewal only its lease's; in a
-- transaction that makes several, lock_timeout ends a cycle (55P03, not
-- 40P01).
CREATE FUNCTION cosid.lease_acquire(namespace text, instance text, slot_bits integer, ttl interval,
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

-- Extend a lease and record the holder's new window end (never lower).
-- Fails with 55000 unless this role holds the slot under this instance id
-- with this token: the lease was taken over or released meanwhile (or the
-- token or the role is wrong).  A lease taken before 1.3 (no holder yet)
-- becomes the lease of the role that renews it with its token.  A window end
-- further ahead of the store's clock than the TTL and one second allow is
-- refused (22023) and nothing is recorded: a holder whose clock runs ahead
-- cannot push the slot's next holders into the future.  Since 1.4 a TTL
-- beyond the namespace's largest is refused (so is a window end further
-- ahead than it and one second), and a renewal locks no row of
-- cosid.lease_namespace, only its lease's (Fleet, below).
CREATE FUNCTION cosid.lease_renew(namespace text, slot integer, instance text, token uuid, window_end bigint,
								  ttl interval)
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

-- Give a slot back.  last_end is the true end of what was issued.  The end
-- recorded is the holder's last end, even when that is below the end it
-- recorded ahead (1.4: a clean shutdown's next start, above every id it
-- issued, so the slot's next holder, often the same server restarted, does
-- not wait for the lead it recorded), never below where its window started
-- (window_start: a holder vouches for its own ids only, never for its
-- predecessors'); a lease taken before 1.4 keeps the greater of the two, as
-- in 1.3 (the recorded window end never goes down).  true: released now;
-- false: this holder had already released it (a retried release); 55000
-- unless this role holds the slot under this instance id with this token.
-- A last end above both the recorded window end and one second past the
-- store's clock is refused (22023): a holder issues only below an end it
-- recorded.  It waits for a lock as lease_acquire does (at most 4 seconds
-- for each, no deadlock check).
CREATE FUNCTION cosid.lease_release(namespace text, slot integer, instance text, token uuid, last_end bigint)
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

REVOKE ALL ON FUNCTION cosid.lease_acquire(text, text, integer, interval),
	cosid.lease_renew(text, integer, text, uuid, bigint, interval),
	cosid.lease_release(text, integer, text, uuid, bigint) FROM PUBLIC;
COMMENT ON FUNCTION cosid.lease_acquire(text, text, integer, interval) IS 'take a slot of 2^slot_bits for an instance, as this role (the lease''s holder), for at most the namespace''s largest TTL; returns its fencing token (grant EXECUTE to each server''s own role)';
COMMENT ON FUNCTION cosid.lease_renew(text, integer, text, uuid, bigint, interval) IS 'extend a lease this role holds with its token, for at most the namespace''s largest TTL, and record the holder''s window end (never lower, at most the TTL and 1 second ahead of the store''s clock)';
COMMENT ON FUNCTION cosid.lease_release(text, integer, text, uuid, bigint) IS 'give back a slot this role holds with its token, recording its last end (1.4: even below the end it recorded, never below where its window started)';

-------------------------------------------------------------------------------
-- Immutable codecs (1.2): cosid_encode_immutable and cosid_decode_immutable,
-- for index expressions, generated columns and CHECK constraints.
-------------------------------------------------------------------------------

-- The same text as cosid_encode_with(bigint, jsonb) and cosid_decode_with(text, jsonb),
-- for lists whose text depends on the input alone: radix, prefix, suffix,
-- grouped, and friendly in UTC.  Binding the list refuses every other item
-- (22023, with its JSON path): date-prefix (the clock, or a generator's
-- layout), friendly in another zone (its rules change), custom (functions
-- found by name through the search_path).  There is no form with a
-- generator's name: cosid_alter can change a generator's codec.
CREATE FUNCTION cosid_encode_immutable(id bigint, codec jsonb) RETURNS text
	AS 'MODULE_PATHNAME', 'cosid_encode_immutable' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cosid_encode_immutable(bigint, jsonb) IS 'a number as text, through a codec list whose text depends on the number alone (for indexes)';

CREATE FUNCTION cosid_decode_immutable(txt text, codec jsonb) RETURNS bigint
	AS 'MODULE_PATHNAME', 'cosid_decode_immutable' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cosid_decode_immutable(text, jsonb) IS 'the number a text stands for, through a codec list whose result depends on the text alone (for indexes)';

-------------------------------------------------------------------------------
-- Segments shared across servers (1.2): a segment generator defined with
-- "distributor": "lease-store" takes its segments from the lease store
-- (cosid.lease_store) instead of a local sequence, so servers that write the
-- same tables never hand out the same number.  On the store: a counter per
-- namespace, database name and generator name (1.3; per namespace and
-- generator name in 1.2), advanced by one atomic function.  On every
-- server: such a generator has no backing sequence, and cosid.generators
-- shows where each segment generator's segments come from (cosid.generator's
-- generator_sequence_check and cosid.generators' distributor column, both
-- above).
-------------------------------------------------------------------------------

-- The last number handed out per namespace, database name and generator
-- name.  It only goes up: each range cosid.segment_acquire returns lies above
-- every range it returned before, to any server.  A counter belongs to the
-- generators' owner and to the store role that created it (1.3); database ''
-- is a counter from 1.2, named by namespace and generator name only, which
-- no request uses any more: a new counter of that name starts above it.
-- Dumped with the store's database.
CREATE TABLE cosid.segment_counter (
	namespace text NOT NULL,
	name text NOT NULL,
	last_number bigint NOT NULL,	-- the last number handed out
	fetches bigint NOT NULL DEFAULT 1,
	updated_at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
	database text NOT NULL DEFAULT '',	-- the servers' database name; '': from 1.2
	owner text,						-- the generators' owner (a role name on the servers)
	store_role text,				-- the store role that created it
	CONSTRAINT segment_counter_pkey PRIMARY KEY (namespace, database, name),
	CONSTRAINT segment_counter_owner_check
		CHECK ((database = '') = (owner IS NULL) AND (database = '') = (store_role IS NULL))
);
COMMENT ON TABLE cosid.segment_counter IS 'segments handed out to the servers that use this database as their cosid.lease_store: the last number of each namespace, database name and generator name';
SELECT pg_catalog.pg_extension_config_dump('cosid.segment_counter', '');
REVOKE ALL ON cosid.segment_counter FROM PUBLIC;
GRANT SELECT (namespace, name, last_number, fetches, updated_at, database) ON cosid.segment_counter TO PUBLIC;
-- pg_dump by the database's owner reads every column (owner, store_role too)
GRANT SELECT ON cosid.segment_counter TO pg_database_owner;

-- Hand out count segments of step numbers: the range [first, last], above
-- every number handed out before for this counter and at least start.  A
-- counter is named by the namespace, the name of the server's database and
-- the generator's name (1.3): a definition in another database names another
-- counter.  It belongs to the generator's owner (owner, a role name the
-- server sends from its catalog) and is for the store role that created it
-- (session_user), for the roles a superuser granted it to in
-- cosid.segment_counter_grant (1.4; 1.3 shared it through a role granted
-- EXECUTE on this function, which is gone), and for superusers: a request
-- for it with another owner, or by any other store role, is refused
-- (42501).  What a server says (database, owner) names the counter and must
-- match its owner, but never gives a role the right to use it.  Only its
-- creator (or a superuser) may raise it with start: a granted role asking
-- for a start above the counter is refused (42501).  A new counter starts
-- above the counter of the namespace and name from before 1.3 (database
-- ''), if there is one.  The counter's row is locked (FOR UPDATE, which
-- PUBLIC may not take), so callers from any server get disjoint ranges; the
-- commit is made durable (synchronous_commit on), so a store crash never
-- gives a range out again.
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
REVOKE ALL ON FUNCTION cosid.segment_acquire(text, text, text, text, bigint, bigint, integer) FROM PUBLIC;
COMMENT ON FUNCTION cosid.segment_acquire(text, text, text, text, bigint, bigint, integer) IS 'hand out count segments of step numbers from the counter of a namespace, database and generator name, above every number it handed out and at least start; only for the generator''s owner, through the store role that created the counter or one a superuser granted it to (cosid.segment_counter_grant)';

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

-------------------------------------------------------------------------------
-- Citus (1.3): generators as objects of the cluster.  On a Citus
-- coordinator, cosid_define, cosid_alter and cosid_drop also write the
-- generator's row here; cosid_citus_sync() (or the first of those once the
-- cluster has a worker) makes this table a Citus reference table, so Citus
-- writes every change to every node in the coordinator's transaction (two-
-- phase commit) and copies the table to a node added later before it gets a
-- shard.  A worker issues from the row it holds here (cosid.generator stays
-- empty there: a worker refuses cosid_define).  Without Citus the table stays
-- empty and nothing reads it.  The owner is a role name (roles are the same
-- on every node, their OIDs are not); a custom codec's functions are bound
-- by their qualified names on a worker.  A segment generator backed by a
-- sequence of the coordinator is written with coordinator_only: a worker
-- encodes and decodes with it but refuses to issue its numbers.  Not dumped:
-- cosid_citus_sync() writes it again from cosid.generator.
-------------------------------------------------------------------------------

CREATE TABLE cosid.citus_generator (
	name text PRIMARY KEY,
	strategy text NOT NULL,
	config jsonb NOT NULL,
	epoch_ms bigint,
	unit_ms integer,
	time_bits integer,
	node_bits integer,
	seq_bits integer,
	seq_reset_threshold bigint,
	owner text NOT NULL,
	identity bigint NOT NULL,
	counter_database text,
	coordinator_only boolean NOT NULL DEFAULT false
);
COMMENT ON TABLE cosid.citus_generator IS 'on a Citus cluster: the coordinator''s generators, as every node reads them (a reference table)';
REVOKE ALL ON cosid.citus_generator FROM PUBLIC;
GRANT SELECT ON cosid.citus_generator TO PUBLIC;

-- Backends of a node re-read their generators when Citus commits a change
-- here (an invalidation message, which a prepared transaction carries to
-- its COMMIT PREPARED).
CREATE FUNCTION cosid.citus_changed() RETURNS trigger
	AS 'MODULE_PATHNAME', 'cosid_citus_changed' LANGUAGE C;
CREATE TRIGGER citus_generator_changed
	AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON cosid.citus_generator
	FOR EACH STATEMENT EXECUTE FUNCTION cosid.citus_changed();

CREATE FUNCTION cosid_citus_sync() RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION cosid_citus_sync() FROM PUBLIC;
COMMENT ON FUNCTION cosid_citus_sync() IS 'on a Citus coordinator: make every generator of this database reach every node (returns how many)';

-- Slots on a Citus cluster: each node has its own, manual (cosid.slot = N)
-- or leased from one store (the coordinator's database can be it).
-- cosid_citus_check_slots() on the coordinator reads every node's slot
-- through Citus (a constant command, the same on every node) and fails
-- when two nodes hold one.
CREATE FUNCTION cosid.node_slot(OUT mode text, OUT slot integer, OUT namespace text, OUT state text,
								OUT window_start timestamptz, OUT window_end timestamptz,
								OUT renewals bigint, OUT renewal_failures bigint,
								OUT instance text, OUT store_connected boolean,
								OUT last_renewal timestamptz, OUT last_error text)
	AS 'MODULE_PATHNAME', 'cosid_slot' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION cosid.node_slot() IS 'cosid_slot() under a name of schema cosid, which cosid_citus_check_slots() calls on every node';

CREATE FUNCTION cosid_citus_check_slots(OUT node text, OUT mode text, OUT slot integer, OUT state text)
	RETURNS SETOF record
	LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	r record;
	seen jsonb := '{}';
BEGIN
	IF to_regprocedure('pg_catalog.run_command_on_all_nodes(text, boolean, boolean)') IS NULL THEN
		RAISE EXCEPTION 'Citus is not installed in this database'
			USING ERRCODE = '55000', HINT = 'cosid_citus_check_slots() runs on the coordinator of a Citus cluster.';
	END IF;
	FOR r IN
		SELECT coalesce(n.nodename || ':' || n.nodeport, 'node ' || o.nodeid) AS node, o.success, o.result
		  FROM pg_catalog.run_command_on_all_nodes(
			   'SELECT pg_catalog.concat_ws(''|'', s.mode, coalesce(s.slot::pg_catalog.text, ''''), s.state) FROM cosid.node_slot() s') o
		  LEFT JOIN pg_catalog.pg_dist_node n ON n.nodeid = o.nodeid
		 ORDER BY o.nodeid
	LOOP
		IF NOT r.success AND strpos(r.result, 'cosid.node_slot() does not exist') > 0 THEN
			RAISE EXCEPTION 'node % has no cosid 1.3', r.node
				USING ERRCODE = '55000', DETAIL = r.result,
					  HINT = 'Create or update the extension cosid there (ALTER EXTENSION cosid UPDATE), as on the coordinator.';
		ELSIF NOT r.success THEN
			RAISE EXCEPTION 'could not read the cosid slot of node %', r.node
				USING ERRCODE = '08000', DETAIL = r.result;
		END IF;
		node := r.node;
		mode := split_part(r.result, '|', 1);
		slot := nullif(split_part(r.result, '|', 2), '')::integer;
		state := split_part(r.result, '|', 3);
		IF slot IS NOT NULL THEN
			IF seen ? slot::text THEN
				RAISE EXCEPTION 'nodes % and % hold cosid slot %', seen ->> slot::text, node, slot
					USING ERRCODE = '55000',
						  DETAIL = 'Two nodes with one slot can issue the same id.',
						  HINT = 'Give each node a cosid.slot of its own, or let every node lease one (cosid.slot = ''lease'') from one store.';
			END IF;
			seen := seen || jsonb_build_object(slot::text, node);
		END IF;
		RETURN NEXT;
	END LOOP;
END
$f$;
COMMENT ON FUNCTION cosid_citus_check_slots() IS 'on a Citus coordinator: every node''s cosid slot; an error when two nodes hold one';

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

-- Identities belong to a database (1.4)
-- A time-based generator's identity belongs to the database that first
-- defined it or issued with it on this server (pg_cosid/names keeps which);
-- another database gets it only through a copy made by a superuser or a
-- member of that database's owner role.  cosid.restore_check() checks the
-- rows of cosid.generator_history too: a dropped time-based name's row
-- (its identity and layout) is taken by cosid_define as the name's.
-------------------------------------------------------------------------------

CREATE TRIGGER generator_history_restore_check
	BEFORE INSERT ON cosid.generator_history
	FOR EACH ROW EXECUTE FUNCTION cosid.restore_check();

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

-- cosid.lease.window_start and the 1.4 bodies of cosid.lease_acquire,
-- cosid.lease_renew and cosid.lease_release (which read
-- cosid.lease_namespace_config) are in "Leases" above, the 1.4 body of
-- cosid.segment_acquire (which reads cosid.segment_counter_grant) in
-- "Segments shared across servers" above (the update from 1.3,
-- cosid--1.3--1.4.sql, adds and replaces them at this point).
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
-- "Leases" above, lets renewals run side by side.  Every call of a namespace
-- used to lock the namespace's row FOR UPDATE until it committed, and each
-- commits synchronously, so a namespace's renewals ran one fsync after
-- another: at 1,024 busy holders (2,560 renewals a second) they queued.  A
-- renewal now takes no lock of the namespace at all: a renewal and an acquire
-- that would take its slot over are ordered by the lease's own row, and the
-- acquire takes a slot of someone else's only if, under that row's lock, it is
-- still released or expired (else it chooses again).  Acquire and release keep
-- FOR UPDATE on the namespace's row, so they run one at a time; renewals share
-- their WAL flushes and never wait behind them (a FOR SHARE that 1.4's first
-- change took queued every renewal behind each acquire and release: 9 ms a
-- renewal on average at 2 restarts a second).
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
