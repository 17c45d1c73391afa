"""Uploads stored before documents were private on disk get the same modes as new ones: folders 0700,
files 0600 (FILE_UPLOAD_DIRECTORY_PERMISSIONS and FILE_UPLOAD_PERMISSIONS)."""

import os
from pathlib import Path

from django.conf import settings
from django.db import migrations


def restrict_stored_uploads(apps, schema_editor):
    root = Path(settings.MEDIA_ROOT) / "documents"
    if not root.is_dir():
        return
    for folder, _, files in os.walk(root):
        os.chmod(folder, settings.FILE_UPLOAD_DIRECTORY_PERMISSIONS)
        for name in files:
            os.chmod(Path(folder) / name, settings.FILE_UPLOAD_PERMISSIONS)


class Migration(migrations.Migration):
    dependencies = [("documents_app", "0003_directory_indexes")]

    operations = [migrations.RunPython(restrict_stored_uploads, migrations.RunPython.noop, elidable=True)]
