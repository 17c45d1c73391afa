# A passage's vector is read from the passage's own page, not from a side table: see keep_vectors_inline.

from django.db import migrations

from foundation.fields import keep_vectors_inline


class Migration(migrations.Migration):
    dependencies = [
        ("documents_app", "0009_waiting_documents_index"),
    ]

    operations = [keep_vectors_inline("documents_app_documentnode")]
