"""Model calls and queued tasks now belong to the foundation, API tokens to accounts_app: retrieval_app
lets go of them in the state alone, after the apps that take them over have taken them (their tables
and rows stay as they are)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("retrieval_app", "0006_sign_in_tokens_as_digests"),
        ("foundation", "0001_initial"),
        ("accounts_app", "0002_api_token"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="QueuedTask"),
                migrations.DeleteModel(name="ApiToken"),
                migrations.DeleteModel(name="ModelCall"),
            ],
        ),
    ]
