"""inspectdb that knows cosid's columns (cosid_django in INSTALLED_APPS): a bigint
primary key with DEFAULT cosid_next(...) becomes a CosidIdField, a ulid column a
UlidField, a uuid column with a DEFAULT a DefaultUUIDField, with that default;
Django's own writes BigIntegerField, TextField and UUIDField, which insert NULL."""
import re

from django.core.management.commands import inspectdb

COSID_NEXT = re.compile(r"^cosid_next\('((?:[^']|'')*)'(?:::text)?\)$")


class Command(inspectdb.Command):
    def handle_inspection(self, options):
        for line in super().handle_inspection(options):
            yield line
            if line == "from django.db import models":
                yield "import cosid_django"

    def get_field_type(self, connection, table_name, row):
        field_type, params, notes = super().get_field_type(connection, table_name, row)
        with connection.cursor() as cursor:
            cursor.execute("SELECT to_regtype('ulid')::oid")
            ulid_oid = cursor.fetchone()[0]
            pk = connection.introspection.get_primary_key_column(cursor, table_name)
        cosid_next = COSID_NEXT.match(row.default or "")
        if field_type == "BigIntegerField" and cosid_next and row.name == pk:
            return "cosid_django.CosidIdField", {**params, "generator": cosid_next[1].replace("''", "'")}, notes
        if row.type_code == ulid_oid:
            field_type, notes = "cosid_django.UlidField", [n for n in notes if n != "This field type is a guess."]
        elif field_type == "UUIDField" and row.default:
            field_type = "cosid_django.DefaultUUIDField"
        else:
            return field_type, params, notes
        return field_type, {**params, **({"db_default": row.default} if row.default else {})}, notes
