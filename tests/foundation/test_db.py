"""A queryset's filter reused in a statement written by hand selects exactly the rows the ORM would; a read
run beside the caller's work uses a connection of its own only where that is safe, and hands it back."""

import threading

import pytest
from django.db import connection, connections, transaction

from foundation import db
from foundation.db import filter_sql, read_beside, where_sql
from sessions_app.models import Message
from tests.factories import ChatSessionFactory, UserFactory

pytestmark = pytest.mark.django_db


def _ids_by_hand(queryset, compile_filter=where_sql) -> set[int]:
    where, params = compile_filter(queryset)
    table = connection.ops.quote_name(Message._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {table}.id FROM {table} WHERE {where}", params)  # noqa: S608 (Django's own SQL)
        return {row[0] for row in cursor.fetchall()}


def test_the_filter_selects_what_the_orm_selects():
    mine, theirs = ChatSessionFactory(owner=UserFactory()), ChatSessionFactory(owner=UserFactory())
    said = Message.objects.create(session=mine, owner=mine.owner, seq=1, role="user", content="I like tea")
    Message.objects.create(session=mine, owner=mine.owner, seq=2, role="system", content="be brief")
    Message.objects.create(
        session=mine, owner=mine.owner, seq=3, role="user", content="noted", metadata={"source": "summary"}
    )
    Message.objects.create(session=theirs, owner=theirs.owner, seq=1, role="user", content="I like tea too")
    scope = Message.objects.filter(owner=mine.owner).said()

    assert _ids_by_hand(scope) == set(scope.values_list("pk", flat=True)) == {said.pk}
    assert _ids_by_hand(scope.exclude(session=mine)) == set()


def test_no_filter_selects_every_row():
    session = ChatSessionFactory()
    Message.objects.create(session=session, owner=session.owner, seq=1, role="user", content="hello")

    assert where_sql(Message.objects.all())[0] == "TRUE"
    assert _ids_by_hand(Message.objects.all()) == set(Message.objects.values_list("pk", flat=True))


def test_a_filter_nothing_passes_selects_nothing():
    session = ChatSessionFactory()
    Message.objects.create(session=session, owner=session.owner, seq=1, role="user", content="hello")

    assert _ids_by_hand(Message.objects.filter(pk__in=[])) == set()


def test_a_filter_through_a_relation_is_refused():
    with pytest.raises(ValueError, match="relation"):
        where_sql(Message.objects.filter(session__title="Trip"))


def test_any_filter_written_by_hand_selects_what_the_orm_selects_even_through_a_relation():
    trip, other = ChatSessionFactory(title="Trip"), ChatSessionFactory(title="Work")
    mine = Message.objects.create(session=trip, owner=trip.owner, seq=1, role="user", content="book the train")
    Message.objects.create(session=other, owner=other.owner, seq=1, role="user", content="file the report")
    scope = Message.objects.filter(session__title="Trip")

    assert _ids_by_hand(scope, filter_sql) == {mine.pk}
    assert _ids_by_hand(Message.objects.filter(owner=trip.owner), filter_sql) == {mine.pk}


def test_a_scope_filter_is_compiled_once_and_a_narrower_scope_has_its_own(monkeypatch):
    compiled = []
    monkeypatch.setattr(db, "where_sql", lambda queryset: compiled.append(queryset) or where_sql(queryset))
    session = ChatSessionFactory()
    scope = Message.objects.filter(owner=session.owner)
    first = filter_sql(scope)
    first[1].append("changed by its caller")  # the parameters handed out are a copy

    assert filter_sql(scope) == (first[0], [session.owner.pk])
    assert filter_sql(scope.filter(role="user"))[1] == [session.owner.pk, "user"]
    assert len(compiled) == 2


def _said_in(session_id) -> tuple[list[str], str]:
    """What a read beside the caller finds of a session, and the thread it ran on."""
    contents = list(Message.objects.filter(session_id=session_id).order_by("seq").values_list("content", flat=True))
    return contents, threading.current_thread().name


def _pool_in_use() -> int:
    stats = connections["default"].pool.get_stats()
    return stats["pool_size"] - stats["pool_available"]


def test_a_read_beside_runs_on_a_connection_of_its_own_and_hands_it_back(pool_with_room):
    session = ChatSessionFactory()
    Message.objects.create(session=session, owner=session.owner, seq=1, role="user", content="I like tea")
    in_use = _pool_in_use()

    reading = read_beside(_said_in, session_id=session.pk)
    contents, thread = reading.result()

    assert contents == ["I like tea"]
    assert _pool_in_use() == in_use  # its connection went back to the pool
    if not reading.ran_beside:  # only the threads of earlier tests in this process can hold the pool so
        pytest.skip("earlier tests' threads held the pool: the read ran on the caller's connection, as it should")
    assert thread.startswith("read-beside")


@pytest.mark.django_db(transaction=True)
def test_a_read_beside_a_transaction_runs_in_it_and_sees_its_writes():
    session = ChatSessionFactory()
    with transaction.atomic():
        Message.objects.create(session=session, owner=session.owner, seq=1, role="user", content="not yet committed")
        reading = read_beside(_said_in, session_id=session.pk)
        contents, thread = reading.result()

    assert contents == ["not yet committed"] and thread == threading.current_thread().name
    assert not reading.ran_beside


@pytest.mark.django_db(transaction=True)
def test_a_read_beside_raises_what_it_raised_to_whoever_waits_for_it():
    def broken() -> None:
        Message.objects.get(pk=-1)

    with pytest.raises(Message.DoesNotExist):
        read_beside(broken).result()


@pytest.mark.django_db(transaction=True)
def test_reads_beside_can_be_turned_off(settings):
    settings.READ_BESIDE = False
    session = ChatSessionFactory()

    reading = read_beside(_said_in, session_id=session.pk)

    assert reading.result()[1] == threading.current_thread().name and not reading.ran_beside


@pytest.mark.django_db(transaction=True)
def test_a_read_beside_that_finds_the_pool_drained_runs_on_the_callers_connection(monkeypatch):
    session = ChatSessionFactory()
    Message.objects.create(session=session, owner=session.owner, seq=1, role="user", content="I like tea")
    spare = iter([8])  # room when the read is started; none left once its thread would take a connection
    monkeypatch.setattr(db, "_spare_connections", lambda: next(spare, 0))

    reading = read_beside(_said_in, session_id=session.pk)
    contents, thread = reading.result()

    assert contents == ["I like tea"] and thread == threading.current_thread().name
    assert not reading.ran_beside
