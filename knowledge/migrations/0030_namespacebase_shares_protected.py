"""A base's internal and restricted entries reach a namespace built on it only when the people who wrote
the list could read them (NamespaceBase.shares_protected).

Until now every base handed its whole release to every namespace built on it, so anyone who could
declare a public base (any editor of any tenant) could read its internal entries with their own
namespace's keys. Existing links keep their entries where the list's writers could read them: a
private base (membership was already required), or a published list whose every writer is the
system actor, a superuser or an editor of the base.
"""

from django.conf import settings
from django.db import migrations, models

SYSTEM_USERNAME = "evergreen-system"  # knowledge.actors.SYSTEM_USERNAME at the time of writing
EDITING_ROLES = ("editor", "admin")  # knowledge.selectors.permissions.IMPLIED_ROLES[Role.EDITOR]


def _writers(text):
    version = text.live_version if text is not None else None
    if version is None:
        return None
    people = list(version.contributors.all())
    if version.author is not None:
        people.append(version.author)
    return people


def forwards(apps, schema_editor):
    NamespaceBase = apps.get_model("knowledge", "NamespaceBase")
    ReviewedText = apps.get_model("knowledge", "ReviewedText")
    Membership = apps.get_model("knowledge", "Membership")
    for link in NamespaceBase.objects.select_related("base"):
        if not link.base.is_public:
            shares = True
        else:
            text = ReviewedText.objects.filter(namespace_id=link.namespace_id, kind="bases", key="").first()
            writers = _writers(text)
            shares = writers is not None and all(
                person.username == SYSTEM_USERNAME
                or (person.is_active and person.is_superuser)
                or (
                    person.is_active
                    and Membership.objects.filter(user=person, namespace=link.base, role__in=EDITING_ROLES).exists()
                )
                for person in writers
            )
        if shares:
            NamespaceBase.objects.filter(pk=link.pk).update(shares_protected=True)


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0029_version_content_hash"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="namespacebase",
            name="shares_protected",
            field=models.BooleanField(
                default=False,
                help_text=(
                    "The base's internal and restricted entries reach this namespace too: everyone who wrote the "
                    "list could read them (an editor of the base), or it was set up from files. Otherwise only "
                    "what the base serves publicly."
                ),
            ),
        ),
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
