#!/usr/bin/python3
"""SQLAlchemy and Alembic against cosid (TAP): the Alembic migration in
alembic/ (python3 -m alembic upgrade head), autogenerate against the model
reporting no change and issuing no id, the ORM taking ids from the server
defaults, the ULID column type, and downgrade.  Connects with the PG*
environment variables, as a superuser, and makes its own database,
cosid_sqlalchemy."""
import os
import subprocess
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sqlalchemy as sa  # noqa: E402
from alembic.autogenerate import compare_metadata  # noqa: E402
from alembic.migration import MigrationContext  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from cosid_sqlalchemy import ULID, compare_server_default, normalise_default  # noqa: E402
from cosid_ulid import Ulid  # noqa: E402
from models import Base, Invoice  # noqa: E402
from tap import Tap  # noqa: E402

DB = "cosid_sqlalchemy"
ALEMBIC = os.path.join(HERE, "alembic")


def alembic(*args):
    """python3 -m alembic with the project's alembic.ini; (exit code, output)."""
    p = subprocess.run([sys.executable, "-m", "alembic", "-c", os.path.join(ALEMBIC, "alembic.ini"), *args],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ALEMBIC)
    return p.returncode, p.stdout


def main(t):
    admin = sa.create_engine("postgresql+psycopg2:///postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(sa.text(f"DROP DATABASE IF EXISTS {DB}"))
        c.execute(sa.text(f"CREATE DATABASE {DB}"))
    admin.dispose()
    engine = sa.create_engine(f"postgresql+psycopg2:///{DB}")

    def issued():
        with engine.connect() as c:
            return c.execute(sa.text("SELECT issued FROM cosid.generator_stats WHERE name = 'invoice'")).scalar_one()

    def autogenerate(metadata, hook):
        with engine.connect() as c:
            mc = MigrationContext.configure(c, opts={"compare_type": True, "compare_server_default": hook})
            return compare_metadata(mc, metadata)

    rc, out = alembic("upgrade", "head")
    t.ok(rc == 0, "python3 -m alembic upgrade head", out)
    rc, out = alembic("current")
    t.ok(rc == 0 and "0001 (head)" in out, "alembic current: 0001 (head)", out)
    with engine.connect() as c:
        columns = c.execute(sa.text("SELECT column_name, udt_name, column_default FROM information_schema.columns "
                                    "WHERE table_name = 'invoices' ORDER BY ordinal_position")).all()
    t.eq([tuple(r) for r in columns], [("id", "int8", "cosid_next('invoice'::text)"),
                                       ("ref", "ulid", "gen_ulid_monotonic()"), ("item", "text", None)],
         "the migration made invoices: a cosid_next key and a ulid column")
    t.eq(sa.inspect(engine).get_columns("invoices")[1]["type"].__class__, ULID, "reflection gives the ULID type")

    # autogenerate compares the model with the database
    before = issued()
    files = sorted(os.listdir(os.path.join(ALEMBIC, "versions")))
    rc, out = alembic("-x", "check=1", "revision", "--autogenerate", "-m", "check")
    t.ok(rc == 0 and "No new upgrade operations detected." in out, "autogenerate (-x check=1): no change", out)
    t.eq(sorted(os.listdir(os.path.join(ALEMBIC, "versions"))), files, "... and no migration file written")
    t.eq(issued(), before, "... and no id issued (cosid.generator_stats)")
    t.eq(autogenerate(Base.metadata, compare_server_default), [],
         "compare_metadata with the text comparison: no change")
    t.eq(issued(), before, "... and no id issued")
    diffs = autogenerate(Base.metadata, True)
    changed = sorted(d[0][3] for d in diffs if d[0][0] == "modify_default")
    t.eq(changed, ["id"], "Alembic's own comparison (compare_server_default=True) reports the cosid_next default changed")
    t.eq(issued(), before + 2, "... and issues ids: cosid_next('invoice'::text) = cosid_next('invoice')")
    other = sa.MetaData()
    sa.Table("invoices", other,
             sa.Column("id", sa.BigInteger, primary_key=True, server_default=sa.text("cosid_next('invoice_v2')")),
             sa.Column("ref", ULID, nullable=False, unique=True, server_default=sa.text("gen_ulid_monotonic()")),
             sa.Column("item", sa.Text, nullable=False))
    diffs = autogenerate(other, compare_server_default)
    t.eq([(d[0][0], d[0][3], str(d[0][5].arg), str(d[0][6].arg)) for d in diffs],
         [("modify_default", "id", "cosid_next('invoice'::text)", "cosid_next('invoice_v2')")],
         "the text comparison reports a default that did change, and only that")
    t.eq(issued(), before + 2, "... without issuing an id")

    same = [("cosid_next('invoice'::text)", "cosid_next('invoice')"),
            ("cosid_next_text('a b'::text)", "COSID_NEXT_TEXT( 'a b' )"),
            ("(cosid_next('x'::text) + 1)", "cosid_next('x') + 1"),
            ("'x'::character varying", "'x'")]
    differ = [("cosid_next('invoice'::text)", "cosid_next('Invoice')"),
              ("cosid_next_text('a b'::text)", "cosid_next_text('ab')"),
              ("gen_ulid()", "gen_ulid_monotonic()")]
    t.ok(all(normalise_default(a) == normalise_default(b) for a, b in same)
         and all(normalise_default(a) != normalise_default(b) for a, b in differ),
         "the text comparison ignores casts of literals, case, spaces and outer parentheses; not the literals",
         [(a, normalise_default(a), b, normalise_default(b)) for a, b in same + differ])

    # the ORM: ids and refs from the server defaults, through RETURNING
    with Session(engine) as session:
        invoices = [Invoice(item=f"item-{i}") for i in range(10)]
        session.add_all(invoices)
        session.flush()
        got = [(i.id, i.ref, i.item) for i in invoices]
        session.commit()
    t.ok(all(isinstance(i, int) and isinstance(r, Ulid) for i, r, _ in got), "flush: each id an int, each ref a Ulid", got)
    t.ok(len({i for i, _, _ in got}) == 10 and all(a[1] < b[1] for a, b in zip(got, got[1:])),
         "10 distinct ids, refs increasing", got)
    with engine.connect() as c:
        server = c.execute(sa.text("SELECT id, ref::text, item FROM invoices ORDER BY id")).all()
    t.eq([tuple(r) for r in server], sorted((i, str(r), item) for i, r, item in got),
         "every row on the server is what the ORM got back")
    t.eq(issued(), before + 2 + 10, "cosid.generator_stats counts the 10 ids")

    # the ULID type: a uuid.UUID, a Ulid or ULID text as a value and in WHERE
    plain = uuid.uuid4()
    with Session(engine) as session:
        session.add(Invoice(ref=plain, item="given a uuid.UUID"))
        session.commit()
    with Session(engine) as session:
        row = session.execute(sa.select(Invoice).where(Invoice.ref == plain)).scalar_one()
        t.ok(row.item == "given a uuid.UUID" and row.ref == plain and isinstance(row.ref, Ulid),
             "a uuid.UUID stored in a ulid column, found by uuid.UUID, reads back as the equal Ulid", row.ref)
        refs = [r for _, r, _ in got]
        by_text = [session.execute(sa.select(Invoice.id).where(Invoice.ref == str(r))).scalar_one() for r in refs]
        t.eq(by_text, [i for i, _, _ in got], "WHERE ref = ULID text finds every row")
        found = session.execute(sa.select(Invoice.id).where(Invoice.ref.in_(refs)).order_by(Invoice.id)).scalars().all()
        t.eq(found, sorted(i for i, _, _ in got), "WHERE ref IN (Ulid, ...) finds every row")
        with engine.connect() as c:
            text = c.execute(sa.text("SELECT ref::text FROM invoices WHERE item = 'given a uuid.UUID'")).scalar_one()
        t.eq(text, str(Ulid(int=plain.int)), "the server holds that uuid's 16 bytes")

    rc, out = alembic("downgrade", "base")
    with engine.connect() as c:
        left = c.execute(sa.text("SELECT to_regclass('invoices') IS NULL, "
                                 "NOT EXISTS (SELECT FROM cosid.generators WHERE name = 'invoice')")).one()
    t.ok(rc == 0 and tuple(left) == (True, True), "alembic downgrade base drops the table and the generator", out)
    engine.dispose()


Tap().run(main)
