from django.apps import AppConfig

from documents_app.signals import document_deleted
from sessions_app.signals import memory_deleted, session_deleted


class RetrievalAppConfig(AppConfig):
    name = "retrieval_app"
    verbose_name = "Retrieval"

    def ready(self) -> None:
        # Receivers reach models, which can be imported only once the app registry is ready (Django's idiom).
        from retrieval_app.traces import search_traces_forget, search_traces_forget_document
        from sessions_app.services.forgetting import conversations_forget_document

        document_deleted.connect(search_traces_forget_document, dispatch_uid="traces-forget-document")
        session_deleted.connect(search_traces_forget, dispatch_uid="traces-forget-session")
        memory_deleted.connect(search_traces_forget, dispatch_uid="traces-forget-memory")
        # Sessions and documents know nothing of each other: a deleted document reaches the answers that
        # cited it and the working sets that held it from here, the first layer that sees both.
        document_deleted.connect(conversations_forget_document, dispatch_uid="conversations-forget-document")
