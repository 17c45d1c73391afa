"""The pgvector extension, before any table that has a vector column.

On an external server where the application's role may not create extensions, a superuser runs
``CREATE EXTENSION vector;`` once and this migration becomes a no-op.
"""

from django.db import migrations
from pgvector.django import VectorExtension


class Migration(migrations.Migration):
    initial = True
    dependencies: list = []
    operations = [VectorExtension()]
