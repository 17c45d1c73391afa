"""A queryset's filter reused in a statement written by hand selects exactly the rows the ORM would."""

import pytest
from django.db import connection

from foundation.db import where_sql
from sessions_app.models import Message
from tests.factories import ChatSessionFactory, UserFactory

pytestmark = pytest.mark.django_db


def _ids_by_hand(queryset) -> set[int]:
    where, params = where_sql(queryset)
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
