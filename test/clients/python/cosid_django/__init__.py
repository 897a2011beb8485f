"""cosid in Django 3.2: model fields whose values the database fills in from
its column DEFAULT, returned by INSERT ... RETURNING (also by bulk_create), and
a ulid field that maps to Ulid (a uuid.UUID that prints ULID text).

Django 3.2 has no db_default: these fields put the DEFAULT in the column type
they declare, so migrations create the column with it, and they insert the
keyword DEFAULT when the value is None.  With "cosid_django" in INSTALLED_APPS,
inspectdb writes these fields for cosid's columns."""
import uuid

from django.db import models
from django.db.models.query_utils import DeferredAttribute
from psycopg2.extensions import AsIs, register_adapter

from cosid_ulid import Ulid

# Django has psycopg2 send a uuid.UUID as '...'::uuid, and so a Ulid, with its ULID text: make that '...'::ulid
register_adapter(Ulid, lambda u: AsIs(f"'{u}'::ulid"))


class DatabaseDefault(models.Expression):
    """The keyword DEFAULT in an INSERT's VALUES: the column's default fills it."""

    def as_sql(self, compiler, connection):
        return "DEFAULT", []


class DbDefaultMixin:
    """A column with an SQL DEFAULT (db_default): None on INSERT means the
    default, and INSERT ... RETURNING gives the value to the instance."""

    def __init__(self, *args, db_default=None, **kwargs):
        self.db_default = db_default
        super().__init__(*args, **kwargs)

    @property
    def db_returning(self):
        return self.db_default is not None

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        if self.db_default is not None:
            kwargs["db_default"] = self.db_default
        return name, path, args, kwargs

    def db_type(self, connection):  # what CREATE TABLE and ADD COLUMN write
        plain = self.rel_db_type(connection)
        return plain if self.db_default is None else f"{plain} DEFAULT {self.db_default}"

    def rel_db_type(self, connection):  # the type alone: a ForeignKey to this field, a Cast
        return super().db_type(connection)

    def cast_db_type(self, connection):
        return self.rel_db_type(connection)

    def pre_save(self, model_instance, add):
        value = super().pre_save(model_instance, add)
        return DatabaseDefault() if add and value is None and self.db_default is not None else value


class CosidIdField(models.BigAutoField):
    """A bigint primary key filled by DEFAULT cosid_next(generator): Django
    leaves it out of INSERT and reads it back with RETURNING, as for bigserial."""

    def __init__(self, *args, generator=None, **kwargs):
        self.generator = generator
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        if self.generator is not None:
            kwargs["generator"] = self.generator
        return name, path, args, kwargs

    def db_type(self, connection):
        if self.generator is None:  # a table made elsewhere (inspectdb): its DEFAULT is there
            return "bigint"
        return "bigint DEFAULT cosid_next('%s')" % self.generator.replace("'", "''")


class UlidAttribute(DeferredAttribute):
    """Whatever is assigned (a uuid.UUID, ULID text, a value from RETURNING, which
    Django 3.2 does not pass through from_db_value) is kept as a Ulid."""

    def __set__(self, instance, value):
        if value is not None and not hasattr(value, "resolve_expression"):
            value = self.field.to_python(value)
        instance.__dict__[self.field.attname] = value


class UlidField(DbDefaultMixin, models.UUIDField):
    """A ulid column: values are Ulid; a uuid.UUID or ULID text is taken too."""

    descriptor_class = UlidAttribute

    def rel_db_type(self, connection):
        return "ulid"

    def to_python(self, value):
        if value is None or isinstance(value, Ulid):
            return value
        if isinstance(value, uuid.UUID):
            return Ulid(int=value.int)
        return Ulid(str(value))

    def from_db_value(self, value, expression, connection):
        return self.to_python(value)

    def get_db_prep_value(self, value, connection, prepared=False):
        return None if value is None else str(self.to_python(value))  # ULID text, which psycopg2 sends untyped


class DefaultUUIDField(DbDefaultMixin, models.UUIDField):
    """A uuid column with an SQL DEFAULT, e.g. db_default="gen_uuidv7()"."""
