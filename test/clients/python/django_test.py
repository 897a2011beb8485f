#!/usr/bin/python3
"""Django 3.2 against cosid (TAP): the project in django_app/ (settings, the shop
app and its migrations) with the fields of cosid_django/: makemigrations finds
the migrations up to date, migrate makes the tables (ids, ulid and uuid filled
by column DEFAULTs), create(), save(), bulk_create() and refresh_from_db() get
those values, ulid lookups, encode/decode/unpack through connection.cursor()
with %s, inspectdb (Django's, whose models insert NULL ids, and cosid_django's),
and migrate back to zero.  Connects with the PG* environment variables, as a
superuser, and makes its own database, cosid_django."""
import datetime
import io
import json
import os
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "django_app"))
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
import django  # noqa: E402
import psycopg2  # noqa: E402

from cosid_ulid import Ulid  # noqa: E402
from tap import Tap  # noqa: E402

DB = "cosid_django"
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def base62(n):
    out = ""
    while True:
        n, d = divmod(n, 62)
        out = BASE62[d] + out
        if n == 0:
            return out


def command(*args, **kwargs):
    """call_command(*args) with its output as text; (SystemExit code or 0, output)."""
    from django.core.management import call_command

    out = io.StringIO()
    try:
        call_command(*args, stdout=out, stderr=out, **kwargs)
        return 0, out.getvalue()
    except SystemExit as e:
        return e.code, out.getvalue()


def sql(query, params=()):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(query, params)
        return cursor.fetchall()


def load(code, app_label):
    """The models of inspectdb's output, registered under app_label."""
    code = code.replace("        managed = False", f"        managed = False\n        app_label = '{app_label}'")
    namespace = {"__name__": app_label}
    exec(compile(code, f"<inspectdb {app_label}>", "exec"), namespace)
    return namespace


def main(t):
    admin = psycopg2.connect(dbname="postgres")
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {DB}")
        cur.execute(f"CREATE DATABASE {DB}")
    admin.close()
    django.setup()
    from django.core.management.commands import inspectdb
    from django.db import IntegrityError, connection, transaction

    from shop.models import Line, Order

    rc, out = command("makemigrations", "shop", "--check", "--dry-run")
    t.ok(rc == 0 and "No changes detected" in out, "makemigrations --check: the migrations match the models", out)
    rc, out = command("migrate", "shop")
    t.ok(rc == 0 and "Applying shop.0002_tables... OK" in out, "migrate shop: 0001_cosid, 0002_tables", out)
    columns = sql("SELECT table_name, column_name, udt_name, column_default FROM information_schema.columns "
                  "WHERE table_name LIKE 'shop%%' ORDER BY table_name, ordinal_position")
    t.eq(columns, [("shop_line", "id", "int8", "cosid_next('line'::text)"), ("shop_line", "qty", "int4", None),
                   ("shop_line", "order_id", "int8", None),
                   ("shop_order", "id", "int8", "cosid_next('order'::text)"),
                   ("shop_order", "ref", "ulid", "gen_ulid_monotonic()"),
                   ("shop_order", "uid", "uuid", "gen_uuidv7()"), ("shop_order", "item", "text", None)],
         "the tables: bigint keys from cosid_next, a ulid and a uuid from their defaults, a bigint foreign key")

    def on_server(order):
        got = sql("SELECT id, ref::text, uid FROM shop_order WHERE id = %s", (order.id,))
        return got == [(order.id, str(order.ref), order.uid)]

    # create(): the INSERT leaves the columns to their defaults; RETURNING gives them
    order = Order.objects.create(item="tea")
    t.ok(type(order.id) is int and order.id > 2**53 and type(order.ref) is Ulid
         and isinstance(order.uid, uuid.UUID) and order.uid.version == 7,
         "create(): id an int above 2^53, ref a Ulid, uid a version 7 uuid.UUID",
         (order.id, order.ref, order.uid))
    t.ok(on_server(order), "... each the server's value exactly")
    before = (order.id, order.ref, order.uid, order.item)
    order.refresh_from_db()
    t.ok((order.id, order.ref, order.uid, order.item) == before and type(order.ref) is Ulid,
         "refresh_from_db(): the same values, ref still a Ulid", (before, order.ref))
    order.item = "green tea"
    order.save()
    t.eq(sql("SELECT count(*), min(item) FROM shop_order"), [(1, "green tea")],
         "save() of a created order updates its row")
    unsaved = Order(item="saved")
    unsaved.save()
    t.ok(unsaved.id > order.id and unsaved.ref > order.ref and on_server(unsaved), "save() of a new Order inserts",
         (unsaved.id, unsaved.ref))

    # bulk_create: PostgreSQL returns every row's defaults
    orders = Order.objects.bulk_create([Order(item=f"item-{i}") for i in range(20)])
    ids = [o.id for o in orders]
    refs = [o.ref for o in orders]
    t.ok(all(type(o.id) is int and type(o.ref) is Ulid and isinstance(o.uid, uuid.UUID) for o in orders),
         "bulk_create(): each object gets its id, ref (Ulid) and uid", [(o.id, o.ref) for o in orders[:2]])
    t.ok(all(a < b for a, b in zip(ids, ids[1:])) and all(a < b for a, b in zip(refs, refs[1:]))
         and ids[0] > unsaved.id, "bulk_create(): ids and refs increasing, after the earlier ones", ids)
    t.ok(all(on_server(o) for o in orders), "bulk_create(): each the server's row")
    given = uuid.uuid4()
    mixed = Order.objects.bulk_create([Order(item="given uuid", ref=given), Order(item="given text",
                                                                                  ref="01HTQW311N1KR5G0Y75M3EF00H"),
                                       Order(item="no ref")])
    t.ok([o.ref for o in mixed[:2]] == [given, Ulid("01HTQW311N1KR5G0Y75M3EF00H")]
         and all(type(o.ref) is Ulid and on_server(o) for o in mixed) and mixed[2].ref > refs[-1],
         "bulk_create(): a ref given as uuid.UUID or ULID text is stored; one not given comes from the default",
         [o.ref for o in mixed])

    # lookups by ulid: a Ulid, ULID text, a uuid.UUID; __in; across the foreign key
    t.eq([Order.objects.get(ref=r).id for r in refs], ids, "get(ref=Ulid) finds every row")
    t.eq([Order.objects.get(ref=str(r)).id for r in refs], ids, "get(ref=ULID text) finds every row")
    t.eq([Order.objects.get(ref=uuid.UUID(int=r.int)).id for r in refs], ids, "get(ref=uuid.UUID) finds every row")
    t.eq(list(Order.objects.filter(ref__in=refs[3:8]).order_by("id").values_list("id", flat=True)), ids[3:8],
         "filter(ref__in=[...]) finds its rows")
    t.eq(list(Order.objects.filter(ref__gt=refs[16], ref__lte=refs[19]).order_by("ref").values_list("id", flat=True)),
         ids[17:20], "filter(ref__gt=..., ref__lte=...) orders as the server does")
    t.eq(Order.objects.get(ref=given).item, "given uuid", "a uuid.UUID stored in a ulid column is found by it")
    t.eq(list(Order.objects.filter(ref=refs[0]).values_list("ref", flat=True)), [refs[0]], "values_list('ref'): Ulid")
    lines = Line.objects.bulk_create([Line(order=o, qty=n) for n, o in enumerate(orders[:5], 1)])
    t.ok(all(type(line.id) is int and line.id > 2**53 for line in lines), "bulk_create() of lines: their ids",
         [line.id for line in lines])
    t.eq(list(Line.objects.filter(order__ref=refs[2]).values_list("id", "qty")), [(lines[2].id, 3)],
         "filter(order__ref=...) across the foreign key")
    t.eq([(line.order.ref, line.qty) for line in Line.objects.select_related("order").order_by("id")],
         [(r, n) for n, r in enumerate(refs[:5], 1)], "select_related('order'): each line's order's ref")

    # encode, decode, unpack through connection.cursor() with %s parameters
    codec = json.dumps([{"radix": 62}, {"prefix": "O"}])
    with connection.cursor() as cursor:
        cursor.execute("SELECT cosid_encode(%s, %s)", ("order", ids[0]))
        text = cursor.fetchone()[0]
        cursor.execute("SELECT cosid_decode(%s, %s)", ("order", text))
        decoded = cursor.fetchone()[0]
        cursor.execute("SELECT cosid_encode_with(%s, %s), cosid_decode_with(%s, %s)", (ids[0], codec, text, codec))
        with_codec = cursor.fetchone()
        cursor.execute("SELECT * FROM cosid_unpack(%s, %s)", ("order", ids[0]))
        parts = cursor.fetchone()
        cursor.execute("SELECT * FROM cosid_unpack_text(%s, %s)", ("order", text))
        parts_text = cursor.fetchone()
        cursor.execute("SELECT * FROM cosid_unpack(%s, %s)", ("order", str(ids[0])))
        parts_str = cursor.fetchone()
        cursor.execute("SELECT ref FROM shop_order WHERE ref = %s", (refs[0],))
        raw = cursor.fetchone()
    t.eq(text, "O" + base62(ids[0]), "cosid_encode(%s, %s): the order codec's text")
    t.eq(decoded, ids[0], "cosid_decode(%s, %s): the id")
    t.eq(with_codec, (text, ids[0]), "cosid_encode_with(%s, %s), cosid_decode_with(%s, %s): the same")
    now = datetime.datetime.now(datetime.timezone.utc)
    t.ok(abs((now - parts[0]).total_seconds()) < 60 and parts[1] == 0,
         "cosid_unpack(%s, %s): made about now, in slot 0", parts)
    t.eq(parts_text, parts, "cosid_unpack_text(%s, %s): the same")
    t.eq(parts_str, parts, "cosid_unpack(%s, %s) with the id as a str: the same")
    t.eq(raw, (str(refs[0]),), "a raw cursor: a Ulid parameter finds its row; a ulid reads as its ULID text")

    # inspectdb: Django's writes fields that insert NULL; cosid_django's writes the fields above
    rc, plain = command(inspectdb.Command(), "shop_order", "shop_line")
    t.ok(rc == 0 and "id = models.BigIntegerField(primary_key=True)" in plain
         and "ref = models.TextField(unique=True)  # This field type is a guess." in plain
         and "uid = models.UUIDField(unique=True)" in plain,
         "Django's inspectdb: a BigIntegerField key, ref a TextField, uid a UUIDField", plain)
    models = load(plain, "plain")
    try:
        with transaction.atomic():
            models["ShopOrder"].objects.create(item="plain", ref=str(refs[0]))
        failed = None
    except IntegrityError as e:
        failed = str(e)
    t.ok(failed is not None and 'null value in column "id"' in failed, "... and its model inserts a NULL id", failed)
    rc, inspected = command("inspectdb", "shop_order", "shop_line")
    t.ok(rc == 0 and "import cosid_django\n" in inspected
         and "    id = cosid_django.CosidIdField(primary_key=True, generator='order')\n" in inspected
         and "    ref = cosid_django.UlidField(unique=True, db_default='gen_ulid_monotonic()')\n" in inspected
         and "    uid = cosid_django.DefaultUUIDField(unique=True, db_default='gen_uuidv7()')\n" in inspected
         and "    id = cosid_django.CosidIdField(primary_key=True, generator='line')\n" in inspected,
         "inspectdb with cosid_django: CosidIdField, UlidField, DefaultUUIDField", inspected)
    models = load(inspected, "inspected")
    made = models["ShopOrder"].objects.create(item="inspected")
    t.ok(type(made.id) is int and type(made.ref) is Ulid and made.uid.version == 7 and on_server(made),
         "... and its model inserts, getting the defaults", (made.id, made.ref, made.uid))
    many = models["ShopOrder"].objects.bulk_create([models["ShopOrder"](item=f"inspected-{i}") for i in range(3)])
    line = models["ShopLine"].objects.create(order=made, qty=7)
    line.refresh_from_db()
    t.ok(all(o.id > made.id and o.ref > made.ref and on_server(o) for o in many) and line.id > 2**53
         and line.order_id == made.id and models["ShopOrder"].objects.get(ref=str(made.ref)).uid == made.uid,
         "... bulk_create, a foreign key and lookups by ulid too", [(o.id, o.ref) for o in many])

    rc, out = command("migrate", "shop", "zero")
    left = sql("SELECT to_regclass('shop_order') IS NULL, to_regclass('shop_line') IS NULL, "
               "NOT EXISTS (SELECT FROM cosid.generators WHERE name IN ('order', 'line'))")
    t.ok(rc == 0 and left == [(True, True, True)], "migrate shop zero drops the tables and the generators", out)
    connection.close()


Tap().run(main)
