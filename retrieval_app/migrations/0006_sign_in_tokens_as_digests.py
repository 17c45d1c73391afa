"""Sign-in tokens (DRF's ``authtoken`` table, which kept each key in clear) become API tokens of the
kind ``sign_in``, of which only a digest is kept; a token may expire. Every client holding a key keeps working: its key's
digest is what is stored. The clear keys are then deleted."""

import hashlib

from django.db import migrations, models

SHOWN_CHARS = 10


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def keys_to_digests(apps, schema_editor):
    Token = apps.get_model("authtoken", "Token")
    ApiToken = apps.get_model("retrieval_app", "ApiToken")
    ApiToken.objects.bulk_create(
        [
            ApiToken(
                owner_id=token.user_id,
                name="Sign-in token",
                prefix=token.key[:SHOWN_CHARS],
                key_digest=_digest(token.key),
                kind="sign_in",
                created_at=token.created,
            )
            for token in Token.objects.all()
        ],
        ignore_conflicts=True,
    )
    Token.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("retrieval_app", "0005_trace_timings_outcome_and_call_session"),
        ("authtoken", "0004_alter_tokenproxy_options"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="kind",
            field=models.CharField(
                choices=[("named", "named"), ("sign_in", "sign-in")], default="named", max_length=16
            ),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="expires_at",
            field=models.DateTimeField(
                blank=True, help_text="When the token stops working (never if empty).", null=True
            ),
        ),
        # The keys deleted here cannot be brought back: going back leaves the digests, which still work.
        migrations.RunPython(keys_to_digests, migrations.RunPython.noop),
    ]
