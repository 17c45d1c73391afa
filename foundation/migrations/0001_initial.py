"""The model calls and queued tasks move here from retrieval_app, in the state alone: their tables keep
their names and their rows (created by retrieval_app's migrations 0002 to 0005), their content types are
relabelled, so permissions and the admin's history follow them. The one change to the database: a call's
conversation becomes a plain id, as the foundation knows no app above it."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

OLD, NEW, MODELS = "retrieval_app", "foundation", ("modelcall", "queuedtask")

DROP_SESSION_FOREIGN_KEY = """
DO $$
DECLARE fk text;
BEGIN
  FOR fk IN
    SELECT conname FROM pg_constraint
    WHERE conrelid = 'retrieval_app_modelcall'::regclass AND contype = 'f'
      AND conkey = ARRAY[(SELECT attnum FROM pg_attribute
                          WHERE attrelid = 'retrieval_app_modelcall'::regclass AND attname = 'session_id')]
  LOOP
    EXECUTE format('ALTER TABLE retrieval_app_modelcall DROP CONSTRAINT %I', fk);
  END LOOP;
END $$;
"""
# Back to a foreign key, once the ids of conversations deleted since are cleared.
RESTORE_SESSION_FOREIGN_KEY = """
UPDATE retrieval_app_modelcall SET session_id = NULL
WHERE session_id IS NOT NULL AND session_id NOT IN (SELECT id FROM sessions_app_chatsession);
ALTER TABLE retrieval_app_modelcall ADD CONSTRAINT retrieval_app_modelcall_session_id_fk
  FOREIGN KEY (session_id) REFERENCES sessions_app_chatsession (id) DEFERRABLE INITIALLY DEFERRED;
"""


def relabel(old: str, new: str):
    def run(apps, schema_editor) -> None:
        content_types = apps.get_model("contenttypes", "ContentType").objects.using(schema_editor.connection.alias)
        for model in MODELS:
            if not content_types.filter(app_label=new, model=model).exists():
                content_types.filter(app_label=old, model=model).update(app_label=new)

    return run


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
        ("retrieval_app", "0006_sign_in_tokens_as_digests"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(DROP_SESSION_FOREIGN_KEY, RESTORE_SESSION_FOREIGN_KEY)],
            state_operations=[
                migrations.CreateModel(
                    name="QueuedTask",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("task", models.CharField(max_length=200)),
                        ("args", models.JSONField(default=list)),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                    ],
                    options={"db_table": "retrieval_app_queuedtask"},
                ),
                migrations.CreateModel(
                    name="ModelCall",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("kind", models.CharField(choices=[("embedding", "embedding"), ("generation", "generation")], max_length=16)),
                        ("purpose", models.CharField(help_text="What the call served, e.g. archive_overview.", max_length=64)),
                        ("backend", models.CharField(help_text="local, extractive or litellm", max_length=32)),
                        ("model", models.CharField(max_length=200)),
                        ("session_id", models.UUIDField(blank=True, db_index=True, null=True)),
                        ("input_count", models.PositiveIntegerField(default=1, help_text="Texts embedded, or 1 for a generation.")),
                        ("input_tokens", models.PositiveIntegerField(default=0)),
                        ("output_tokens", models.PositiveIntegerField(default=0)),
                        ("cost_usd", models.DecimalField(decimal_places=6, default=0, max_digits=12)),
                        ("latency_ms", models.FloatField(default=0.0)),
                        ("attempts", models.PositiveSmallIntegerField(default=1)),
                        ("ok", models.BooleanField(default=True)),
                        ("error", models.TextField(blank=True, default="")),
                        ("created_at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                        (
                            "owner",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="model_calls",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "retrieval_app_modelcall",
                        "indexes": [
                            models.Index(fields=["purpose", "-created_at"], name="modelcall_purpose_idx"),
                            models.Index(fields=["owner", "-created_at"], name="modelcall_owner_created_idx"),
                            models.Index(
                                condition=models.Q(("ok", False)), fields=["-created_at"], name="modelcall_failed_created_idx"
                            ),
                        ],
                    },
                ),
            ],
        ),
        migrations.RunPython(relabel(OLD, NEW), relabel(NEW, OLD)),
    ]
