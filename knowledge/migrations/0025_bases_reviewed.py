"""Base namespaces become a reviewed text (issue 16 §4): each existing declaration is published as version 1.

Until now a namespace's admin declared its bases as an audited setting that applied at once; from
here on a change is a draft another person approves. What every namespace builds on today is kept:
its declaration becomes version 1 of its "bases" text, published as the system actor.
"""

import importlib

from django.conf import settings
from django.db import migrations, models
from django.utils import timezone

# The frozen helpers of the migration that made the first reviewed texts: the content hash as
# knowledge.services.text_kinds computed it, and the system user every set-up is recorded as.
texts_0015 = importlib.import_module("knowledge.migrations.0015_existing_texts_reviewed")
NOTE = "Made a reviewed text by migration 0025: the bases declared until then, published as version 1."


def forwards(apps, schema_editor):
    NamespaceBase = apps.get_model("knowledge", "NamespaceBase")
    ReviewedText = apps.get_model("knowledge", "ReviewedText")
    TextVersion = apps.get_model("knowledge", "TextVersion")
    AuditRecord = apps.get_model("knowledge", "AuditRecord")
    declared = {}
    for link in NamespaceBase.objects.select_related("namespace", "base").order_by("namespace_id", "position"):
        declared.setdefault(link.namespace_id, (link.namespace, []))[1].append(link.base.slug)
    if not declared:
        return
    system = texts_0015._system_user(apps)
    now = timezone.now()
    for namespace, slugs in declared.values():
        if ReviewedText.objects.filter(namespace=namespace, kind="bases", key="").exists():
            continue
        content = {"bases": slugs}
        text = ReviewedText.objects.create(namespace=namespace, kind="bases", key="")
        version = TextVersion.objects.create(
            text=text,
            number=1,
            state="published",
            content=content,
            content_hash=texts_0015._hash("bases", content),
            author=system,
            reviewer=system,
            review_note=NOTE,
            submitted_at=now,
            reviewed_at=now,
            published_at=now,
        )
        version.contributors.add(system)
        text.live_version = version
        text.save(update_fields=["live_version"])
        AuditRecord.objects.create(
            namespace=namespace, text_version=version, actor=system, action="publish", to_state="published", note=NOTE
        )


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0024_theme_texts"), migrations.swappable_dependency(settings.AUTH_USER_MODEL)]

    operations = [
        migrations.AlterField(
            model_name="reviewedtext",
            name="kind",
            field=models.CharField(
                choices=[
                    ("profile", "Namespace profile (title, summary, contact, rules, FAQ)"),
                    ("doc", "Doc page"),
                    ("prompt", "Prompt pack"),
                    ("theme", "Theme (a title, a short description and the entries in it)"),
                    ("bases", "Base namespaces (the layers this namespace builds on, in priority order)"),
                ],
                max_length=16,
            ),
        ),
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
