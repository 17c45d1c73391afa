# Whether anyone else's document waits is read from this small index, not from every document.

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("documents_app", "0008_directory_owner_index"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name="document",
            index=models.Index(
                condition=models.Q(("status", "pending")), fields=["owner"], name="document_waiting_idx"
            ),
        ),
    ]
