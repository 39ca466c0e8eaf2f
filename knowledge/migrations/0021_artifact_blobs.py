"""Release files stored once per namespace by content hash (ArtifactBlob), and Release.files_pruned_at.

Existing artifacts move into blobs (identical files of different releases become one blob); the
artifact rows stay, pointing at their blob.
"""

import hashlib

import django.db.models.deletion
from django.db import migrations, models


def into_blobs(apps, schema_editor):
    Artifact = apps.get_model("knowledge", "Artifact")
    ArtifactBlob = apps.get_model("knowledge", "ArtifactBlob")
    rows = Artifact.objects.values_list("pk", "release__namespace_id", "content").order_by("pk")
    for pk, namespace_id, content in rows.iterator(chunk_size=1):
        data = bytes(content)
        digest = hashlib.sha256(data).hexdigest()
        blob, _ = ArtifactBlob.objects.get_or_create(
            namespace_id=namespace_id, digest=digest, defaults={"content": data, "size": len(data)}
        )
        Artifact.objects.filter(pk=pk).update(blob=blob)


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0020_entry_paths"),
    ]

    operations = [
        migrations.CreateModel(
            name="ArtifactBlob",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("digest", models.CharField(help_text="SHA-256 of the content, hex.", max_length=64)),
                ("content", models.BinaryField()),
                ("size", models.PositiveBigIntegerField()),
                (
                    "namespace",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="+", to="knowledge.namespace"
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("namespace", "digest"), name="artifactblob_unique_digest")
                ],
            },
        ),
        migrations.AddField(
            model_name="artifact",
            name="blob",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="artifacts",
                to="knowledge.artifactblob",
            ),
        ),
        migrations.AddField(
            model_name="release",
            name="files_pruned_at",
            field=models.DateTimeField(
                blank=True,
                editable=False,
                help_text="When the retention policy dropped this release's file contents (its record and manifest stay).",
                null=True,
            ),
        ),
        migrations.RunPython(into_blobs, migrations.RunPython.noop),
        migrations.RemoveField(model_name="artifact", name="content"),
    ]
