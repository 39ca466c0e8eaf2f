"""An index on EntryVersion.content_hash: an import finds the content a namespace holds already by hash,
without reading every version (knowledge.services.imports)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0028_release_manifest_stored"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="entryversion",
            index=models.Index(fields=["content_hash"], name="version_content_hash"),
        ),
    ]
