"""The database itself refuses to delete entries, versions, releases and audit records.

Nothing in Evergreen is ever hard-deleted: IDs must never be reused and rollback needs every
release. PostgreSQL and SQLite triggers make that hold even for raw SQL and bulk deletes.
"""

from django.db import migrations

PROTECTED_TABLES = [
    "knowledge_entry",
    "knowledge_entryversion",
    "knowledge_release",
    "knowledge_artifact",
    "knowledge_auditrecord",
]

POSTGRES_FUNCTION = """
CREATE OR REPLACE FUNCTION evergreen_refuse_delete() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'Evergreen never deletes rows of %%', TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
END;
$$ LANGUAGE plpgsql;
"""


def create_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(POSTGRES_FUNCTION)
        for table in PROTECTED_TABLES:
            schema_editor.execute(
                f"CREATE TRIGGER {table}_refuse_delete BEFORE DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION evergreen_refuse_delete();"
            )


def drop_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in PROTECTED_TABLES:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_refuse_delete ON {table};")
    schema_editor.execute("DROP FUNCTION IF EXISTS evergreen_refuse_delete();")


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0001_initial")]

    operations = [migrations.RunPython(create_triggers, drop_triggers)]
