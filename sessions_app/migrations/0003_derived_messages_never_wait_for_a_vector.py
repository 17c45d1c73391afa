# What the product wrote itself is never embedded, so the rows waiting for a vector leave it out.

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('sessions_app', '0002_vectors_kept_inline'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='message',
            name='message_unembedded_idx',
        ),
        migrations.AddIndex(
            model_name='message',
            index=models.Index(condition=models.Q(('embedding__isnull', True), models.Q(('role', 'system'), ('metadata__contains', {'injected': True}), ('metadata__contains', {'source': 'context'}), ('metadata__contains', {'source': 'memories'}), ('metadata__contains', {'source': 'memory'}), ('metadata__contains', {'source': 'recall'}), ('metadata__contains', {'source': 'retrieval'}), ('metadata__contains', {'source': 'retrieved'}), ('metadata__contains', {'source': 'summary'}), _connector='OR', _negated=True)), fields=['id'], name='message_unembedded_idx'),
        ),
    ]
