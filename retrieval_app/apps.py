from django.apps import AppConfig

from documents_app.signals import document_deleted


class RetrievalAppConfig(AppConfig):
    name = "retrieval_app"
    verbose_name = "Retrieval"

    def ready(self) -> None:
        # Receivers reach models, which can be imported only once the app registry is ready (Django's idiom).
        from retrieval_app.traces import search_traces_forget_document

        document_deleted.connect(search_traces_forget_document, dispatch_uid="traces-forget-document")
