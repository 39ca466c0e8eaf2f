"""Existing agent-visible texts become published versions of reviewed texts, recorded as the system actor.

Every namespace's profile (title, summary, contact, rules, FAQ), every doc page and every prompt pack
gets a reviewed text whose version 1 is published with the content served today. Entry versions get
their contributors from their author and the audit trail's edits. Text versions are never deleted.
"""

import hashlib
import json

from django.conf import settings
from django.db import migrations
from django.utils import timezone

SYSTEM_USERNAME = "evergreen-system"  # knowledge.actors.SYSTEM_USERNAME at the time of writing
NOTE = "Made a reviewed text by migration 0015: the content served until then, published as version 1."


def _hash(kind, content):
    # knowledge.services.text_kinds.text_content_hash, frozen here: orjson's sorted, compact output.
    canonical = json.dumps({"kind": kind, "content": content}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _system_user(apps):
    app_label, model_name = settings.AUTH_USER_MODEL.split(".")
    User = apps.get_model(app_label, model_name)
    user, _ = User.objects.get_or_create(
        username=SYSTEM_USERNAME,
        defaults={"is_active": False, "first_name": "Evergreen", "last_name": "(system)", "password": "!migration"},
    )
    return user


def _texts_of(namespace, DocPage, PromptPack):
    profile = {
        "title": namespace.title,
        "summary": namespace.summary,
        "contact": namespace.contact,
        "rules": [str(rule) for rule in namespace.rules or []],
        "faq": [
            {"question": str(item.get("question", "")), "answer": str(item.get("answer", ""))}
            for item in namespace.faq or []
            if isinstance(item, dict)
        ],
    }
    yield "profile", "", profile
    for page in DocPage.objects.filter(namespace=namespace):
        yield "doc", page.slug, {"title": page.title, "body": page.body, "position": page.position}
    for pack in PromptPack.objects.filter(namespace=namespace):
        yield "prompt", pack.scenario, {"template": pack.template}


def forwards(apps, schema_editor):
    Namespace = apps.get_model("knowledge", "Namespace")
    DocPage = apps.get_model("knowledge", "DocPage")
    PromptPack = apps.get_model("knowledge", "PromptPack")
    ReviewedText = apps.get_model("knowledge", "ReviewedText")
    TextVersion = apps.get_model("knowledge", "TextVersion")
    AuditRecord = apps.get_model("knowledge", "AuditRecord")
    EntryVersion = apps.get_model("knowledge", "EntryVersion")
    namespaces = list(Namespace.objects.all())
    if namespaces:
        system = _system_user(apps)
        now = timezone.now()
        for namespace in namespaces:
            for kind, key, content in _texts_of(namespace, DocPage, PromptPack):
                text = ReviewedText.objects.create(namespace=namespace, kind=kind, key=key)
                version = TextVersion.objects.create(
                    text=text,
                    number=1,
                    state="published",
                    content=content,
                    content_hash=_hash(kind, content),
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
                    namespace=namespace,
                    text_version=version,
                    actor=system,
                    action="publish",
                    to_state="published",
                    note=NOTE,
                )
    through = EntryVersion.contributors.through
    pairs = set(EntryVersion.objects.exclude(author=None).values_list("pk", "author_id"))
    pairs |= set(
        AuditRecord.objects.filter(action__in=("create", "edit"), version__isnull=False, actor__isnull=False)
        .values_list("version_id", "actor_id")
        .distinct()
    )
    through.objects.bulk_create(
        [through(entryversion_id=version_id, user_id=user_id) for version_id, user_id in sorted(pairs)],
        batch_size=1000,
        ignore_conflicts=True,
    )


def create_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "CREATE TRIGGER knowledge_textversion_refuse_delete BEFORE DELETE ON knowledge_textversion "
            "FOR EACH ROW EXECUTE FUNCTION evergreen_refuse_delete();"
        )


def drop_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP TRIGGER IF EXISTS knowledge_textversion_refuse_delete ON knowledge_textversion;")


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0014_reviewed_texts"), migrations.swappable_dependency(settings.AUTH_USER_MODEL)]

    operations = [
        migrations.RunPython(forwards, migrations.RunPython.noop),
        migrations.RunPython(create_trigger, drop_trigger),
    ]
