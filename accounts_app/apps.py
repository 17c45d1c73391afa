from django.apps import AppConfig


class AccountsAppConfig(AppConfig):
    name = "accounts_app"
    verbose_name = "People and tokens"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Receivers reach models, which can be imported only once the app registry is ready (Django's idiom).
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_save
        from rest_framework.authtoken.models import Token

        from accounts_app.tokens import drf_token_saved, user_saved

        post_save.connect(drf_token_saved, sender=Token, dispatch_uid="sign-in-token-digest")
        post_save.connect(user_saved, sender=get_user_model(), dispatch_uid="credentials-user-saved")
