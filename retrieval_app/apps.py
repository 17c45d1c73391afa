from django.apps import AppConfig

from documents_app.signals import document_deleted


class RetrievalAppConfig(AppConfig):
    name = "retrieval_app"
    verbose_name = "Retrieval"

    def ready(self) -> None:
        # Models can be imported only once the app registry is ready, hence here (Django's own idiom).
        from django.contrib.auth import get_user_model
        from django.contrib.auth.signals import user_logged_out
        from django.db.models.signals import post_save
        from rest_framework.authtoken.models import Token

        from retrieval_app.consumers import announce_sign_out
        from retrieval_app.core.tokens import drf_token_saved, user_saved
        from retrieval_app.search.traces import search_traces_forget_document

        document_deleted.connect(search_traces_forget_document, dispatch_uid="traces-forget-document")
        user_logged_out.connect(announce_sign_out, dispatch_uid="sockets-sign-out")
        post_save.connect(drf_token_saved, sender=Token, dispatch_uid="sign-in-token-digest")
        post_save.connect(user_saved, sender=get_user_model(), dispatch_uid="credentials-user-saved")
