from django.apps import AppConfig


class ChatAppConfig(AppConfig):
    name = "chat_app"
    verbose_name = "Chat"

    def ready(self) -> None:
        # Receivers reach models, which can be imported only once the app registry is ready (Django's idiom).
        from django.contrib.auth.signals import user_logged_out

        from chat_app.consumers import announce_sign_out

        user_logged_out.connect(announce_sign_out, dispatch_uid="sockets-sign-out")
