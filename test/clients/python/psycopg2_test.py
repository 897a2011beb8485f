#!/usr/bin/python3
"""psycopg2 against cosid (TAP): ids from column defaults through RETURNING,
a ulid typecaster and adapter, ulid[] arrays, COPY in text and binary.
Connects with the PG* environment variables, as a superuser, and makes its
own database, cosid_psycopg2."""
import io
import os
import secrets
import struct
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import psycopg2  # noqa: E402
import psycopg2.extras  # noqa: E402

from cosid_ulid import Ulid, register_psycopg2  # noqa: E402
from tap import Tap  # noqa: E402

DB = "cosid_psycopg2"
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
PGCOPY_HEADER = b"PGCOPY\n\xff\r\n\0" + struct.pack("!ii", 0, 0)


def new_ulid():
    return Ulid(int=(int(time.time() * 1000) << 80) | secrets.randbits(80))


def pgcopy_binary(rows):
    """COPY's binary format for rows of (Ulid, str): a ulid field is its 16 bytes."""
    out = [PGCOPY_HEADER]
    for ref, item in rows:
        data = item.encode()
        out.append(struct.pack("!hi", 2, 16) + ref.bytes + struct.pack("!i", len(data)) + data)
    out.append(struct.pack("!h", -1))
    return b"".join(out)


def parse_pgcopy_binary(raw):
    """Rows of (int, Ulid, str) from COPY (SELECT id, ref, item ...) TO STDOUT (FORMAT BINARY)."""
    assert raw.startswith(PGCOPY_HEADER), raw[:19]
    pos, rows = len(PGCOPY_HEADER), []
    while True:
        (nfields,) = struct.unpack_from("!h", raw, pos)
        pos += 2
        if nfields == -1:
            return rows
        fields = []
        for _ in range(nfields):
            (size,) = struct.unpack_from("!i", raw, pos)
            fields.append(raw[pos + 4:pos + 4 + size])
            pos += 4 + size
        rows.append((struct.unpack("!q", fields[0])[0], Ulid(bytes=fields[1]), fields[2].decode()))


def main(t):
    admin = psycopg2.connect(dbname="postgres")
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {DB}")
        cur.execute(f"CREATE DATABASE {DB}")
    admin.close()
    conn = psycopg2.connect(dbname=DB)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute(SCHEMA)

    def one(sql, *args):
        cur.execute(sql, args)
        return cur.fetchone()

    def rows(sql, *args):
        cur.execute(sql, args)
        return cur.fetchall()

    t.eq(one("SELECT '01HTQW311N1KR5G0Y75M3EF00H'::ulid, ARRAY['01HTQW311N1KR5G0Y75M3EF00H'::ulid]"),
         ("01HTQW311N1KR5G0Y75M3EF00H", "{01HTQW311N1KR5G0Y75M3EF00H}"), "unregistered, ulid and ulid[] read as str")
    oids = register_psycopg2(conn)
    t.eq(oids, one("SELECT 'ulid'::regtype::oid, 'ulid[]'::regtype::oid"), "register_psycopg2: ulid's oids")

    # ids from the defaults, through RETURNING
    first = one("INSERT INTO orders (item) VALUES (%s) RETURNING id, ref, item", "tea")
    t.ok(isinstance(first[0], int) and isinstance(first[1], Ulid), "RETURNING id, ref: an int and a Ulid", first)
    items = [(f"item-{i}",) for i in range(20)]
    returned = [first] + psycopg2.extras.execute_values(
        cur, "INSERT INTO orders (item) VALUES %s RETURNING id, ref, item", items, fetch=True)
    ids = [r[0] for r in returned]
    refs = [r[1] for r in returned]
    t.eq([r[2] for r in returned], ["tea"] + [i for (i,) in items], "execute_values ... RETURNING: a row per item")
    t.ok(all(a < b for a, b in zip(ids, ids[1:])) and all(i > 2**53 for i in ids),
         "21 ids from cosid_next, increasing, above 2^53", ids)
    t.ok(all(a < b for a, b in zip(refs, refs[1:])), "21 refs from gen_ulid_monotonic, increasing", refs)

    query = "SELECT id, ref, item FROM orders ORDER BY id"
    t.eq(rows(query), returned, "every row read back equals what RETURNING gave")
    t.eq([(str(r), str(uuid.UUID(int=r.int))) for r in refs], rows("SELECT ref::text, ref::uuid::text FROM orders ORDER BY id"),
         "str(Ulid) is the server's ULID text and its uuid the server's ref::uuid")

    # parameters: a Ulid (adapted as '...'::ulid), ULID text, a uuid.UUID
    t.eq([one("SELECT id FROM orders WHERE ref = %s", r)[0] for r in refs], ids, "WHERE ref = %s with a Ulid finds every row")
    t.eq(one("SELECT pg_typeof(%s)::text", refs[0]), ("ulid",), "a Ulid parameter is typed ulid")
    t.eq([one("SELECT id FROM orders WHERE ref = %s", str(r))[0] for r in refs], ids,
         "WHERE ref = %s with ULID text (a str) finds every row")
    psycopg2.extras.register_uuid(conn_or_curs=conn)
    t.eq_of(lambda: [one("SELECT id FROM orders WHERE ref = %s", uuid.UUID(int=r.int))[0] for r in refs], ids,
            "WHERE ref = %s with a uuid.UUID (register_uuid) finds every row")

    # arrays
    t.eq(one("SELECT array_agg(ref ORDER BY id) FROM orders")[0], refs, "array_agg(ref) loads as a list of Ulid")
    t.eq(one("SELECT array_agg(id ORDER BY id) FROM orders WHERE ref = ANY(%s)", refs[3:8])[0], ids[3:8],
         "WHERE ref = ANY(%s) with a list of Ulid")
    baskets = [(1, refs[:4]), (2, [refs[5], None, refs[6]]), (3, []), (4, None)]
    cur.executemany("INSERT INTO baskets (n, refs) VALUES (%s, %s::ulid[])", baskets)
    t.eq(rows("SELECT n, refs FROM baskets ORDER BY n"), baskets,
         "a ulid[] column: lists of Ulid, NULL elements, empty and NULL arrays back as written")

    # COPY in, text and binary; the ids come from the default
    text_rows = [(new_ulid(), f"copy-text-{i}") for i in range(50)]
    cur.copy_expert("COPY orders (ref, item) FROM STDIN", io.StringIO("".join(f"{r}\t{i}\n" for r, i in text_rows)))
    binary_rows = [(new_ulid(), f"copy-binary-{i}") for i in range(50)]
    cur.copy_expert("COPY orders (ref, item) FROM STDIN (FORMAT BINARY)", io.BytesIO(pgcopy_binary(binary_rows)))
    for name, written in (("text", text_rows), ("binary", binary_rows)):
        got = rows("SELECT ref, item FROM orders WHERE item LIKE %s", f"copy-{name}-%")
        t.eq(sorted(got, key=lambda r: r[1]), sorted(written, key=lambda r: r[1]),
             f"COPY FROM STDIN ({name}): every row read back")
    copied = [i for (i,) in rows("SELECT id FROM orders WHERE item LIKE %s ORDER BY id", "copy-%")]
    t.ok(len(copied) == 100 and min(copied) > max(ids), "COPY: 100 ids from the default, above the earlier ones")

    # COPY out, text and binary
    expected = rows(query)
    out = io.StringIO()
    cur.copy_expert(f"COPY ({query}) TO STDOUT", out)
    t.eq(out.getvalue(), "".join(f"{i}\t{r}\t{item}\n" for i, r, item in expected),
         "COPY TO STDOUT (text): every row, the ref as ULID text")
    out = io.BytesIO()
    cur.copy_expert(f"COPY ({query}) TO STDOUT (FORMAT BINARY)", out)
    t.eq(parse_pgcopy_binary(out.getvalue()), expected, "COPY TO STDOUT (binary): every row, the ref as 16 bytes")
    conn.close()


Tap().run(main)
