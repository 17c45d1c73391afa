"""Factories for the product's models; related rows stay consistent (a message's owner is its session's)."""

import hashlib
import uuid

import factory
from django.contrib.auth import get_user_model

from documents_app import services as documents
from documents_app.models import Document, DocumentNode
from documents_app.uris import document_uri
from retrieval_app.models import SearchTrace
from sessions_app.models import Archive, ChatSession, Memory, Message


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.PostGenerationMethodCall("set_password", "correct horse battery staple")

    @factory.post_generation
    def _save_password(obj, create, extracted, **kwargs):
        if create:
            obj.save(update_fields=["password"])


class ChatSessionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ChatSession

    owner = factory.SubFactory(UserFactory)
    title = factory.Sequence(lambda n: f"Conversation {n}")


class MessageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Message

    session = factory.SubFactory(ChatSessionFactory)
    owner = factory.SelfAttribute("session.owner")
    agent_id = factory.SelfAttribute("session.agent_id")
    seq = factory.Sequence(lambda n: n + 1)
    role = Message.Role.USER
    content = factory.Sequence(lambda n: f"Message number {n} about the quarterly report")


class ArchiveFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Archive

    session = factory.SubFactory(ChatSessionFactory)
    owner = factory.SelfAttribute("session.owner")
    agent_id = factory.SelfAttribute("session.agent_id")
    index = factory.Sequence(lambda n: n + 1)
    uri = factory.LazyAttribute(lambda a: f"viking://session/{a.session.id}/history/archive_{a.index:03d}")
    first_seq = 1
    last_seq = 2
    message_count = 2
    abstract = "Discussed the quarterly report."
    overview = "Topic: quarterly report. Outcome: numbers agreed."


class MemoryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Memory

    owner = factory.SubFactory(UserFactory)
    category = Memory.Category.PREFERENCES
    key = factory.Sequence(lambda n: f"preference_{n}")
    content = "Prefers short answers."


class DocumentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Document

    id = factory.LazyFunction(uuid.uuid4)
    owner = factory.SubFactory(UserFactory)
    uri = factory.LazyAttribute(lambda d: document_uri(d.owner.id, d.id))
    title = factory.Sequence(lambda n: f"Document {n}")
    content_hash = factory.Sequence(lambda n: hashlib.sha256(str(n).encode()).hexdigest())
    status = Document.Status.READY


class DocumentNodeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DocumentNode

    document = factory.SubFactory(DocumentFactory)
    owner = factory.SelfAttribute("document.owner")
    kind = DocumentNode.Kind.CHUNK
    level = 2
    position = factory.Sequence(lambda n: n)
    uri = factory.LazyAttribute(lambda n: f"{n.document.uri}/chunk_{n.position:04d}")
    parent_uri = factory.SelfAttribute("document.uri")
    content = "The warranty covers parts and labour for two years."


class SearchTraceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SearchTrace

    owner = factory.SubFactory(UserFactory)
    query = "what does the warranty cover"


def index_document(owner, name: str, data: bytes):
    """Uploads and indexes a document in this process, as the worker would."""
    document, _ = documents.document_upload(owner=owner, filename=name, data=data, enqueue=False)
    return documents.document_index(document_id=document.id)
