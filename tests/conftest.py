import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import UserFactory, index_document
from tests.samples import KETTLE, ROUTER


@pytest.fixture(scope="session", autouse=True)
def _fresh_cache():
    """The test Redis database starts empty: ids restart with each test database, cached answers must too."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def _fresh_local_figures():
    """Each test starts from what Redis remembers: figures a process keeps in its own memory
    (``foundation.caching``) would otherwise carry one test's library into the next."""
    from foundation import caching

    caching.forget_all_local()


@pytest.fixture
def user(db):
    return UserFactory()


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def auth_client(user) -> APIClient:
    """A client authenticated the way integrations are: with a DRF token."""
    client = APIClient()
    token = Token.objects.create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def fake_llm():
    """A loopback OpenAI-compatible server; configure ``settings`` to point litellm at ``fake_llm.url``."""
    from tests import llm_server

    fake = llm_server.FakeLLM()
    server = llm_server.start(fake)
    yield fake
    server.shutdown()


@pytest.fixture
def hosted_llm(fake_llm, settings):
    """LLM_MODEL set: summaries, overviews and memories come from the loopback server through litellm."""
    settings.LLM_MODEL = "openai/test-chat"
    settings.LLM_API_BASE = fake_llm.url
    settings.LLM_API_KEY = "sk-test"
    settings.LLM_MAX_RETRIES = 0
    settings.LLM_TIMEOUT_S = 10
    return fake_llm


@pytest.fixture
def library(user):
    """Two indexed product manuals of the signed-in user."""
    return {"router": index_document(user, "router.md", ROUTER), "kettle": index_document(user, "kettle.md", KETTLE)}


@pytest.fixture
def staff_api(api_client, db):
    """The API as a staff member calls it: health answers with versions, errors and backlogs."""
    api_client.force_authenticate(UserFactory(is_staff=True))
    return api_client


@pytest.fixture
def pool_with_room(transactional_db, monkeypatch):
    """A read beside (``foundation.db.read_beside``) finds a connection to spare, however much of this
    process's pool the threads of earlier tests still hold: the pool may open one more, and says it has room."""
    from django.db import connections

    from foundation import db

    pool = connections["default"].pool
    min_size, max_size = pool.min_size, pool.max_size
    pool.resize(min_size, max_size + 1)
    monkeypatch.setattr(db, "_spare_connections", lambda: max_size)
    yield pool
    pool.resize(min_size, max_size)
