"""Namespace.active_serial: the content serial the active release serves (rollback re-activates old releases)."""

from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def from_active_release(apps, schema_editor):
    Namespace = apps.get_model("knowledge", "Namespace")
    Release = apps.get_model("knowledge", "Release")
    serial = Release.objects.filter(pk=OuterRef("active_release_id")).values("content_serial")[:1]
    Namespace.objects.filter(active_release__isnull=False).update(active_serial=Subquery(serial))


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0017_trust"),
    ]

    operations = [
        migrations.AddField(
            model_name="namespace",
            name="active_serial",
            field=models.PositiveBigIntegerField(default=0, editable=False),
        ),
        migrations.RunPython(from_active_release, migrations.RunPython.noop),
    ]
