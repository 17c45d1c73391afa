"""Nearest-neighbour search under a tenant filter: the index is used where it pays, and no tenant,
however small, loses neighbours to post-filtering."""

import math
import random

import pytest
from django.conf import settings
from django.db import connection
from django.db.models import F, FloatField, Value
from django.db.models.functions import Cast
from django.test.utils import CaptureQueriesContext
from pgvector.django import CosineDistance

from foundation.vectors import nearest_neighbours
from sessions_app.models import Message
from tests.factories import ChatSessionFactory, UserFactory

MODEL = "test-model"
TENANT_SIZES = {"big": 4000, "medium": 1200, "small": 12}
EXACT_CAP = 500  # below this many filtered rows, the selector ranks exactly


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def _cosine_distance(a: list[float], b: list[float]) -> float:
    return 1.0 - sum(x * y for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
def corpus(django_db_setup, django_db_blocker):
    """Clustered unit vectors (as real embeddings are) spread over three tenants of very different sizes."""
    dims = settings.EMBEDDING_DIMENSIONS
    rng = random.Random(20261122)
    centers = [_unit([rng.gauss(0, 1) for _ in range(dims)]) for _ in range(40)]
    noise = 0.6 / math.sqrt(dims)

    def sample() -> list[float]:
        center = rng.choice(centers)
        return _unit([c + rng.gauss(0, noise) for c in center])

    with django_db_blocker.unblock():
        tenants = {}
        rows = []
        for name, size in TENANT_SIZES.items():
            session = ChatSessionFactory(owner=UserFactory())
            tenants[name] = session.owner
            rows += [
                Message(
                    session=session,
                    owner=session.owner,
                    seq=i + 1,
                    role="user",
                    content=f"{name} {i}",
                    embedding=sample(),
                    embedding_model=MODEL,
                )
                for i in range(size)
            ]
        # Rows of another embedding model are never comparable, even when nearer.
        other = ChatSessionFactory(owner=tenants["small"])
        rows += [
            Message(
                session=other,
                owner=other.owner,
                seq=i + 1,
                role="user",
                content=f"other {i}",
                embedding=sample(),
                embedding_model="another-model",
            )
            for i in range(20)
        ]
        Message.objects.bulk_create(rows, batch_size=500)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE sessions_app_message")
        yield {"tenants": tenants, "query": sample(), "rng": rng, "sample": sample}
        for user in tenants.values():
            user.delete()


def _exact_top(owner, query: list[float], k: int) -> list[int]:
    rows = Message.objects.filter(owner=owner, embedding_model=MODEL).values_list("id", "embedding")
    ranked = sorted(rows, key=lambda row: _cosine_distance(query, list(row[1])))
    return [row_id for row_id, _ in ranked[:k]]


def _search(owner, query, k):
    return nearest_neighbours(queryset=Message.objects.filter(owner=owner), embedding=query, model_name=MODEL, limit=k)


def _plan_of_search(owner, query, k) -> str:
    """The plan of the statement the selector ran last, as EXPLAIN shows it."""
    with CaptureQueriesContext(connection) as queries:
        _search(owner, query, k)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + queries.captured_queries[-1]["sql"])
        return "\n".join(row[0] for row in cursor.fetchall())


def _plan(owner, query, k, *, exact: bool) -> str:
    """The plan of the query the selector runs on each path, as EXPLAIN shows it."""
    rows = Message.objects.filter(owner=owner, embedding__isnull=False, embedding_model=MODEL).annotate(
        distance=CosineDistance("embedding", query)
    )
    order = Cast(F("distance") + Value(0.0), FloatField()) if exact else F("distance")
    return rows.order_by(order.asc())[:k].explain()


@pytest.fixture
def exact_cap(settings):
    settings.VECTOR_EXACT_SCAN_MAX_ROWS = EXACT_CAP


@pytest.mark.django_db
def test_a_large_tenant_is_answered_by_the_hnsw_index(corpus, exact_cap):
    big = corpus["tenants"]["big"]
    with CaptureQueriesContext(connection) as queries:
        found = _search(big, corpus["query"], 10)
    assert len(found) == 10
    rankings = [query["sql"] for query in queries.captured_queries if "ORDER BY distance" in query["sql"]]
    assert len(rankings) == 1 and ") + 0 AS distance" not in rankings[0], "a large tenant took the exact path"
    assert "message_embedding_hnsw" in _plan_of_search(big, corpus["query"], 10)


@pytest.mark.django_db
def test_a_small_tenant_among_thousands_gets_exactly_the_true_top_10(corpus, exact_cap):
    small = corpus["tenants"]["small"]
    for _ in range(5):
        query = corpus["sample"]()
        found = list(_search(small, query, 10))
        assert [pk for pk, _ in found] == _exact_top(small, query, 10)
        assert set(
            Message.objects.filter(pk__in=[pk for pk, _ in found]).values_list("embedding_model", flat=True)
        ) == {MODEL}
    assert "hnsw" not in _plan_of_search(small, corpus["query"], 10)


@pytest.mark.django_db
def test_a_filter_through_a_relation_still_narrows_the_neighbours(corpus, exact_cap):
    small = corpus["tenants"]["small"]
    query = corpus["sample"]()
    found = nearest_neighbours(
        queryset=Message.objects.filter(session__owner=small), embedding=query, model_name=MODEL, limit=10
    )
    assert [pk for pk, _ in found] == _exact_top(small, query, 10)


@pytest.mark.django_db
def test_an_index_scan_that_comes_back_short_is_completed_exactly(corpus, exact_cap):
    medium = corpus["tenants"]["medium"]
    with connection.cursor() as cursor:
        # The index path's limits reached on a very selective filter, as on a table of millions.
        cursor.execute("SET LOCAL hnsw.iterative_scan = off")
        cursor.execute("SET LOCAL enable_sort = off")
    found = _search(medium, corpus["query"], 60)
    assert [pk for pk, _ in found] == _exact_top(medium, corpus["query"], 60)


@pytest.mark.django_db
def test_distances_are_cosine_distances(corpus, exact_cap):
    small = corpus["tenants"]["small"]
    pk, distance = _search(small, corpus["query"], 1)[0]
    embedding = Message.objects.get(pk=pk).embedding
    assert distance == pytest.approx(_cosine_distance(corpus["query"], list(embedding)), abs=1e-5)


@pytest.mark.django_db
def test_iterative_scanning_keeps_a_minority_tenant_from_losing_neighbours(corpus, exact_cap):
    medium = corpus["tenants"]["medium"]
    query = corpus["query"]
    k = 60
    with connection.cursor() as cursor:
        # At this table size the planner rightly ranks 1,200 rows by sorting them; on a table of
        # millions it walks the index instead. Disallowing the sort reproduces that plan here.
        cursor.execute("SET LOCAL enable_sort = off")
    assert "message_embedding_hnsw" in _plan(medium, query, k, exact=False)

    def index_path() -> list[int]:
        rows = Message.objects.filter(owner=medium, embedding__isnull=False, embedding_model=MODEL)
        rows = rows.annotate(distance=CosineDistance("embedding", query)).order_by("distance")[:k]
        return [m.id for m in rows]

    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = off")
    without_iteration = index_path()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = strict_order")
    found = index_path()

    # Plain HNSW post-filtering returns whatever survives the tenant filter among ef_search candidates.
    assert len(without_iteration) < k
    assert len(found) == k
    recall = len(set(found) & set(_exact_top(medium, query, k))) / k
    assert recall >= 0.9


def _side_table_values(model) -> list[int]:
    """The sizes of the values of ``model``'s table that PostgreSQL keeps in its side table (TOAST)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = %s::regclass", [model._meta.db_table]
        )
        (toast,) = cursor.fetchone()
        cursor.execute(f"SELECT sum(octet_length(chunk_data)) FROM {toast} GROUP BY chunk_id")  # noqa: S608
        return [size for (size,) in cursor.fetchall()]


@pytest.mark.django_db
def test_a_vector_stays_on_its_rows_page_beside_a_long_text():
    """Ranking reads each candidate's vector: from the row's own page, not from two or three more."""
    dims = settings.EMBEDDING_DIMENSIONS
    vector_bytes = 4 * dims + 8
    session = ChatSessionFactory(owner=UserFactory())
    rng = random.Random(7)
    words = " ".join(
        rng.choice(["kettle", "descale", "warranty", "filter", "router", "lisbon"]) + str(i) for i in range(900)
    )
    for seq, content in enumerate([words[:2000], words], start=1):  # a passage's length, and much longer
        Message.objects.create(
            session=session,
            owner=session.owner,
            seq=seq,
            role="assistant",
            content=content,
            embedding=_unit([rng.gauss(0, 1) for _ in range(dims)]),
            embedding_model=MODEL,
        )
    moved = _side_table_values(Message)
    assert vector_bytes not in moved, "a vector was moved off its row"
    assert len(moved) <= 2, "only the long message's text and word list may move"
