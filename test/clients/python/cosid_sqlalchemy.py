"""SQLAlchemy and Alembic with cosid: a ulid column type, and a server-default
comparison for autogenerate that compares the expressions as text.

Alembic's own comparison on PostgreSQL runs SELECT <database default> =
<model default>: with cosid_next() or gen_ulid_monotonic() that issues ids
and is never true, so every autogenerate reports the default as changed."""
import re
import uuid

from sqlalchemy.dialects.postgresql.base import ischema_names
from sqlalchemy.types import UserDefinedType

from cosid_ulid import Ulid


class ULID(UserDefinedType):
    """A ulid column: values load as Ulid (a uuid.UUID); binds take a uuid.UUID or ULID text."""

    cache_ok = True

    def get_col_spec(self, **kw):
        return "ulid"

    def bind_processor(self, dialect):
        def process(value):
            if value is None or isinstance(value, Ulid):
                return None if value is None else str(value)
            return str(Ulid(value) if isinstance(value, str) else Ulid(int=value.int))

        return process

    def result_processor(self, dialect, coltype):
        def process(value):
            if value is None or isinstance(value, Ulid):
                return value
            return Ulid(int=value.int) if isinstance(value, uuid.UUID) else Ulid(value)

        return process


ischema_names["ulid"] = ULID  # reflection (and so Alembic) knows the type


_LITERAL = r"('(?:[^']|'')*')"
_CAST = re.compile(r"::\s*(character varying|double precision|(timestamp|time) with(out)? time zone"
                   r"|[a-z_][a-z0-9_.]*)(\[\])?")
_CALL = re.compile(r"[A-Za-z_][\w.]*\s*\(")


def normalise_default(expr):
    """A default expression, roughly as PostgreSQL prints it back: outside
    string literals lower case, casts dropped (cosid_next('order'::text) is
    cosid_next('order')) and no white space; outer parentheses dropped."""
    text = "".join(part if part.startswith("'") else re.sub(r"\s+", "", _CAST.sub("", part.lower()))
                   for part in re.split(_LITERAL, expr))
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1]
    return text


def _balanced(text):
    depth = 0
    for part in re.split(_LITERAL, text):
        if part.startswith("'"):
            continue
        for c in part:
            depth += {"(": 1, ")": -1}.get(c, 0)
            if depth < 0:
                return False
    return depth == 0


def compare_server_default(context, inspected_column, metadata_column,
                           inspected_default, metadata_default, rendered_metadata_default):
    """Alembic's compare_server_default hook: a default that calls a function
    (cosid_next, gen_ulid_monotonic, ...) is compared as text, never run;
    anything else is left to Alembic (None)."""
    if inspected_default is None or rendered_metadata_default is None:
        return None
    if not (_CALL.search(inspected_default) or _CALL.search(rendered_metadata_default)):
        return None
    return normalise_default(inspected_default) != normalise_default(rendered_metadata_default)
