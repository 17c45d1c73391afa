# Built concurrently: on a large library, uploads and indexing go on while it is made.

from django.conf import settings
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):

    atomic = False

    dependencies = [
        ('documents_app', '0007_index_attempts'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        AddIndexConcurrently(
            model_name='documentnode',
            index=models.Index(condition=models.Q(('kind', 'chunk'), _negated=True), fields=['owner', 'embedding_model'], name='docnode_dir_owner_idx'),
        ),
    ]
