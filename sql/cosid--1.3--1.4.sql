/* cosid--1.3--1.4.sql: from 1.3 to 1.4 */

\echo Use "ALTER EXTENSION cosid UPDATE TO '1.4'" to load this file. \quit

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

-- 1.3's comment on cosid_alter named the keys of time-based generators only
-- (cosid--1.4.sql has the new one at the function)
COMMENT ON FUNCTION cosid_alter(text, jsonb) IS 'change the given keys of a generator (time-based: codec, clock-regression, seq-reset-threshold, int; segment: step, reserve, codec, int); null resets a key';

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
