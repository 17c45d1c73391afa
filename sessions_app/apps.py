from django.apps import AppConfig


class SessionsAppConfig(AppConfig):
    name = "sessions_app"
    verbose_name = "Sessions and memory"

    def ready(self) -> None:
        # Models can be imported only once the app registry is ready, hence here (Django's own idiom).
        from foundation.embedding import embeddable_register
        from sessions_app.embeddables import EMBEDDABLES

        for kind in EMBEDDABLES:
            embeddable_register(kind)
