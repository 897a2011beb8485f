/* cosid--1.1--1.2.sql: from 1.1 to 1.2 */

\echo Use "ALTER EXTENSION cosid UPDATE TO '1.2'" to load this file. \quit

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
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION ulid_uuid_ne(ulid, uuid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;
CREATE FUNCTION ulid_uuid_lt(ulid, uuid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION ulid_uuid_le(ulid, uuid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION ulid_uuid_gt(ulid, uuid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION ulid_uuid_ge(ulid, uuid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION ulid_uuid_cmp(ulid, uuid) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;
CREATE FUNCTION uuid_ulid_eq(uuid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION uuid_ulid_ne(uuid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;
CREATE FUNCTION uuid_ulid_lt(uuid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION uuid_ulid_le(uuid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION uuid_ulid_gt(uuid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION uuid_ulid_ge(uuid, ulid) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE SUPPORT ulid_uuid_support;
CREATE FUNCTION uuid_ulid_cmp(uuid, ulid) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;

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
-- Immutable codecs (1.2): cosid_encode_immutable and cosid_decode_immutable,
-- for index expressions, generated columns and CHECK constraints.
-------------------------------------------------------------------------------

-- The same text as cosid_encode(bigint, jsonb) and cosid_decode(text, jsonb),
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
