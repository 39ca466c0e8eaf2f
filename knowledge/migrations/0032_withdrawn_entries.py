"""The IDs a namespace served from a base that has left its list of bases (WithdrawnEntry): they answer 410.

Recorded by the first build after the list changes, from the last release's manifest, which names each
entry's layer from now on; a base removed before this had releases whose manifests do not, so its IDs
keep answering 404.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0031_clearance_on_tasks_and_request_log"),
    ]

    operations = [
        migrations.CreateModel(
            name="WithdrawnEntry",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("public_id", models.CharField(max_length=32)),
                ("layer", models.SlugField(help_text="The namespace it was served from (its layer).", max_length=64)),
                ("title", models.CharField(blank=True, max_length=500)),
                (
                    "sensitivity",
                    models.CharField(
                        choices=[("public", "Public"), ("internal", "Internal"), ("restricted", "Restricted")],
                        default="public",
                        help_text="As it was served.",
                        max_length=16,
                    ),
                ),
                ("withdrawn_at", models.DateTimeField()),
                (
                    "namespace",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="withdrawn_entries",
                        to="knowledge.namespace",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("namespace", "public_id"), name="withdrawnentry_unique_id")
                ],
            },
        ),
    ]
