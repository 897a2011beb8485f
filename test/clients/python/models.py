"""The SQLAlchemy model that the Alembic migration in alembic/ creates."""
import sqlalchemy as sa
from sqlalchemy.orm import declarative_base

from cosid_sqlalchemy import ULID

Base = declarative_base()


class Invoice(Base):
    __tablename__ = "invoices"
    id = sa.Column(sa.BigInteger, primary_key=True, server_default=sa.text("cosid_next('invoice')"))
    ref = sa.Column(ULID, nullable=False, unique=True, server_default=sa.text("gen_ulid_monotonic()"))
    item = sa.Column(sa.Text, nullable=False)
    __mapper_args__ = {"eager_defaults": True}  # INSERT ... RETURNING id, ref
