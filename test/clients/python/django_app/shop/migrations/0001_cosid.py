from django.db import migrations


class Migration(migrations.Migration):
    """The extension and the generators, before the tables that use them (0002)."""

    initial = True
    dependencies = []
    operations = [
        migrations.RunSQL("CREATE EXTENSION IF NOT EXISTS cosid", migrations.RunSQL.noop),
        migrations.RunSQL("""SELECT cosid_define('order', '{"strategy": "snowflake", "codec": [{"radix": 62}, {"prefix": "O"}]}')""",
                          "SELECT cosid_drop('order')"),
        migrations.RunSQL("""SELECT cosid_define('line', '{"strategy": "snowflake"}')""", "SELECT cosid_drop('line')"),
    ]
