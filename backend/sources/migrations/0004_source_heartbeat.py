# Liveness of index runs, for recovery after a worker dies.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('sources', '0003_indexing_started_at'),
    ]

    operations = [
        migrations.AddField(
            model_name='datasource',
            name='heartbeat_at',
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name='datasource',
            name='recoveries',
            field=models.PositiveSmallIntegerField(
                default=0, editable=False, help_text='Times recovery re-queued the current run after its task died.'
            ),
        ),
    ]
