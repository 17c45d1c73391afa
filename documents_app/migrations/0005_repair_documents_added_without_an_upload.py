"""Documents the admin once let staff add without uploading a file (an empty URI, no file, no hash)
are repaired: each gets its own URI, the nodes indexed under a malformed one are removed (they turned
up in search as "/chunk_0001"), and, having no file to index, it is marked failed with a reason that
says to upload the file again."""

from django.db import migrations

SCHEME = "viking://"


def repair(apps, schema_editor):
    Document = apps.get_model("documents_app", "Document")
    DocumentNode = apps.get_model("documents_app", "DocumentNode")
    for document in Document.objects.filter(uri="").only("id", "owner_id", "file"):
        uri = f"{SCHEME}resources/users/{document.owner_id}/documents/{document.id}"
        DocumentNode.objects.filter(document_id=document.id).exclude(uri__startswith=uri).delete()
        changes = {"uri": uri}
        if not document.file:
            changes |= {
                "status": "failed",
                "error": "This document was added without a file, so there is nothing to index; upload it again.",
                "node_count": 0,
            }
            DocumentNode.objects.filter(document_id=document.id).delete()
        Document.objects.filter(pk=document.pk).update(**changes)


class Migration(migrations.Migration):
    dependencies = [("documents_app", "0004_private_upload_permissions")]

    operations = [migrations.RunPython(repair, migrations.RunPython.noop, elidable=True)]
