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

-------------------------------------------------------------------------------
-- Segments shared across servers (1.2): a segment generator defined with
-- "distributor": "lease-store" takes its segments from the lease store
-- (cosid.lease_store) instead of a local sequence, so servers that write the
-- same tables never hand out the same number.  On the store: a counter per
-- namespace and generator name, advanced by one atomic function.  On every
-- server: such a generator has no backing sequence, and cosid.generators
-- shows where each segment generator's segments come from.
-------------------------------------------------------------------------------

-- The last number handed out per namespace and generator name.  It only goes
-- up: each range cosid.segment_acquire returns lies above every range it
-- returned before, to any server.  Dumped with the store's database.
CREATE TABLE cosid.segment_counter (
	namespace text NOT NULL,
	name text NOT NULL,
	last_number bigint NOT NULL,	-- the last number handed out
	fetches bigint NOT NULL DEFAULT 1,
	updated_at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
	CONSTRAINT segment_counter_pkey PRIMARY KEY (namespace, name)
);
COMMENT ON TABLE cosid.segment_counter IS 'segments handed out to the servers that use this database as their cosid.lease_store: the last number of each namespace and generator name';
SELECT pg_catalog.pg_extension_config_dump('cosid.segment_counter', '');
REVOKE ALL ON cosid.segment_counter FROM PUBLIC;
GRANT SELECT ON cosid.segment_counter TO PUBLIC;

-- Hand out count segments of step numbers: the range [first, last], above
-- every number handed out before for this namespace and name and at least
-- start.  One statement on one row (INSERT ... ON CONFLICT DO UPDATE), so
-- callers from any server get disjoint ranges; the commit is made durable
-- (synchronous_commit on), so a store crash never gives a range out again.
-- 22023 for a bad argument, 22003 when the range would pass 2^63 - 1.
CREATE FUNCTION cosid.segment_acquire(namespace text, name text, step bigint, start bigint, count integer,
									  OUT first bigint, OUT last bigint)
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	size bigint;
	top bigint;
BEGIN
	IF segment_acquire.namespace = '' OR segment_acquire.name = '' THEN
		RAISE EXCEPTION 'invalid cosid segment request: the namespace and the name must not be empty'
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
		RAISE EXCEPTION 'cosid segment counter "%" of namespace "%" cannot go past 9223372036854775807',
			segment_acquire.name, segment_acquire.namespace
			USING ERRCODE = 'numeric_value_out_of_range',
				  DETAIL = pg_catalog.format('%s segments of %s from %s do not fit a bigint.',
											 segment_acquire.count, segment_acquire.step, segment_acquire.start);
	END IF;
	PERFORM pg_catalog.set_config('synchronous_commit', 'on', true);
	INSERT INTO cosid.segment_counter AS c (namespace, name, last_number)
	VALUES (segment_acquire.namespace, segment_acquire.name, segment_acquire.start - 1 + size)
	ON CONFLICT ON CONSTRAINT segment_counter_pkey DO UPDATE
	SET last_number = GREATEST(c.last_number, segment_acquire.start - 1) + size,
		fetches = c.fetches + 1,
		updated_at = pg_catalog.clock_timestamp()
	WHERE GREATEST(c.last_number, segment_acquire.start - 1) <= 9223372036854775807 - size
	RETURNING c.last_number INTO top;
	IF top IS NULL THEN
		RAISE EXCEPTION 'cosid segment counter "%" of namespace "%" cannot go past 9223372036854775807',
			segment_acquire.name, segment_acquire.namespace
			USING ERRCODE = 'numeric_value_out_of_range',
				  DETAIL = pg_catalog.format('%s segments of %s do not fit above the last number handed out.',
											 segment_acquire.count, segment_acquire.step);
	END IF;
	first := top - size + 1;
	last := top;
END
$$;
REVOKE ALL ON FUNCTION cosid.segment_acquire(text, text, bigint, bigint, integer) FROM PUBLIC;
COMMENT ON FUNCTION cosid.segment_acquire(text, text, bigint, bigint, integer) IS 'hand out count segments of step numbers, above every number handed out before for the namespace and name and at least start (grant EXECUTE to the role the servers connect as)';

-- On every server: a segment generator with "distributor": "lease-store" has
-- no backing sequence; every other segment generator has one.
ALTER TABLE cosid.generator DROP CONSTRAINT generator_check;
ALTER TABLE cosid.generator ADD CONSTRAINT generator_sequence_check
	CHECK ((strategy = 'segment'
			AND coalesce(lower(config ->> 'distributor'), 'local') <> 'lease-store') = (sequence IS NOT NULL));

CREATE OR REPLACE VIEW cosid.generators AS
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
