"""invoices, keyed by a cosid generator, with a ulid reference

Revision ID: 0001
Revises:
"""
from alembic import op
import sqlalchemy as sa

from cosid_sqlalchemy import ULID

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.execute("CREATE EXTENSION IF NOT EXISTS cosid")
    op.execute("""SELECT cosid_define('invoice', '{"strategy": "snowflake"}')""")
    op.create_table(
        "invoices",
        sa.Column("id", sa.BigInteger, primary_key=True, server_default=sa.text("cosid_next('invoice')")),
        sa.Column("ref", ULID, nullable=False, unique=True, server_default=sa.text("gen_ulid_monotonic()")),
        sa.Column("item", sa.Text, nullable=False),
    )


def downgrade():
    op.drop_table("invoices")
    op.execute("SELECT cosid_drop('invoice')")
