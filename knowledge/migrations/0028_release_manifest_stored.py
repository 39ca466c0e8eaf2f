"""Release.manifest becomes manifest_stored (the same column): a manifest may be stored as a delta."""

import knowledge.models.json_encoder
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0027_release_json_encoder"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameField(model_name="release", old_name="manifest", new_name="manifest_stored"),
                migrations.AlterField(
                    model_name="release",
                    name="manifest_stored",
                    field=models.JSONField(
                        db_column="manifest",
                        encoder=knowledge.models.json_encoder.CompiledJSONEncoder,
                        help_text="[{id, version, hash}] of the published entries, and tombstones; or how they "
                        "differ from the previous release's (knowledge.retrieval.manifests).",
                    ),
                ),
            ],
        ),
    ]
