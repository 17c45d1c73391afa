"""The MCP server at /mcp, driven by the official `mcp` SDK's client over streamable HTTP against a live
Daphne: the current revision (per-request, no handshake) and the 2025 revisions' initialize handshake,
every tool on the caller's own data and on nobody else's, bad arguments, a foreign page's Origin, and a
client without a key discovering that it needs one."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from asgiref.sync import async_to_sync
from django.core.cache import cache
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from accounts_app.tokens import api_token_create
from config.asgi import application
from sessions_app.models import ChatSession, Memory, Message
from tests.factories import ChatSessionFactory, MemoryFactory, MessageFactory, UserFactory, index_document
from tests.helpers import server_env, start_daphne, stop_processes
from tests.samples import KETTLE

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = {"recall", "find", "search", "read", "ls", "remember", "commit", "forget"}
MARKER = "Quillmarrow"
HANDSHAKE_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")


@pytest.fixture(scope="module")
def daphne(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        base, process = start_daphne(env=server_env(), log=Path(tempfile.mkdtemp(prefix="recollect-mcp-")) / "d.log")
    yield base
    stop_processes([process])


def _key(user) -> str:
    return api_token_create(user=user, name="mcp")[1]


def _client(base: str, key: str | None, **options) -> Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return Client(
        streamable_http_client(f"{base}/mcp", http_client=httpx2.AsyncClient(headers=headers, timeout=60)), **options
    )


def _calls(base: str, key: str, calls: list[tuple[str, dict]], **options) -> tuple[Any, list[Any]]:
    """Opens one client, lists the tools and makes ``calls`` in order; the tools and each call's result."""

    async def run():
        async with _client(base, key, **options) as client:
            tools = await client.list_tools()
            return tools, [await client.call_tool(name, arguments) for name, arguments in calls]

    return async_to_sync(run)()


def _answer(result) -> dict:
    assert not result.is_error, result.content[0].text
    return result.structured_content


def _error(result) -> str:
    assert result.is_error
    return result.content[0].text


def test_a_client_lists_the_tools_with_typed_inputs_and_hints(daphne):
    tools, _ = _calls(daphne, _key(UserFactory()), [])
    by_name = {tool.name: tool for tool in tools.tools}
    assert set(by_name) == TOOLS
    for tool in by_name.values():
        assert tool.description and tool.input_schema["additionalProperties"] is False
        assert all(spec.get("description") for spec in tool.input_schema["properties"].values()), tool.name
    assert by_name["forget"].annotations.destructive_hint is True
    assert {name for name, tool in by_name.items() if tool.annotations.read_only_hint} == {
        "recall",
        "find",
        "search",
        "read",
        "ls",
    }
    assert by_name["read"].input_schema["properties"]["level"]["enum"] == ["L0", "L1", "L2"]


def test_remember_commit_search_recall_and_forget_work_on_the_callers_own_data(daphne):
    user = UserFactory(username="ana")
    key = _key(user)
    said = [
        {"role": "user", "content": "I'm allergic to peanuts, and my sister Ines lives in Porto."},
        {"role": "assistant", "content": "Noted: no peanuts, and Ines lives in Porto."},
    ]
    _, (remembered,) = _calls(daphne, key, [("remember", {"messages": said, "title": "About me"})])
    remembered = _answer(remembered)
    session_id = remembered["session_id"]
    assert remembered["created_session"] is True and "ana" in remembered["scope"]
    assert list(Message.objects.filter(session_id=session_id).values_list("content", flat=True)) == [
        m["content"] for m in said
    ]
    _, (committed, searched, recalled) = _calls(
        daphne,
        key,
        [
            ("commit", {"session_id": session_id}),
            ("search", {"query": "Where does my sister live?", "session_id": session_id}),
            ("recall", {"query": "peanuts allergy"}),
        ],
    )
    committed = _answer(committed)
    assert committed["committed"] is True and committed["archive"]["message_count"] == 2
    assert committed["memories"], "a commit of these turns draws memories"
    searched = _answer(searched)
    assert session_id in searched["scope"] and "memories" in searched["scope"]
    assert any("Porto" in (hit.get("content") or hit["text"]) for hit in searched["results"])
    recalled = _answer(recalled)
    assert "earlier conversation" in recalled["scope"]
    assert any("peanuts" in m["content"] for m in recalled["messages"])

    memory_id = committed["memories"][0]["memory_id"]
    _, (read, forgotten, again) = _calls(
        daphne,
        key,
        [
            ("read", {"uri": committed["memories"][0]["uri"], "level": "L2"}),
            ("forget", {"memory_id": memory_id}),
            ("forget", {"memory_id": memory_id}),
        ],
    )
    assert _answer(read)["text"] == committed["memories"][0]["content"]
    assert _answer(forgotten)["forgotten"]["memory_id"] == memory_id
    assert not Memory.objects.filter(id=memory_id).exists()
    assert "not_found" in _error(again)


def test_ls_read_and_find_open_the_callers_documents(daphne):
    user = UserFactory()
    document = index_document(user, "kettle.md", KETTLE)
    _, (listed, found) = _calls(
        daphne, _key(user), [("ls", {}), ("find", {"query": "How do I descale the kettle?", "limit": 3})]
    )
    listed, found = _answer(listed), _answer(found)
    assert [child["uri"] for child in listed["children"]] == [document.uri]
    assert found["results"] and found["results"][0]["uri"].startswith(document.uri)
    assert "documents only" in found["scope"] and listed["uri"] in found["scope"]
    _, (below, abstract, full) = _calls(
        daphne,
        _key(user),
        [
            ("ls", {"uri": document.uri}),
            ("read", {"uri": document.uri, "level": "L0"}),
            ("read", {"uri": document.uri, "level": "L2"}),
        ],
    )
    assert _answer(below)["children"]
    assert _answer(abstract)["level"] == "L0" and _answer(abstract)["text"]
    assert "descal" in _answer(full)["text"].lower()


def test_another_users_key_reaches_nothing_of_the_owners(daphne):
    owner = UserFactory()
    session = ChatSessionFactory(owner=owner, title=f"{MARKER} plans")
    MessageFactory(session=session, role="user", content=f"The {MARKER} vault code is 7741.")
    memory = MemoryFactory(owner=owner, content=f"The {MARKER} vault code is 7741.")
    document = index_document(owner, "vault.md", f"# {MARKER} vault\n\nThe {MARKER} vault opens with 7741.\n".encode())
    stranger_key = _key(UserFactory())
    calls = [
        ("recall", {"query": "vault code"}),
        ("find", {"query": "vault code"}),
        ("find", {"query": "vault code", "target_uri": document.uri}),
        ("search", {"query": "vault code", "session_id": str(session.id)}),
        ("read", {"uri": document.uri, "level": "L2"}),
        ("read", {"uri": memory.uri, "level": "L2"}),
        ("ls", {"uri": document.uri}),
        ("ls", {}),
        ("remember", {"session_id": str(session.id), "messages": [{"role": "user", "content": "injected"}]}),
        ("commit", {"session_id": str(session.id)}),
        ("forget", {"memory_id": memory.id}),
    ]
    _, results = _calls(daphne, stranger_key, calls)
    for (name, _), result in zip(calls, results, strict=True):
        text = json.dumps([c.model_dump() for c in result.content])
        assert MARKER.lower() not in text.lower(), f"{name} showed the owner's data"
    assert [r.is_error for r in results] == [False, False, True, True, True, True, True, False, True, True, True]
    assert all("not_found" in _error(r) or "not found" in _error(r).lower() for r in results if r.is_error)
    assert Message.objects.filter(session=session).count() == 1 and Memory.objects.filter(id=memory.id).exists()
    assert ChatSession.objects.get(id=session.id).archives.count() == 0


def test_unknown_and_ill_typed_arguments_are_tool_errors_not_server_errors(daphne):
    key = _key(UserFactory())
    _, results = _calls(
        daphne,
        key,
        [
            ("find", {"query": "kettle", "target_url": "viking://resources/users/1"}),
            ("find", {"query": "kettle", "limit": "many"}),
            ("read", {"uri": "viking://resources/users/1/documents/x", "level": "L9"}),
            ("search", {"query": "kettle", "session_id": "not-a-uuid"}),
            ("remember", {"messages": [{"role": "wizard", "content": "hi"}]}),
            ("remember", {"messages": []}),
            ("forget", {}),
            ("read", {"uri": "https://example.org/"}),
            ("no_such_tool", {}),
        ],
    )
    errors = [_error(result) for result in results]
    assert "target_url" in errors[0] and "limit" in errors[1] and "level" in errors[2]
    assert "session_id" in errors[3] and "role" in errors[4] and "messages" in errors[5]
    assert "memory_id" in errors[6] and "viking://" in errors[7] and "no_such_tool" in errors[8]


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_clients_of_the_2025_revisions_are_answered_in_their_own_version(daphne, version):
    key = _key(UserFactory())
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"}

    def post(body: dict, **extra: str) -> httpx.Response:
        return httpx.post(f"{daphne}/mcp", json=body, headers={**headers, **extra}, timeout=30)

    init = post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        }
    )
    assert init.status_code == 200 and init.json()["result"]["protocolVersion"] == version
    assert "mcp-session-id" not in init.headers  # stateless: any process answers any request
    later = {} if version == "2025-03-26" else {"MCP-Protocol-Version": version}
    assert post({"jsonrpc": "2.0", "method": "notifications/initialized"}, **later).status_code == 202
    listed = post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, **later).json()
    assert {tool["name"] for tool in listed["result"]["tools"]} == TOOLS
    called = post(
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "ls", "arguments": {}}}, **later
    ).json()
    assert called["result"]["isError"] is False


def test_the_sdk_client_speaks_the_handshake_too(daphne):
    tools, (listed,) = _calls(daphne, _key(UserFactory()), [("ls", {})], mode="legacy")
    assert {tool.name for tool in tools.tools} == TOOLS and _answer(listed)["children"] == []


def test_without_a_key_the_client_is_told_where_to_learn_how_to_sign_in(daphne):
    answer = httpx.post(f"{daphne}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30)
    assert answer.status_code == 401
    challenge = answer.headers["www-authenticate"]
    metadata_url = f"{daphne}/.well-known/oauth-protected-resource/mcp"
    assert challenge == f'Bearer resource_metadata="{metadata_url}"'
    for url in (metadata_url, f"{daphne}/.well-known/oauth-protected-resource"):
        metadata = httpx.get(url, timeout=30).json()
        assert metadata["resource"] == f"{daphne}/mcp" and metadata["bearer_methods_supported"] == ["header"]
        assert metadata["resource_documentation"] == f"{daphne}/account/"
    wrong = httpx.post(f"{daphne}/mcp", json={}, headers={"Authorization": "Bearer rk_not-a-key"}, timeout=30)
    assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]

    async def connect():
        async with _client(daphne, None):
            pass

    with pytest.raises(BaseException) as refused:
        async_to_sync(connect)()
    assert "An API key is needed" in repr(refused.value)  # the server's own words reach the client


def test_a_page_of_another_origin_is_refused_and_this_sites_own_is_not(daphne):
    key = _key(UserFactory())
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"}
    for origin in ("http://evil.example", "http://127.0.0.1:1", "null"):
        answer = httpx.post(f"{daphne}/mcp", json=body, headers={**headers, "Origin": origin}, timeout=30)
        assert answer.status_code == 403, origin
    rebound = httpx.post(f"{daphne}/mcp", json=body, headers={**headers, "Host": "evil.example"}, timeout=30)
    assert rebound.status_code == 400
    own = httpx.post(
        f"{daphne}/mcp",
        json=body,
        headers={**headers, "Origin": daphne, "MCP-Protocol-Version": "2025-06-18"},
        timeout=30,
    )
    assert own.status_code == 200, own.text


def test_a_revoked_key_stops_working_at_once(daphne):
    user = UserFactory()
    token, key = api_token_create(user=user, name="mcp")
    _calls(daphne, key, [])
    token.delete()
    with pytest.raises(BaseException) as refused:
        _calls(daphne, key, [])
    assert "The API key is not valid" in repr(refused.value)


def test_wrong_keys_are_throttled_per_address_like_the_websockets(settings):
    rates = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {**rates, "ws_token": "3/min"}}
    cache.clear()
    key = _key(UserFactory())
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}

    async def statuses(keys: list[str]) -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost", headers=accept) as client:
            return [await client.post("/mcp", json=body, headers={"Authorization": f"Bearer {k}"}) for k in keys]

    answers = async_to_sync(statuses)([key, "rk_wrong-1", "rk_wrong-2", "rk_wrong-3", key])
    assert [a.status_code for a in answers] == [200, 401, 401, 401, 429]
    assert answers[-1].headers["retry-after"] == "60"
    cache.clear()
    assert async_to_sync(statuses)([key])[0].status_code == 200
