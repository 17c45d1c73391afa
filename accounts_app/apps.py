from django.apps import AppConfig


class AccountsAppConfig(AppConfig):
    name = "accounts_app"
    verbose_name = "People joining"
    default_auto_field = "django.db.models.BigAutoField"
