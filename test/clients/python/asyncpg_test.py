#!/usr/bin/python3
"""asyncpg against cosid (TAP): asyncpg speaks the binary protocol, so a ulid
needs a codec (register_asyncpg: asyncpg's uuid codec, or Ulid); ids from the
defaults through RETURNING, ulid parameters and results, ulid[] arrays, binary
COPY (copy_records_to_table), gen_uuidv7() as uuid.UUID, encode/decode/unpack
with $1/$2 parameters, a pool.  Connects with the PG* environment variables,
as a superuser, and makes its own database, cosid_asyncpg."""
import asyncio
import datetime
import json
import os
import secrets
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import asyncpg  # noqa: E402

from cosid_ulid import Ulid, register_asyncpg  # noqa: E402
from tap import Tap  # noqa: E402

DB = "cosid_asyncpg"
SCHEMA = """
CREATE EXTENSION cosid;
SELECT cosid_define('order', '{"strategy": "snowflake"}');
SELECT cosid_define('ticket', '{"strategy": "snowflake", "codec": [{"radix": 62}, {"prefix": "T"}]}');
CREATE TABLE orders (
    id   bigint PRIMARY KEY DEFAULT cosid_next('order'),
    ref  ulid NOT NULL UNIQUE DEFAULT gen_ulid_monotonic(),
    item text NOT NULL
);
CREATE TABLE events (
    id       uuid PRIMARY KEY DEFAULT gen_uuidv7(),
    order_id bigint NOT NULL REFERENCES orders,
    what     text NOT NULL
);
CREATE TABLE baskets (n int PRIMARY KEY, refs ulid[]);
"""
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def base62(n):
    out = ""
    while True:
        n, d = divmod(n, 62)
        out = BASE62[d] + out
        if n == 0:
            return out


def new_ulid():
    """A ULID made here: this millisecond and 80 random bits."""
    return Ulid(int=(int(time.time() * 1000) << 80) | secrets.randbits(80))


async def main(t):
    admin = await asyncpg.connect(database="postgres")
    await admin.execute(f"DROP DATABASE IF EXISTS {DB}")
    await admin.execute(f"CREATE DATABASE {DB}")
    await admin.close()
    conn = await asyncpg.connect(database=DB)
    await conn.execute(SCHEMA)

    # without a codec asyncpg reads a ulid as its text, and refuses a uuid.UUID for one
    t.eq(await conn.fetchval("SELECT '01HTQW311N1KR5G0Y75M3EF00H'::ulid"), "01HTQW311N1KR5G0Y75M3EF00H",
         "unregistered: a ulid reads as its ULID text (str)")
    try:
        await conn.fetchval("SELECT $1::ulid", uuid.uuid4())
        refused = None
    except asyncpg.DataError as e:
        refused = str(e)
    t.ok(refused is not None and "expected str" in refused, "unregistered: a uuid.UUID parameter is refused", refused)

    await register_asyncpg(conn)

    # ids from the defaults, through RETURNING: one row, then many
    first = await conn.fetchrow("INSERT INTO orders (item) VALUES ($1) RETURNING id, ref", "tea")
    t.ok(type(first["id"]) is int and isinstance(first["ref"], uuid.UUID),
         "RETURNING id, ref: an int and a uuid.UUID", first)
    items = [f"item-{i}" for i in range(20)]
    rows = await conn.fetch("INSERT INTO orders (item) SELECT unnest($1::text[]) RETURNING id, ref, item", items)
    returned = [(first["id"], first["ref"], "tea")] + [tuple(r) for r in rows]
    ids = [r[0] for r in returned]
    refs = [r[1] for r in returned]
    t.ok(all(a < b for a, b in zip(ids, ids[1:])), "21 ids from cosid_next, increasing", ids)
    t.ok(all(a < b for a, b in zip(refs, refs[1:])), "21 refs from gen_ulid_monotonic, increasing", refs)
    t.ok(all(i > 2**53 for i in ids), "snowflake ids are above 2^53 and Python ints hold them", ids[:3])
    texts = await conn.fetch("SELECT id::text, ref::text, ref::uuid::text FROM orders ORDER BY id")
    t.eq([tuple(r) for r in texts], [(str(i), str(Ulid(int=r.int)), str(r)) for i, r, _ in returned],
         "every id is the server's exactly; every ref the uuid.UUID of ref::uuid, the ULID of ref::text")
    t.eq([tuple(r) for r in await conn.fetch("SELECT id, ref, item FROM orders ORDER BY id")], returned,
         "every row read back equals what RETURNING gave")

    # a uuid.UUID parameter for a ulid, in WHERE and in INSERT
    by_uuid = [await conn.fetchval("SELECT id FROM orders WHERE ref = $1", r) for r in refs]
    t.eq(by_uuid, ids, "WHERE ref = $1 with a uuid.UUID finds every row")
    given = uuid.uuid4()
    got = await conn.fetchrow("INSERT INTO orders (ref, item) VALUES ($1, 'given') RETURNING ref, ref::text", given)
    t.eq(tuple(got), (given, str(Ulid(int=given.int))), "INSERT a uuid.UUID into a ulid column: its 16 bytes")
    found = await conn.fetch("SELECT id FROM orders WHERE ref = ANY($1) ORDER BY id", refs[3:8])
    t.eq([r["id"] for r in found], ids[3:8], "WHERE ref = ANY($1) with a list of uuid.UUID")
    agg = await conn.fetchval("SELECT array_agg(ref ORDER BY id) FROM orders WHERE item <> 'given'")
    t.eq(agg, refs, "array_agg(ref): a ulid[] loads as a list of uuid.UUID")
    baskets = [(1, refs[:4]), (2, [refs[5], None, refs[6]]), (3, []), (4, None)]
    await conn.executemany("INSERT INTO baskets (n, refs) VALUES ($1, $2)", baskets)
    t.eq([tuple(r) for r in await conn.fetch("SELECT n, refs FROM baskets ORDER BY n")], baskets,
         "a ulid[] column: lists of uuid.UUID, NULL elements, empty and NULL arrays back as written")

    # binary COPY into a table with a ulid column: the ids from the default
    copied = [(new_ulid(), f"copy-{i}") for i in range(50)]
    await conn.copy_records_to_table("orders", records=copied, columns=["ref", "item"])
    got = await conn.fetch("SELECT id, ref, item FROM orders WHERE item LIKE 'copy-%' ORDER BY id")
    t.eq(sorted((r["ref"], r["item"]) for r in got), sorted(copied),
         "copy_records_to_table (binary COPY): every ulid and item read back")
    t.ok(len(got) == 50 and min(r["id"] for r in got) > max(ids), "... 50 ids from the default, above the earlier ones")
    mixed = [(10, [new_ulid(), uuid.uuid4()])]
    await conn.copy_records_to_table("baskets", records=mixed)
    t.eq(await conn.fetchval("SELECT refs FROM baskets WHERE n = 10"), mixed[0][1],
         "copy_records_to_table with a ulid[] column")

    # the ULID flavour: results as Ulid (str() is ULID text), parameters also as ULID text
    ulids = await asyncpg.connect(database=DB)
    await register_asyncpg(ulids, as_ulid=True)
    got = await ulids.fetch("SELECT ref FROM orders ORDER BY id LIMIT 21")
    t.ok(all(type(r["ref"]) is Ulid for r in got) and [r["ref"] for r in got] == refs,
         "as_ulid=True: every ref a Ulid, equal to the uuid.UUID read before", got[:2])
    by_text = [await ulids.fetchval("SELECT id FROM orders WHERE ref = $1", str(Ulid(int=r.int))) for r in refs]
    t.eq(by_text, ids, "as_ulid=True: WHERE ref = $1 with ULID text finds every row")
    by_uuid = [await ulids.fetchval("SELECT id FROM orders WHERE ref = $1", r) for r in refs]
    t.eq(by_uuid, ids, "as_ulid=True: ... and with a uuid.UUID")
    texts = [(str(r["ref"]), r["t"]) for r in await ulids.fetch("SELECT ref, ref::text t FROM orders ORDER BY id")]
    t.ok(all(a == b for a, b in texts), "as_ulid=True: str(Ulid) is the server's ULID text", texts[:2])
    copied = [(str(new_ulid()), "copy-text"), (new_ulid(), "copy-ulid"), (uuid.uuid4(), "copy-uuid")]
    await ulids.copy_records_to_table("orders", records=copied, columns=["ref", "item"])
    got = await ulids.fetch("SELECT ref::text, item FROM orders WHERE item IN ('copy-text', 'copy-ulid', 'copy-uuid')")
    t.eq(sorted(tuple(r) for r in got), sorted((str(Ulid(r) if isinstance(r, str) else Ulid(int=r.int)), i)
                                               for r, i in copied),
         "as_ulid=True: copy_records_to_table takes ULID text, Ulid and uuid.UUID")
    await ulids.close()

    # a uuid column filled by gen_uuidv7(): asyncpg's own uuid.UUID
    events = await conn.fetch("INSERT INTO events (order_id, what) SELECT unnest($1::bigint[]), 'made' "
                              "RETURNING id, order_id, uuidv7_time(id) AS at", ids)
    uids = [r["id"] for r in events]
    now = datetime.datetime.now(datetime.timezone.utc)
    t.ok(all(isinstance(u, uuid.UUID) and u.version == 7 and u.variant == uuid.RFC_4122 for u in uids),
         "gen_uuidv7(): each a uuid.UUID of version 7, RFC 9562 variant", uids[:2])
    t.ok(all(a < b for a, b in zip(uids, uids[1:])) and [r["order_id"] for r in events] == ids,
         "gen_uuidv7(): increasing in one statement, each order's id exact", uids)
    t.ok(all(abs((now - r["at"]).total_seconds()) < 60 and r["at"] == datetime.datetime.fromtimestamp(
        (r["id"].int >> 80) / 1000, datetime.timezone.utc) for r in events),
         "uuidv7_time(id) is the uuid's first 48 bits, in milliseconds, about now",
         [(r["id"], r["at"]) for r in events[:2]])
    t.eq(await conn.fetchval("SELECT order_id FROM events WHERE id = $1", uids[4]), ids[4],
         "WHERE id = $1 with a uuid.UUID (uuid column)")

    # encode, decode, unpack with parameters: $1 and $2 typed by the server
    ticket = ids[0]
    codec = [{"radix": 62}, {"prefix": "T"}]
    text = await conn.fetchval("SELECT cosid_encode($1, $2)", "ticket", ticket)
    t.eq(text, "T" + base62(ticket), "cosid_encode($1, $2): the ticket codec's text")
    t.eq(await conn.fetchval("SELECT cosid_decode($1, $2)", "ticket", text), ticket, "cosid_decode($1, $2): the id")
    t.eq(await conn.fetchval("SELECT cosid_encode_with($1, $2)", ticket, json.dumps(codec)), text,
         "cosid_encode_with($1, $2), the codec list as JSON text: the same text")
    t.eq(await conn.fetchval("SELECT cosid_decode_with($1, $2)", text, json.dumps(codec)), ticket,
         "cosid_decode_with($1, $2): the id")
    parts = await conn.fetchrow("SELECT * FROM cosid_unpack($1, $2)", "order", ticket)
    t.ok(parts["node"] == 0 and abs((now - parts["time"]).total_seconds()) < 60 and parts["seq"] >= 0,
         "cosid_unpack($1, $2): slot 0, made about now", parts)
    t.eq(tuple(await conn.fetchrow("SELECT * FROM cosid_unpack_text($1, $2)", "ticket", text)), tuple(parts),
         "cosid_unpack_text($1, $2) on the ticket text: the same parts")
    unpacked = await conn.fetch("SELECT node FROM unnest($1::bigint[]) id, cosid_unpack('order', id)", ids)
    t.eq([r["node"] for r in unpacked], [0] * len(ids), "every id decodes to this server's slot 0")
    await conn.close()

    # a pool registers each connection it opens
    pool = await asyncpg.create_pool(database=DB, min_size=2, max_size=2, init=register_asyncpg)
    async with pool.acquire() as c1, pool.acquire() as c2:
        got = [await c.fetchval("SELECT ref FROM orders WHERE id = $1", ids[2]) for c in (c1, c2)]
    await pool.close()
    t.ok(all(type(g) is not str and g == refs[2] for g in got), "create_pool(init=register_asyncpg): ulid as uuid.UUID",
         got)


Tap().run(lambda t: asyncio.run(main(t)))
