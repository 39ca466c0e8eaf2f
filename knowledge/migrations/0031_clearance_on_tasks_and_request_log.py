"""Clearances on A2A tasks and request-log rows.

A2ATask.clearance: tasks/get returns a task only to a caller cleared as far as the one who made it.
Tasks stored before hold unknown content, so they become restricted (the column default): only a
restricted key reads them back during what is left of their retention (24 hours by default).
RequestLog.clearance: the view an answer was served from, for replay; earlier rows stay empty (public).
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('knowledge', '0030_namespacebase_shares_protected'),
    ]

    operations = [
        migrations.AddField(
            model_name='a2atask',
            name='clearance',
            field=models.CharField(choices=[('public', 'Public'), ('internal', 'Internal'), ('restricted', 'Restricted')], default='restricted', help_text='The clearance of the caller that made it: only callers cleared as far read it back.', max_length=16),
        ),
        migrations.AddField(
            model_name='requestlog',
            name='clearance',
            field=models.CharField(blank=True, default='', help_text='The clearance the answer was served with, when above public (empty: public, as every row logged before clearances were recorded); replay renders that view.', max_length=16),
        ),
    ]
