#!/usr/bin/python3
"""psycopg 3 against cosid (TAP): ids from column defaults through RETURNING,
ulid loaders and dumpers in text and binary, ulid[] arrays, COPY in text and
binary.  Connects with the PG* environment variables, as a superuser, and
makes its own database, cosid_psycopg."""
import os
import secrets
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import psycopg  # noqa: E402
from psycopg.types.uuid import UUIDBinaryLoader  # noqa: E402

from cosid_ulid import Ulid, register_psycopg  # noqa: E402
from tap import Tap  # noqa: E402

DB = "cosid_psycopg"
SCHEMA = """
CREATE EXTENSION cosid;
SELECT cosid_define('order', '{"strategy": "snowflake"}');
CREATE TABLE orders (
    id   bigint PRIMARY KEY DEFAULT cosid_next('order'),
    ref  ulid NOT NULL UNIQUE DEFAULT gen_ulid_monotonic(),
    item text NOT NULL
);
CREATE TABLE baskets (n int PRIMARY KEY, refs ulid[]);
"""


def new_ulid():
    """A ULID made here: this millisecond and 80 random bits."""
    return Ulid(int=(int(time.time() * 1000) << 80) | secrets.randbits(80))


def main(t):
    with psycopg.connect(dbname="postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB}")
        admin.execute(f"CREATE DATABASE {DB}")
    conn = psycopg.connect(dbname=DB, autocommit=True)
    conn.execute(SCHEMA)

    t.eq(conn.execute("SELECT '01HTQW311N1KR5G0Y75M3EF00H'::ulid, ARRAY['01HTQW311N1KR5G0Y75M3EF00H'::ulid]").fetchone(),
         ("01HTQW311N1KR5G0Y75M3EF00H", "{01HTQW311N1KR5G0Y75M3EF00H}"), "unregistered, ulid and ulid[] read as str")
    info = register_psycopg(conn)
    t.eq(info.oid, conn.execute("SELECT 'ulid'::regtype::oid").fetchone()[0], "register_psycopg: the ulid type's oid")

    # ids from the defaults, through RETURNING: one row, then many
    cur = conn.cursor()
    first = cur.execute("INSERT INTO orders (item) VALUES (%s) RETURNING id, ref", ("tea",)).fetchone()
    t.ok(isinstance(first[0], int) and isinstance(first[1], Ulid), "RETURNING id, ref: an int and a Ulid", first)
    items = [f"item-{i}" for i in range(20)]
    cur.executemany("INSERT INTO orders (item) VALUES (%s) RETURNING id, ref", [(i,) for i in items], returning=True)
    returned = [first + ("tea",)]
    for item in items:
        returned.append(cur.fetchone() + (item,))
        cur.nextset()
    ids = [r[0] for r in returned]
    refs = [r[1] for r in returned]
    t.ok(all(a < b for a, b in zip(ids, ids[1:])), "21 ids from cosid_next, increasing", ids)
    t.ok(all(a < b for a, b in zip(refs, refs[1:])), "21 refs from gen_ulid_monotonic, increasing", refs)
    t.ok(all(i > 2**53 for i in ids), "snowflake ids are above 2^53 and Python ints hold them", ids[:3])
    unpacked = conn.execute("SELECT node FROM unnest(%s::bigint[]) id, cosid_unpack('order', id)", (ids,)).fetchall()
    t.eq(unpacked, [(0,)] * len(ids), "every id decodes to this server's slot 0")

    # every row read back, in text and in binary
    query = "SELECT id, ref, item FROM orders ORDER BY id"
    t.eq(conn.execute(query).fetchall(), returned, "every row read back (text) equals what RETURNING gave")
    t.eq(conn.cursor(binary=True).execute(query).fetchall(), returned,
         "every row read back (binary) equals what RETURNING gave")
    texts = conn.execute("SELECT ref::text, ref::uuid::text FROM orders ORDER BY id").fetchall()
    t.eq([(str(r), str(uuid.UUID(int=r.int))) for r in refs], texts,
         "str(Ulid) is the server's ULID text and its uuid the server's ref::uuid")

    # a ulid read as a plain uuid.UUID: psycopg's own binary uuid loader
    plain = psycopg.connect(dbname=DB, autocommit=True)
    plain.adapters.register_loader(info.oid, UUIDBinaryLoader)
    rows = plain.cursor(binary=True).execute("SELECT ref, ref::uuid FROM orders ORDER BY id").fetchall()
    t.ok(all(type(a) is uuid.UUID and a == b for a, b in rows) and [a for a, _ in rows] == refs,
         "UUIDBinaryLoader registered for ulid: every ref as the uuid.UUID of ref::uuid", rows[:2])
    plain.close()

    # dumpers: a Ulid parameter is a ulid, in text (%t) and binary (%b)
    by_text = [conn.execute("SELECT id FROM orders WHERE ref = %t", (r,)).fetchone()[0] for r in refs]
    by_binary = [conn.execute("SELECT id FROM orders WHERE ref = %b", (r,)).fetchone()[0] for r in refs]
    t.eq(by_text, ids, "WHERE ref = %t with a Ulid finds every row")
    t.eq(by_binary, ids, "WHERE ref = %b with a Ulid finds every row")
    t.eq(conn.execute("SELECT pg_typeof(%t)::text, pg_typeof(%b)::text", (refs[0], refs[0])).fetchone(),
         ("ulid", "ulid"), "a Ulid parameter is typed ulid")
    by_str = [conn.execute("SELECT id FROM orders WHERE ref = %s", (str(r),)).fetchone()[0] for r in refs]
    t.eq(by_str, ids, "WHERE ref = %s with ULID text (a str) finds every row")
    t.eq_of(lambda: [conn.execute("SELECT id FROM orders WHERE ref = %s", (uuid.UUID(int=r.int),)).fetchone()[0]
                     for r in refs], ids, "WHERE ref = %s with a uuid.UUID finds every row")

    # arrays
    t.eq(conn.execute("SELECT array_agg(ref ORDER BY id) FROM orders").fetchone()[0], refs,
         "array_agg(ref) loads as a list of Ulid (text)")
    t.eq(conn.cursor(binary=True).execute("SELECT array_agg(ref ORDER BY id) FROM orders").fetchone()[0], refs,
         "array_agg(ref) loads as a list of Ulid (binary)")
    t.eq(conn.execute("SELECT pg_typeof(%t)::text, pg_typeof(%b)::text", (refs, refs)).fetchone(),
         ("ulid[]", "ulid[]"), "a list of Ulid is a ulid[] parameter")
    t.eq(conn.execute("SELECT array_agg(id ORDER BY id) FROM orders WHERE ref = ANY(%t)", (refs[3:8],)).fetchone()[0],
         ids[3:8], "WHERE ref = ANY(%t) with a list of Ulid (text)")
    t.eq(conn.execute("SELECT array_agg(id ORDER BY id) FROM orders WHERE ref = ANY(%b)", (refs[3:8],)).fetchone()[0],
         ids[3:8], "WHERE ref = ANY(%b) with a list of Ulid (binary)")
    baskets = [(1, refs[:4]), (2, [refs[5], None, refs[6]]), (3, []), (4, None)]
    cur.executemany("INSERT INTO baskets (n, refs) VALUES (%s, %t)", baskets[:2])
    cur.executemany("INSERT INTO baskets (n, refs) VALUES (%s, %b)", baskets[2:])
    t.eq(conn.execute("SELECT n, refs FROM baskets ORDER BY n").fetchall(), baskets,
         "a ulid[] column: lists of Ulid, NULL elements, empty and NULL arrays back as written")
    t.eq(conn.execute("SELECT refs::text FROM baskets WHERE n = 1").fetchone()[0],
         "{" + ",".join(str(r) for r in refs[:4]) + "}", "the server holds the same ulid[]")

    # COPY in, text and binary; the ids come from the default
    text_rows = [(new_ulid(), f"copy-text-{i}") for i in range(50)]
    with cur.copy("COPY orders (ref, item) FROM STDIN") as copy:
        for row in text_rows:
            copy.write_row(row)
    binary_rows = [(new_ulid(), f"copy-binary-{i}") for i in range(50)]
    with cur.copy("COPY orders (ref, item) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(["ulid", "text"])
        for row in binary_rows:
            copy.write_row(row)
    for name, rows in (("text", text_rows), ("binary", binary_rows)):
        got = conn.execute("SELECT ref, item FROM orders WHERE item LIKE %s ORDER BY id", (f"copy-{name}-%",)).fetchall()
        t.eq(sorted(got, key=lambda r: r[1]), sorted(rows, key=lambda r: r[1]),
             f"COPY FROM STDIN ({name}): every row read back")
    all_ids = [r[0] for r in conn.execute("SELECT id FROM orders WHERE item LIKE 'copy-%' ORDER BY id")]
    t.ok(len(all_ids) == 100 and min(all_ids) > max(ids), "COPY: 100 ids from the default, above the earlier ones")

    # COPY out, text and binary: every row equals a plain SELECT
    expected = conn.execute(query).fetchall()
    with cur.copy(f"COPY ({query}) TO STDOUT") as copy:
        copy.set_types(["int8", "ulid", "text"])
        got = list(copy.rows())
    t.eq(got, expected, "COPY TO STDOUT (text): every row, with ref as a Ulid")
    with cur.copy(f"COPY ({query}) TO STDOUT (FORMAT BINARY)") as copy:
        copy.set_types(["int8", "ulid", "text"])
        got = list(copy.rows())
    t.eq(got, expected, "COPY TO STDOUT (binary): every row, with ref as a Ulid")
    with cur.copy("COPY (SELECT ref FROM orders ORDER BY id LIMIT 1) TO STDOUT (FORMAT BINARY)") as copy:
        raw = b"".join(copy)
    # header 19 bytes, then per row a 2-byte field count and per field a 4-byte length
    t.ok(raw[21:25] == (16).to_bytes(4, "big") and raw[25:41] == expected[0][1].bytes,
         "binary COPY sends a ulid as its 16 bytes, Ulid.bytes", raw)
    conn.close()


Tap().run(main)
