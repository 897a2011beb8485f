"""cosid's ulid type in Python: Ulid, a uuid.UUID that reads and prints ULID text,
and the adapters that make psycopg 3, psycopg2 and asyncpg load and dump it.

The 16 bytes of a ulid are those of a uuid (Ulid(...).bytes is what the server
sends in binary), so a Ulid compares equal to the uuid.UUID with the same bytes."""
import uuid

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


class Ulid(uuid.UUID):
    """Ulid("01HTQW311N1KR5G0Y75M3EF00H"), or any uuid.UUID argument (bytes=, int=)."""

    __slots__ = ()

    def __init__(self, text=None, **kwargs):
        if text is None or len(text) != 26:
            super().__init__(text, **kwargs)
            return
        n = 0
        for c in text.upper():
            d = CROCKFORD.find(c)
            if d < 0:
                raise ValueError(f"not a ULID: {text!r}")
            n = n * 32 + d
        if n >> 128:
            raise ValueError(f"not a ULID: {text!r} overflows 128 bits")
        super().__init__(int=n)

    def __str__(self):
        return "".join(CROCKFORD[(self.int >> shift) & 31] for shift in range(125, -1, -5))


def register_psycopg(conn):
    """psycopg 3: ulid and ulid[] load as Ulid; Ulid dumps as ulid, in text and binary."""
    from psycopg.adapt import Dumper, Loader
    from psycopg.pq import Format
    from psycopg.types import TypeInfo

    info = TypeInfo.fetch(conn, "ulid")

    class UlidLoader(Loader):
        def load(self, data):
            return Ulid(bytes(data).decode())

    class UlidBinaryLoader(Loader):
        format = Format.BINARY

        def load(self, data):
            return Ulid(bytes=bytes(data))

    class UlidDumper(Dumper):
        oid = info.oid

        def dump(self, obj):
            return str(obj).encode()

    class UlidBinaryDumper(UlidDumper):
        format = Format.BINARY

        def dump(self, obj):
            return obj.bytes

    info.register(conn)  # the type and its array, ulid[]
    conn.adapters.register_loader(info.oid, UlidLoader)
    conn.adapters.register_loader(info.oid, UlidBinaryLoader)
    conn.adapters.register_dumper(Ulid, UlidDumper)
    conn.adapters.register_dumper(Ulid, UlidBinaryDumper)
    return info


def register_psycopg2(conn):
    """psycopg2: ulid and ulid[] load as Ulid; a Ulid parameter is sent as '...'::ulid."""
    from psycopg2 import extensions

    with conn.cursor() as cur:
        cur.execute("SELECT 'ulid'::regtype::oid, 'ulid[]'::regtype::oid")
        oid, array_oid = cur.fetchone()
    ulid = extensions.new_type((oid,), "ULID", lambda text, cur: None if text is None else Ulid(text))
    extensions.register_type(ulid, conn)
    extensions.register_type(extensions.new_array_type((array_oid,), "ULID[]", ulid), conn)
    extensions.register_adapter(Ulid, lambda u: extensions.AsIs(f"'{u}'::ulid"))
    return oid, array_oid


async def register_asyncpg(conn, as_ulid=False):
    """asyncpg: ulid and ulid[] as uuid.UUID, in parameters, results and binary
    COPY, through asyncpg's own uuid codec (the 16 bytes are the same).  With
    as_ulid=True: results are Ulid, and a parameter is any uuid.UUID or ULID text.
    Per connection: asyncpg.create_pool(..., init=register_asyncpg)."""
    schema = await conn.fetchval("SELECT nspname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
                                 "WHERE t.oid = 'ulid'::regtype")
    if not as_ulid:
        await conn.set_builtin_type_codec("ulid", schema=schema, codec_name="uuid")
        return
    await conn.set_type_codec("ulid", schema=schema, format="binary",
                              encoder=lambda v: (v if isinstance(v, uuid.UUID) else Ulid(v)).bytes,
                              decoder=lambda data: Ulid(bytes=bytes(data)))
