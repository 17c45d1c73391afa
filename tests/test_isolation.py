"""Isolation by construction: every URL the site routes, with every method its view serves, is tried
against another user's objects by an anonymous client, by a second user, and by a staff member who is
not a superuser; and so is the chat websocket.

The matrix below has one row per route and method. The routes and methods come from the URL resolver
and the views themselves, so an endpoint (or a method) added without a row here fails this test.

Every answer must be a refusal (401 anonymous; 404 for another user's object, or 400 for another user's
viking:// URI) or an answer about the caller's own data, and no answer may carry any part of the other
user's content: each of their objects holds a marker that no other row of the database holds.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import AsyncClient, Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from rest_framework.authtoken.models import Token

from accounts_app.models import ApiToken, Invitation
from accounts_app.services import invitation_create
from accounts_app.tokens import api_token_create
from config.asgi import application
from documents_app.models import Document, DocumentNode
from privacy_app.models import ImportJob
from retrieval_app.models import SearchTrace
from sessions_app import services as sessions
from sessions_app.api.paging import cursor_encode
from sessions_app.models import Archive, ChatSession, Memory, Message
from tests.factories import (
    ArchiveFactory,
    ChatSessionFactory,
    MemoryFactory,
    MessageFactory,
    SearchTraceFactory,
    UserFactory,
    index_document,
)
from tests.samples import KETTLE

pytestmark = pytest.mark.django_db(transaction=True)

# In every piece of the owner's content, and nowhere else: finding it in an answer to anyone else is a leak.
MARKER = "Zanzibarquill"
SECRET_TEXT = (
    f"# {MARKER} vault\n\nThe {MARKER} vault opens with code 7741. The {MARKER} kettle descaling plan is secret.\n"
)


@dataclass
class Owner:
    """The user whose objects everyone else tries to reach."""

    user: Any
    session: ChatSession
    message: Message
    archive: Archive
    memory: Memory
    document: Document
    node: DocumentNode
    trace: SearchTrace
    api_token: ApiToken
    invitation_key: str
    import_job: ImportJob
    uris: dict[str, str] = field(default_factory=dict)


def _owner() -> Owner:
    user = UserFactory(username="vault-owner")
    session = ChatSessionFactory(owner=user, title=f"{MARKER} planning", agent_id=AGENT)
    message = MessageFactory(session=session, role="user", content=f"Remember: the {MARKER} vault code is 7741.")
    MessageFactory(session=session, role="assistant", content=f"Noted, the {MARKER} vault code is 7741.")
    archive = ArchiveFactory(session=session, abstract=f"{MARKER} vault code", overview=f"Topic: {MARKER} vault.")
    memory = MemoryFactory(
        owner=user, category="entities", key=f"{MARKER}_vault", content=f"{MARKER} vault: 7741", agent_id=AGENT
    )
    document = index_document(user, f"{MARKER}.md", SECRET_TEXT.encode())
    node = DocumentNode.objects.filter(document=document).exclude(level=0).first()
    sessions.working_set_update(
        session_id=str(session.id), resolved_terms={"vault": f"{MARKER} vault"}, documents=[document.uri]
    )
    trace = SearchTraceFactory(owner=user, session=session, query=f"{MARKER} vault")
    api_token, _ = api_token_create(user=user, name=f"{MARKER} agent")
    Token.objects.create(user=user)  # a sign-in token too (kept as a digest)
    # The owner joined with an invitation (whose note names them); its link is spent.
    invitation = invitation_create(created_by=UserFactory(is_superuser=True), days=1, note=f"{MARKER} family")
    Invitation.objects.filter(pk=invitation.invitation.pk).update(used_at=timezone.now(), used_by=user)
    uris = {
        "document": document.uri,
        "node": node.uri,
        "archive": archive.uri,
        "memory": memory.uri,
        "user_root": document.uri.split("/documents/")[0],
    }
    # An import of the owner's, with a file name that is theirs alone.
    import_job = ImportJob.objects.create(owner=user, kind=ImportJob.Kind.MESSAGES, filename=f"{MARKER}.json")
    return Owner(
        user, session, message, archive, memory, document, node, trace, api_token, invitation.key, import_job, uris
    )


def _bystander(user) -> None:
    """The caller's own data, so that searches have something of theirs to find and really run."""
    session = ChatSessionFactory(owner=user, title="Kettle notes")
    MessageFactory(session=session, role="user", content="How often should I descale the Aurora kettle?")
    MemoryFactory(owner=user, category="preferences", content="Prefers citric acid for descaling.")
    index_document(user, "kettle.md", KETTLE)


# --- the matrix ------------------------------------------------------------------------------------
# A row: route (as the resolver spells it), method, the request against the owner's objects, and the
# statuses a signed-in stranger may get. Anonymous callers get 401 everywhere under /api/ but PUBLIC.

NOT_FOUND = {404}
MOVED = {301}
OWN_DATA = {200}
PASSWORD_TRY = "a long enough passphrase"
REFUSED_URI = {400, 404}

# What others ask: it matches the owner's content by meaning and by keyword, and holds no marker itself,
# since answers may quote a caller's own question back.
Q = "What is the vault code?"
AGENT = "vault-agent"


def _rows(o: Owner) -> dict[tuple[str, str], tuple[str, dict | None, set[int]]]:
    s, d, m = o.session.id, o.document.id, o.memory.id
    return {
        ("api/health", "get"): ("/api/health", None, OWN_DATA),
        ("api/auth/token", "post"): (
            "/api/auth/token",
            {"username": o.user.username, "password": "wrong"},
            {400},
        ),
        ("api/me", "get"): ("/api/me", None, OWN_DATA),  # the caller's own id, never the owner's
        # The OpenAI-compatible API: the owner's agent is no model of anyone else's, nor their session (asked
        # before the caller makes sessions of that agent of their own, below).
        ("v1/models", "get"): ("/v1/models", None, OWN_DATA),
        ("v1/models/<path:model_id>", "get"): (f"/v1/models/recollect:{AGENT}", None, NOT_FOUND),
        ("v1/chat/completions", "post"): (
            "/v1/chat/completions",
            {"model": "recollect", "messages": [{"role": "user", "content": Q}], "metadata": {"session_id": str(s)}},
            NOT_FOUND,
        ),
        ("v1/^.*$", "get"): (f"/v1/sessions/{s}", None, NOT_FOUND),
        # Old admin addresses of models that moved: each answers only where the page is now.
        **{
            (f"^admin/retrieval_app/{model}/(?P<rest>.*)$", "get"): (f"/admin/retrieval_app/{model}/", None, MOVED)
            for model in ("modelcall", "queuedtask", "apitoken")
        },
        ("api/schema/", "get"): ("/api/schema/", None, OWN_DATA),
        ("api/docs/", "get"): ("/api/docs/", None, OWN_DATA),
        ("api/redoc/", "get"): ("/api/redoc/", None, OWN_DATA),
        # Sessions
        ("api/sessions", "get"): (f"/api/sessions?agent_id={AGENT}", None, OWN_DATA),
        ("api/sessions", "post"): ("/api/sessions", {"title": "mine", "agent_id": AGENT}, {201}),
        ("api/sessions/<str:session_id>", "get"): (f"/api/sessions/{s}", None, NOT_FOUND),
        ("api/sessions/<str:session_id>", "patch"): (f"/api/sessions/{s}", {"title": "taken"}, NOT_FOUND),
        ("api/sessions/<str:session_id>", "delete"): (f"/api/sessions/{s}", None, NOT_FOUND),
        ("api/sessions/<str:session_id>/messages", "post"): (
            f"/api/sessions/{s}/messages",
            {"messages": [{"role": "user", "content": "injected"}]},
            NOT_FOUND,
        ),
        ("api/sessions/<str:session_id>/messages", "get"): (f"/api/sessions/{s}/messages", None, NOT_FOUND),
        ("api/sessions/<str:session_id>/archives", "get"): (f"/api/sessions/{s}/archives", None, NOT_FOUND),
        ("api/sessions/<str:session_id>/commit", "post"): (f"/api/sessions/{s}/commit", {}, NOT_FOUND),
        ("api/sessions/<str:session_id>/context", "get"): (f"/api/sessions/{s}/context?query=vault", None, NOT_FOUND),
        ("api/sessions/<str:session_id>/history", "get"): (f"/api/sessions/{s}/history", None, NOT_FOUND),
        ("api/sessions/<str:session_id>/working-set", "get"): (f"/api/sessions/{s}/working-set", None, NOT_FOUND),
        ("api/sessions/<str:session_id>/working-set", "post"): (
            f"/api/sessions/{s}/working-set",
            {"resolved_terms": {"x": "y"}},
            NOT_FOUND,
        ),
        # Memory
        ("api/memory/recall", "post"): (
            "/api/memory/recall",
            {"query": Q, "agent_id": AGENT, "exclude_session_id": str(s), "threshold": -1.0},
            OWN_DATA,
        ),
        ("api/memories", "get"): (f"/api/memories?agent_id={AGENT}", None, OWN_DATA),
        # Adding a memory by hand makes the caller's own, in the owner's agent and category alike.
        ("api/memories", "post"): (
            "/api/memories",
            {"category": "entities", "key": "vault", "content": "My vault code is 1234.", "agent_id": AGENT},
            {201},
        ),
        ("api/memories/<str:memory_id>", "get"): (f"/api/memories/{m}", None, NOT_FOUND),
        ("api/memories/<str:memory_id>", "patch"): (f"/api/memories/{m}", {"content": "taken"}, NOT_FOUND),
        ("api/memories/<str:memory_id>", "delete"): (f"/api/memories/{m}", None, NOT_FOUND),
        # Documents and the virtual file system
        ("api/documents/upload", "post"): ("/api/documents/upload", "upload", {202, 200}),
        ("api/documents", "get"): ("/api/documents", None, OWN_DATA),
        ("api/documents/<str:doc_id>", "get"): (f"/api/documents/{d}", None, NOT_FOUND),
        ("api/documents/<str:doc_id>", "patch"): (f"/api/documents/{d}", {"title": "taken"}, NOT_FOUND),
        ("api/documents/<str:doc_id>", "delete"): (f"/api/documents/{d}", None, NOT_FOUND),
        ("api/documents/<str:doc_id>/reindex", "post"): (f"/api/documents/{d}/reindex", None, NOT_FOUND),
        ("api/fs/ls", "get"): (f"/api/fs/ls?uri={o.uris['document']}", None, REFUSED_URI),
        ("api/fs/read", "get"): (f"/api/fs/read?uri={o.uris['node']}&level=L2", None, REFUSED_URI),
        # Retrieval and chat
        ("api/retrieval/find", "post"): (
            "/api/retrieval/find",
            {"query": Q, "target_uri": o.uris["document"], "debug_search_trace": True},
            REFUSED_URI,
        ),
        ("api/retrieval/search", "post"): (
            "/api/retrieval/search",
            {"query": Q, "session_id": str(s), "debug_search_trace": True},
            NOT_FOUND,
        ),
        ("api/ai/chat", "post"): ("/api/ai/chat", {"message": Q, "session_id": str(s)}, NOT_FOUND),
        ("api/ai/chat/stream", "post"): ("/api/ai/chat/stream", {"message": Q, "doc_id": str(d)}, NOT_FOUND),
        ("api/^.*$", "get"): (f"/api/sessions/{s}/archives/archive_001", None, NOT_FOUND),
        # The MCP server's OAuth protected-resource metadata: public, the same for everyone (the tools at
        # /mcp are served beside Django and tried in test_the_mcp_tools_let_no_one_else_reach_a_users_objects).
        (".well-known/oauth-protected-resource", "get"): ("/.well-known/oauth-protected-resource", None, OWN_DATA),
        (".well-known/oauth-protected-resource/mcp", "get"): (
            "/.well-known/oauth-protected-resource/mcp",
            None,
            OWN_DATA,
        ),
        # Export and import: the caller's own data alone; another person's import is a 404.
        ("api/export", "get"): ("/api/export", None, OWN_DATA),
        ("api/import", "post"): ("/api/import", {"messages": [{"role": "user", "content": "mine"}]}, {201}),
        ("api/import/<str:import_id>", "get"): (f"/api/import/{o.import_job.id}", None, NOT_FOUND),
        # Pages
        ("", "get"): ("/", None, OWN_DATA),
        ("chat/", "get"): ("/chat/", None, OWN_DATA),
        ("accounts/login/", "get"): ("/accounts/login/", None, OWN_DATA),
        ("accounts/login/", "post"): ("/accounts/login/", "login", OWN_DATA),
        ("accounts/login/", "put"): ("/accounts/login/", None, OWN_DATA),
        ("chat/<uuid:session_id>", "get"): (f"/chat/{s}", None, NOT_FOUND),
        ("documents/", "get"): ("/documents/", None, OWN_DATA),
        ("memories/", "get"): ("/memories/", None, OWN_DATA),
        ("account/", "get"): ("/account/", None, OWN_DATA),
        ("account/", "post"): ("/account/", {"action": "revoke", "token_id": o.api_token.pk}, {302}),
        ("account/password/", "get"): ("/account/password/", None, OWN_DATA),
        ("account/password/", "post"): ("/account/password/", {"old_password": "wrong"}, OWN_DATA),
        ("account/password/", "put"): ("/account/password/", None, OWN_DATA),
        ("settings/", "get"): ("/settings/", None, OWN_DATA),
        # Operators' pages: staff with the permission to view what they show (tested in test_operations).
        ("admin/ops/", "get"): ("/admin/ops/", None, {403}),
        ("admin/ops/traces/<uuid:trace_id>/", "get"): (f"/admin/ops/traces/{o.trace.id}/", None, {403}),
        ("admin/ops/sessions/<uuid:session_id>/", "get"): (f"/admin/ops/sessions/{s}/", None, {403}),
        ("admin/ops/people/", "get"): ("/admin/ops/people/", None, {403}),
        # Joining: the owner's spent invitation is refused to everyone; sign-up is closed by default.
        ("join/<str:key>/", "get"): (f"/join/{o.invitation_key}/", None, NOT_FOUND),
        ("join/<str:key>/", "post"): (
            f"/join/{o.invitation_key}/",
            {"username": "taker", "password1": PASSWORD_TRY, "password2": PASSWORD_TRY},
            NOT_FOUND,
        ),
        ("accounts/sign-up/", "get"): ("/accounts/sign-up/", None, NOT_FOUND),
        ("accounts/sign-up/", "post"): ("/accounts/sign-up/", {"username": "taker"}, NOT_FOUND),
        # Last: signing out ends the caller's session.
        ("accounts/logout/", "get"): ("/accounts/logout/", None, OWN_DATA),
        ("accounts/logout/", "post"): ("/accounts/logout/", None, {302}),
        # Erasure (privacy_app), last of all: it ends the caller's own credentials with their data. Asked
        # first without confirmation (a 400 naming the caller's own counts), then with the caller's name.
        ("api/me/data", "delete"): ("/api/me/data", ERASE_OWN, OWN_DATA),
    }


# Requests beyond one per route: other ways to name the owner's objects in a body or a query string.
def _extra_requests(o: Owner) -> list[tuple[str, str, dict | None, set[int]]]:
    s, d = o.session.id, o.document.id
    return [
        ("get", f"/api/fs/ls?uri={o.uris['user_root']}", None, REFUSED_URI),
        ("get", f"/api/fs/read?uri={o.uris['document']}&level=L1", None, REFUSED_URI),
        ("get", f"/api/fs/read?uri={o.uris['archive']}", None, REFUSED_URI),
        ("get", f"/api/fs/read?uri={o.uris['memory']}", None, REFUSED_URI),
        ("get", f"/api/memories?category=entities&agent_id={AGENT}", None, OWN_DATA),
        ("get", f"/api/sessions?agent_id={AGENT}&page=1", None, OWN_DATA),
        ("get", f"/api/sessions/{s}/messages?cursor={cursor_encode('before', 10**6)}&limit=200", None, NOT_FOUND),
        ("get", f"/api/sessions/{s}/archives?cursor={cursor_encode('after', 0)}", None, NOT_FOUND),
        ("post", "/api/retrieval/find", {"query": Q, "target_uri": o.uris["node"]}, REFUSED_URI),
        ("post", "/api/retrieval/find", {"query": Q, "target_uri": o.uris["user_root"]}, REFUSED_URI),
        ("post", "/api/retrieval/find", {"query": Q, "target_uri": o.uris["archive"]}, REFUSED_URI),
        ("post", "/api/retrieval/find", {"query": Q, "target_uri": o.uris["memory"]}, REFUSED_URI),
        ("post", "/api/retrieval/find", {"query": Q, "mode": "flat", "debug_search_trace": True}, OWN_DATA),
        ("post", "/api/retrieval/find", {"query": Q, "debug_search_trace": True}, OWN_DATA),
        ("post", "/api/memory/recall", {"query": "vault code", "strategy": "keyword"}, OWN_DATA),
        ("post", "/api/memory/recall", {"query": Q, "strategy": "rrf", "threshold": -1.0}, OWN_DATA),
        ("post", "/api/ai/chat", {"message": Q, "doc_id": str(d)}, NOT_FOUND),
        ("post", "/api/ai/chat", {"message": Q, "debug_search_trace": True}, OWN_DATA),
        ("post", "/api/ai/chat/stream", {"message": Q, "session_id": str(s)}, NOT_FOUND),
        ("post", "/api/ai/chat/stream", {"message": Q, "debug_search_trace": True}, OWN_DATA),
        ("post", "/v1/chat/completions", {"model": "recollect", "messages": [{"role": "user", "content": Q}]}, {200}),
        (
            "post",
            "/v1/chat/completions",
            {"model": "recollect:their-own", "messages": [{"role": "user", "content": Q}], "stream": True},
            OWN_DATA,
        ),
        (
            "post",
            "/v1/chat/completions",
            {
                "model": "recollect",
                "messages": [{"role": "user", "content": Q}],
                "metadata": {"session_id": str(s)},
                "stream": True,
            },
            NOT_FOUND,
        ),
        # The account's form, posted as a browser posts it (the forms that end the caller's own
        # credentials are in test_the_account_forms_end_the_callers_credentials_alone).
        ("post", "/account/", {FORM: True, "action": "revoke", "token_id": o.api_token.pk}, {302}),
    ]


# Anyone may ask these; none answers with a user's data. (An unknown API path is a 404 for all alike.)
PUBLIC = {
    "api/health",
    "api/auth/token",
    "api/schema/",
    "api/docs/",
    "api/redoc/",
    "api/^.*$",
    ".well-known/oauth-protected-resource",
    ".well-known/oauth-protected-resource/mcp",
    "v1/^.*$",
}
PAGES = {
    "",
    "chat/",
    "accounts/login/",
    "accounts/logout/",
    "documents/",
    "memories/",
    "account/",
    "account/password/",
    "settings/",
}
# Pages about one object: the way to the sign-in page for anonymous callers, a 404 for anyone else's.
OBJECT_PAGES = {"chat/<uuid:session_id>"}
# The operators' pages: the way to the admin's sign-in page for anyone who is not staff, a refusal for
# staff who were not granted the permission to view what they show.
OPERATOR_PAGES = {
    "admin/ops/",
    "admin/ops/traces/<uuid:trace_id>/",
    "admin/ops/sessions/<uuid:session_id>/",
    "admin/ops/people/",
}
# Pages anyone may open, refusing alike whatever they are asked about: a spent link, a closed sign-up.
JOINING = {"join/<str:key>/", "accounts/sign-up/"}


def _routes() -> dict[str, Any]:
    """Every route of the site as the resolver spells it (the admin as one), with its view."""
    found: dict[str, Any] = {}

    def walk(patterns, prefix: str) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                if route == "admin/":
                    found[route] = pattern
                else:
                    walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern):
                found[route] = pattern.callback

    walk(get_resolver().url_patterns, "")
    return found


def _methods(callback) -> set[str]:
    view_class = getattr(callback, "view_class", None)
    if view_class is None:  # a function view (the API's 404) answers any method alike
        return {"get"}
    return {m for m in view_class.http_method_names if m not in ("options", "head") and hasattr(view_class, m)}


def test_the_matrix_has_a_row_for_every_route_and_method():
    rows = set(_rows(_owner()))
    served = {
        (route, method) for route, callback in _routes().items() if route != "admin/" for method in _methods(callback)
    }
    assert served - rows == set(), "routes or methods without a row in the isolation matrix"
    assert rows - served == set(), "rows for routes or methods the site no longer serves"
    assert "admin/" in _routes()  # walked by the admin tests below


# --- running it ------------------------------------------------------------------------------------


def _caller(kind: str) -> tuple[Client, str]:
    """A client for the kind of caller, and its token: a stranger and staff have both a token and a
    browser session (the pages use the session, the API the token)."""
    if kind == "anonymous":
        return Client(), ""
    user = UserFactory(is_staff=kind == "staff")
    _bystander(user)
    token = Token.objects.create(user=user).key
    client = Client(headers={"Authorization": f"Token {token}"})
    client.force_login(user)
    return client, token


OWNER_PASSWORD = "the owner's own long passphrase"
# A body with this key is posted as a form (the account page's), not as JSON.
FORM = "(form)"
# This body erases the caller's own data: refused unconfirmed, then confirmed with the caller's username.
ERASE_OWN = "(erase own data)"


def _send(client: Client, token: str, method: str, path: str, body, o: Owner) -> tuple[int, bytes]:
    if isinstance(body, dict) and body.get(FORM):
        response = client.post(path, {key: value for key, value in body.items() if key != FORM})
    elif body == "upload":
        upload = SimpleUploadedFile("notes.md", b"# Notes\n\nMy own kettle notes.\n", content_type="text/markdown")
        response = client.post(path, {"file": upload})
    elif body == ERASE_OWN:
        return _erase_own(client, path)
    elif body == "login":
        response = client.post(path, {"username": o.user.username, "password": "wrong"})
    elif path.startswith("/api/ai/chat/stream") or (isinstance(body, dict) and body.get("stream")):
        return _stream(token, path, body)
    elif body is not None:
        response = getattr(client, method)(path, data=json.dumps(body), content_type="application/json")
    else:
        response = getattr(client, method)(path)
    if response.streaming:  # an export: the whole file is what must hold nothing of the owner's
        return response.status_code, _unzipped(b"".join(response.streaming_content))
    return response.status_code, response.content


def _unzipped(data: bytes) -> bytes:
    """Every file of a zip answer, unpacked (a marker in a deflated member is not found as is)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return b"".join(archive.read(name) for name in archive.namelist())


def _erase_own(client: Client, path: str) -> tuple[int, bytes]:
    refused = client.delete(path)
    if refused.status_code != 400:
        return refused.status_code, refused.content
    me = client.get("/api/me").json()
    response = client.delete(f"{path}?confirm={me['username']}")
    return response.status_code, refused.content + response.content


def _stream(token: str, path: str, body) -> tuple[int, bytes]:
    headers = {"Authorization": f"Token {token}"} if token else {}

    async def run():
        response = await AsyncClient().post(path, body, content_type="application/json", headers=headers)
        if not response.streaming:
            return response.status_code, response.content
        return response.status_code, b"".join([chunk async for chunk in response.streaming_content])

    return async_to_sync(run)()


def _intact(o: Owner) -> None:
    assert ChatSession.objects.filter(id=o.session.id, title=f"{MARKER} planning").exists()
    assert Message.objects.filter(session=o.session).count() == 2
    assert Archive.objects.filter(id=o.archive.id).exists()
    assert Memory.objects.filter(id=o.memory.id).exists()
    assert Document.objects.filter(id=o.document.id, status="ready").exists()
    assert DocumentNode.objects.filter(document=o.document).count() == DocumentNode.objects.filter(owner=o.user).count()
    assert SearchTrace.objects.filter(id=o.trace.id).exists()
    assert ApiToken.objects.filter(id=o.api_token.id).exists()
    assert ApiToken.objects.filter(owner=o.user, kind=ApiToken.Kind.SIGN_IN).exists()
    assert get_user_model().objects.get(pk=o.user.pk).password == o.user.password
    assert Invitation.objects.get(used_by=o.user).note == f"{MARKER} family"
    assert not type(o.user).objects.filter(username="taker").exists()
    assert sessions.working_set_get(session_id=str(o.session.id)).as_dict()["resolved_terms"]
    assert ImportJob.objects.filter(id=o.import_job.id, owner=o.user).exists()


@pytest.mark.parametrize("kind", ["anonymous", "stranger", "staff"])
def test_no_route_lets_anyone_else_reach_or_read_a_users_objects(kind):
    o = _owner()
    client, token = _caller(kind)
    # The extra requests first: the matrix ends by signing out.
    requests = [
        ("account/" if path == "/account/" else "(more)", method, path, body, allowed)
        for method, path, body, allowed in _extra_requests(o)
    ]
    requests += [(route, method, *row) for (route, method), row in _rows(o).items()]
    problems = []
    for route, method, path, body, allowed in requests:
        if route in PAGES:
            allowed = {200, 302}  # a page, or the way to the sign-in page
        elif route in OBJECT_PAGES and kind == "anonymous":
            allowed = {302}
        elif route in OPERATOR_PAGES:
            allowed = {403} if kind == "staff" else {302}
        elif route in JOINING or allowed == MOVED:
            pass  # the row's answer, for anonymous callers too
        elif kind == "anonymous" and route not in PUBLIC:
            allowed = {401}
        status, content = _send(client, token, method, path, body, o)
        if status not in allowed:
            problems.append(f"{method.upper()} {path}: {status}, expected {sorted(allowed)}")
        if MARKER.lower().encode() in content.lower():
            problems.append(f"{method.upper()} {path}: the other user's content is in the answer")
    assert not problems, "\n".join(problems)
    _intact(o)


@pytest.mark.parametrize("kind", ["stranger", "staff"])
def test_the_account_forms_end_the_callers_credentials_alone(kind):
    o = _owner()
    o.user.set_password(OWNER_PASSWORD)
    o.user.save()  # which rotates the owner's sign-in token: a new one is made after it
    o.user.refresh_from_db()
    Token.objects.create(user=o.user)
    client, token = _caller(kind)
    for form in (
        {"action": "revoke-sign-in"},
        {"action": "revoke-all"},
        {"action": "sign-out-everywhere", "password": OWNER_PASSWORD},  # the owner's password, not theirs
    ):
        assert client.post("/account/", form).status_code == 302
    assert Client(headers={"Authorization": f"Token {token}"}).get("/api/sessions").status_code == 401
    _intact(o)


@pytest.mark.parametrize("kind", ["anonymous", "stranger", "staff"])
def test_the_chat_websocket_lets_no_one_else_reach_or_read_a_users_objects(kind):
    o = _owner()
    token = _caller(kind)[1]

    async def run():
        communicator = WebsocketCommunicator(application, f"/ws/chat/?token={token}" if token else "/ws/chat/")
        connected, code = await communicator.connect(timeout=10)
        if not connected:
            return code, []
        frames = []
        for body in (
            {"message": Q, "session_id": str(o.session.id)},
            {"message": Q, "doc_id": str(o.document.id)},
            {"message": Q, "debug_search_trace": True},
        ):
            await communicator.send_to(text_data=json.dumps({"type": "chat", **body}))
            while True:
                frame = await communicator.receive_from(timeout=60)
                frames.append(frame)
                if json.loads(frame)["type"] in ("done", "error"):
                    break
        await communicator.disconnect()
        return None, frames

    code, frames = async_to_sync(run)()
    if kind == "anonymous":
        assert code == 4401 and not frames
    else:
        events = [json.loads(frame) for frame in frames]
        refusals = [e for e in events if e["type"] == "error"]
        assert [e["code"] for e in refusals[:2]] == ["session_not_found", "document_not_found"]
        assert events[-1]["type"] == "done"
        assert not any(MARKER.lower() in frame.lower() for frame in frames)
    _intact(o)


# --- the MCP server --------------------------------------------------------------------------------


def _mcp_calls(o: Owner) -> list[tuple[str, dict, bool]]:
    """Every MCP tool, with the owner's ids and URIs wherever it takes one: (tool, arguments, whether the
    caller is refused; otherwise it answers about the caller's own data)."""
    s, m = str(o.session.id), o.memory.id
    said = [{"role": "user", "content": "injected"}]
    return [
        ("recall", {"query": Q, "exclude_session_id": s, "max_results": 50}, False),
        ("recall", {"query": "vault code"}, False),
        ("find", {"query": Q}, False),
        *[("find", {"query": Q, "target_uri": o.uris[uri]}, True) for uri in ("document", "node", "user_root")],
        ("search", {"query": Q, "session_id": s}, True),
        *[("read", {"uri": o.uris[uri], "level": "L2"}, True) for uri in ("document", "node", "memory", "archive")],
        ("read", {"uri": o.uris["document"], "level": "L0"}, True),
        ("ls", {}, False),
        *[("ls", {"uri": o.uris[uri]}, True) for uri in ("document", "node", "user_root")],
        ("remember", {"messages": said, "session_id": s}, True),
        ("remember", {"messages": said}, False),  # a new session of the caller's own
        ("commit", {"session_id": s}, True),
        ("forget", {"memory_id": m}, True),
    ]


@pytest.mark.parametrize("kind", ["anonymous", "stranger", "staff"])
def test_the_mcp_tools_let_no_one_else_reach_a_users_objects(kind):
    o = _owner()
    token = _caller(kind)[1]
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    calls = _mcp_calls(o)

    async def run():
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost", headers=headers) as client:
            answers = []
            for number, (tool, arguments, _) in enumerate(calls):
                body = {"jsonrpc": "2.0", "id": number, "method": "tools/call"}
                body["params"] = {"name": tool, "arguments": arguments}
                answers.append(await client.post("/mcp", json=body))
            return answers

    problems = []
    for (tool, arguments, refused), answer in zip(calls, async_to_sync(run)(), strict=True):
        if MARKER.lower() in answer.text.lower():
            problems.append(f"{tool} {arguments}: the other user's content is in the answer")
        if kind == "anonymous":
            if answer.status_code != 401:
                problems.append(f"{tool} {arguments}: {answer.status_code}, expected 401")
            continue
        result = answer.json().get("result") or {}
        if answer.status_code != 200 or result.get("isError") is not refused:
            problems.append(f"{tool} {arguments}: {answer.status_code} {answer.text[:300]}")
    assert not problems, "\n".join(problems)
    _intact(o)


# --- the admin -------------------------------------------------------------------------------------

ADMIN_MODELS = [ChatSession, Message, Archive, Memory, Document, DocumentNode, SearchTrace]


def test_staff_without_superuser_rights_see_no_users_content_in_the_admin():
    o = _owner()
    staff = UserFactory(is_staff=True)
    client = Client()
    client.force_login(staff)
    objects = {
        ChatSession: o.session,
        Message: o.message,
        Archive: o.archive,
        Memory: o.memory,
        Document: o.document,
        DocumentNode: o.node,
        SearchTrace: o.trace,
    }
    index = client.get("/admin/")
    assert index.status_code == 200 and MARKER.encode() not in index.content
    problems = []
    for model in ADMIN_MODELS:
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        for path in (
            base,
            f"{base}?q={MARKER}",
            f"{base}{objects[model].pk}/change/",
            f"{base}{objects[model].pk}/delete/",
        ):
            response = client.get(path)
            if response.status_code != 403 or MARKER.encode() in response.content:
                problems.append(f"{path}: {response.status_code}")
    assert not problems, "\n".join(problems)


def test_a_staff_member_sees_a_models_content_only_once_granted_its_view_permission():
    """Django's own rule, kept on purpose: a permission granted in the admin is the explicit allowance."""
    o = _owner()
    staff = UserFactory(is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_message"))
    client = Client()
    client.force_login(staff)
    assert MARKER.encode() in client.get("/admin/sessions_app/message/").content
    assert client.get("/admin/sessions_app/memory/").status_code == 403
    assert client.get(f"/admin/sessions_app/chatsession/{o.session.pk}/change/").status_code == 403
