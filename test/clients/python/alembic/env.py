"""Alembic environment for cosid: the model's metadata, type comparison, and
compare_server_default hooked so that autogenerate compares cosid defaults as
text instead of running them.  `-x check=1` with `revision --autogenerate`
writes no file and fails if the database differs from the model (what
`alembic check` does in later Alembic versions; bookworm has 1.8)."""
import os
import sys
from logging.config import fileConfig

from alembic import context
from alembic.util import CommandError
from sqlalchemy import engine_from_config, pool

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cosid_sqlalchemy import compare_server_default  # noqa: E402
from models import Base  # noqa: E402

config = context.config
if config.config_file_name is not None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)
xargs = context.get_x_argument(as_dictionary=True)


def check_only(migration_context, revision, directives):
    ops = directives[0].upgrade_ops
    if not ops.is_empty():
        raise CommandError(f"New upgrade operations detected: {ops.as_diffs()}")
    print("No new upgrade operations detected.")
    directives[:] = []


def run_migrations_online():
    engine = engine_from_config(config.get_section(config.config_ini_section), prefix="sqlalchemy.",
                                poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=Base.metadata,
            compare_type=True,
            compare_server_default=compare_server_default,
            process_revision_directives=check_only if xargs.get("check") else None,
        )
        with context.begin_transaction():
            context.run_migrations()


run_migrations_online()
