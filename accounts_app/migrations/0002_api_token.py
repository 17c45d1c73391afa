"""API tokens move here from retrieval_app, in the state alone: the table keeps its name and its rows
(created by retrieval_app's migrations 0004 and 0006), and its content type is relabelled, so
permissions and the admin's history follow it."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

OLD, NEW, MODEL = "retrieval_app", "accounts_app", "apitoken"


def relabel(old: str, new: str):
    def run(apps, schema_editor) -> None:
        content_types = apps.get_model("contenttypes", "ContentType").objects.using(schema_editor.connection.alias)
        if not content_types.filter(app_label=new, model=MODEL).exists():
            content_types.filter(app_label=old, model=MODEL).update(app_label=new)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("accounts_app", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
        ("retrieval_app", "0006_sign_in_tokens_as_digests"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ApiToken",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("name", models.CharField(help_text="What the person uses it for, e.g. the agent's name.", max_length=100)),
                        ("prefix", models.CharField(help_text="The key's first characters, to recognise it by.", max_length=16)),
                        ("key_digest", models.CharField(help_text="SHA-256 of the key, in hex.", max_length=64, unique=True)),
                        ("kind", models.CharField(choices=[("named", "named"), ("sign_in", "sign-in")], default="named", max_length=16)),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                        ("last_used_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "expires_at",
                            models.DateTimeField(blank=True, help_text="When the token stops working (never if empty).", null=True),
                        ),
                        (
                            "owner",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, related_name="api_tokens", to=settings.AUTH_USER_MODEL
                            ),
                        ),
                    ],
                    options={
                        "db_table": "retrieval_app_apitoken",
                        "indexes": [models.Index(fields=["owner", "-created_at"], name="apitoken_owner_created_idx")],
                    },
                ),
            ],
        ),
        migrations.RunPython(relabel(OLD, NEW), relabel(NEW, OLD)),
    ]
