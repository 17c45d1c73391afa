"""Whether a document's title was given by a person, so that indexing keeps it.

Documents indexed before had their title stored either way. A title that is junk by today's rules
("about:blank", "Document1", a file name) or is just the file's name was the file's, and the next
indexing names the document anew; any other is kept as if given."""

from pathlib import PurePosixPath

from django.db import migrations, models

from documents_app import titles

BATCH = 500


def mark_given(apps, schema_editor):
    Document = apps.get_model("documents_app", "Document")
    given = []
    for document in Document.objects.exclude(title="").only("id", "title", "filename").iterator(chunk_size=BATCH):
        from_file = document.title == (PurePosixPath(document.filename).stem or "Untitled")
        if not from_file and not titles.is_junk(document.title):
            given.append(document.id)
    for start in range(0, len(given), BATCH):
        Document.objects.filter(id__in=given[start : start + BATCH]).update(title_given=True)


class Migration(migrations.Migration):
    dependencies = [("documents_app", "0005_repair_documents_added_without_an_upload")]

    operations = [
        migrations.AddField(model_name="document", name="title_given", field=models.BooleanField(default=False)),
        migrations.RunPython(mark_given, migrations.RunPython.noop, elidable=True),
    ]
