from django.apps import AppConfig

from documents_app.signals import document_deleted


class RetrievalAppConfig(AppConfig):
    name = "retrieval_app"
    verbose_name = "Retrieval"

    def ready(self) -> None:
        # Models can be imported only once the app registry is ready, hence here (Django's own idiom).
        from django.contrib.auth.signals import user_logged_out

        from retrieval_app.consumers import announce_sign_out
        from retrieval_app.search.traces import search_traces_forget_document

        document_deleted.connect(search_traces_forget_document, dispatch_uid="traces-forget-document")
        user_logged_out.connect(announce_sign_out, dispatch_uid="sockets-sign-out")
