# A message's, a memory's and an archive's vectors are read from their own rows' pages: see
# keep_vectors_inline.

from django.db import migrations

from foundation.fields import keep_vectors_inline


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0001_initial"),
    ]

    operations = [
        keep_vectors_inline("sessions_app_message"),
        keep_vectors_inline("sessions_app_memory"),
        keep_vectors_inline("sessions_app_archive"),
    ]
