"""Release files as sequences of chunks (ArtifactPart), so releases share the unchanged chunks of large files.

Every existing file becomes one part: its blob, from offset 0 (new builds cut large files into
content-defined chunks). A pruned file (no blob) gets no part.
"""

import django.db.models.deletion
from django.db import migrations, models


def into_parts(apps, schema_editor):
    Artifact = apps.get_model("knowledge", "Artifact")
    ArtifactPart = apps.get_model("knowledge", "ArtifactPart")
    rows = Artifact.objects.filter(blob__isnull=False).values_list("pk", "blob_id").order_by("pk")
    batch = []
    for pk, blob_id in rows.iterator(chunk_size=2000):
        batch.append(ArtifactPart(artifact_id=pk, position=0, offset=0, blob_id=blob_id))
        if len(batch) >= 2000:
            ArtifactPart.objects.bulk_create(batch)
            batch = []
    ArtifactPart.objects.bulk_create(batch)


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0025_bases_reviewed"),
    ]

    operations = [
        migrations.CreateModel(
            name="ArtifactPart",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("position", models.PositiveIntegerField()),
                ("offset", models.PositiveBigIntegerField()),
                (
                    "artifact",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="parts", to="knowledge.artifact"
                    ),
                ),
                (
                    "blob",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="parts", to="knowledge.artifactblob"
                    ),
                ),
            ],
            options={
                "ordering": ["artifact", "position"],
                "constraints": [
                    models.UniqueConstraint(fields=("artifact", "position"), name="artifactpart_unique_position")
                ],
            },
        ),
        migrations.RunPython(into_parts, migrations.RunPython.noop),
        migrations.RemoveField(model_name="artifact", name="blob"),
    ]
