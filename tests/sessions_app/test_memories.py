"""Memories as a person meets them: what a commit keeps of what they said, and the memories they add,
correct and find by hand through the API."""

from __future__ import annotations

import pytest

from sessions_app import services
from sessions_app.models import Memory
from tests.factories import ChatSessionFactory, MessageFactory, UserFactory

pytestmark = pytest.mark.django_db


def _say_and_commit(auth_client, user, *turns) -> dict:
    session = ChatSessionFactory(owner=user)
    auth_client.post(
        f"/api/sessions/{session.id}/messages",
        {"messages": [{"role": role, "content": content} for role, content in turns]},
        format="json",
    )
    return auth_client.post(f"/api/sessions/{session.id}/commit", {}, format="json").json()


# --- what a commit keeps ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "content"),
    [
        ("Hi! I'm allergic to peanuts.", "Is allergic to peanuts."),
        ("Please remember: I have a severe peanut allergy.", "Is severely allergic to peanuts."),
    ],
)
def test_a_peanut_allergy_is_kept_however_it_is_said(auth_client, user, said, content):
    body = _say_and_commit(
        auth_client,
        user,
        ("user", said),
        ("assistant", "Noted. I'll keep that in mind."),
        ("user", "Also, we're moving to Lisbon next spring and I work as a nurse."),
    )
    created = {(m["category"], m["key"]): m for m in body["memory_diff"]["created"]}
    allergy = created[("profile", "peanut_allergy")]
    assert allergy["content"] == content and allergy["label"] == "Peanut allergy"
    assert ("events", "move_to_lisbon") in created and ("profile", "occupation") in created


def test_the_allergy_said_twice_is_one_memory_and_the_later_word_on_it_updates_it(auth_client, user):
    _say_and_commit(
        auth_client,
        user,
        ("user", "Hi! I'm allergic to peanuts."),
        ("assistant", "Thanks for telling me."),
        ("user", "Please remember: I have a severe peanut allergy."),
    )
    assert list(Memory.objects.values_list("key", "content")) == [
        ("peanut_allergy", "Is severely allergic to peanuts.")
    ]

    diff = _say_and_commit(auth_client, user, ("user", "My peanut allergy is actually mild, just an itchy mouth."))[
        "memory_diff"
    ]
    assert [(m["key"], m["content"], m["previous"]) for m in diff["updated"]] == [
        ("peanut_allergy", "Is mildly allergic to peanuts.", "Is severely allergic to peanuts.")
    ]
    assert Memory.objects.count() == 1


def test_a_greeting_with_a_name_keeps_the_name(auth_client, user):
    body = _say_and_commit(auth_client, user, ("user", "Hi, I'm Priya"), ("assistant", "Hello Priya!"))
    assert [(m["key"], m["content"], m["label"]) for m in body["memory_diff"]["created"]] == [
        ("name", "Is called Priya.", "Name")
    ]


def test_two_facts_in_one_sentence_are_two_memories(auth_client, user):
    body = _say_and_commit(auth_client, user, ("user", "I'm vegetarian and my daughter Mia is 6."))
    assert {(m["category"], m["key"], m["content"]) for m in body["memory_diff"]["created"]} == {
        ("preferences", "diet", "Is vegetarian."),
        ("entities", "daughter_mia", "Has a daughter, Mia, aged 6."),
    }


@pytest.mark.parametrize(
    "said",
    [
        "am I allergic to anything?",
        "should I go vegan?",
        "I'm allergic to Mondays.",
        "If I were vegan, would I get enough protein?",
        "my colleague is allergic to nuts",
        "My doctor said I might be pre-diabetic.",
        "I'm not vegetarian.",
        "we use IT for payroll and HR",
        "Remember this conversation",
    ],
)
def test_what_is_not_a_fact_about_the_user_keeps_nothing(auth_client, user, said):
    body = _say_and_commit(auth_client, user, ("user", said), ("assistant", "I see."))
    assert body["memory_diff"]["created"] == []
    assert not Memory.objects.exists()


def test_a_commit_gives_its_archive_to_a_memory_that_had_none(auth_client, user):
    added, _ = services.memory_create(owner=user, category="profile", content="Is allergic to peanuts.")
    assert added.key == "peanut_allergy" and added.source_archive is None
    body = _say_and_commit(auth_client, user, ("user", "I'm allergic to peanuts."))
    assert [m["key"] for m in body["memory_diff"]["unchanged"]] == ["peanut_allergy"]
    added.refresh_from_db()
    assert added.source_archive.uri == body["archive"]["uri"]


# --- memories added by hand ------------------------------------------------------------------------------


def test_a_memory_added_by_hand_is_listed_searchable_embedded_and_found_by_search(
    auth_client, user, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.post(
            "/api/memories", {"category": "preferences", "content": "Prefers oat milk in coffee."}, format="json"
        )
    assert response.status_code == 201
    memory = response.json()
    assert (memory["category"], memory["key"], memory["label"]) == (
        "preferences",
        "oat_milk_in_coffee",
        "Oat milk in coffee",
    )
    assert memory["session_id"] is None and memory["history"] == []
    assert Memory.objects.get(pk=memory["id"]).embedding is not None, "embedded by the worker like the others"

    listed = auth_client.get("/api/memories").json()["results"]
    assert [(m["id"], m["label"]) for m in listed] == [(memory["id"], "Oat milk in coffee")]
    assert [m["id"] for m in auth_client.get("/api/memories", {"q": "oat milk"}).json()["results"]] == [memory["id"]]
    assert auth_client.get("/api/memories", {"q": "espresso machine"}).json()["results"] == []

    session = services.session_create(owner=user)
    results = auth_client.post(
        "/api/retrieval/search",
        {"query": "what milk do I take in my coffee?", "session_id": str(session.id)},
        format="json",
    ).json()["results"]
    assert any(r["origin"] == "memory" and "oat milk" in r["text"] for r in results)


def test_a_memory_added_by_hand_is_in_the_chat_context_at_once(auth_client, user):
    auth_client.post(
        "/api/memories", {"category": "profile", "content": "Is severely allergic to peanuts."}, format="json"
    )
    body = auth_client.post("/api/ai/chat", {"message": "Which nuts am I allergic to?"}, format="json").json()
    assert any(hit["source"] == "memory" and "allergic to peanuts" in hit["text"] for hit in body["context"])


def test_adding_a_memory_with_a_known_key_updates_it_as_a_correction(auth_client, user):
    first = auth_client.post(
        "/api/memories", {"category": "profile", "key": "Home town", "content": "Grew up in Porto."}, format="json"
    ).json()
    assert first["key"] == "home_town"
    response = auth_client.post(
        "/api/memories", {"category": "profile", "key": "home_town", "content": "Grew up in Braga."}, format="json"
    )
    assert response.status_code == 200
    memory = response.json()
    assert memory["id"] == first["id"] and memory["content"] == "Grew up in Braga."
    assert memory["history"][-1]["content"] == "Grew up in Porto." and memory["history"][-1]["edited"]
    assert Memory.objects.filter(owner=user).count() == 1


def test_a_key_derived_from_what_was_written_is_the_one_conversations_use(auth_client, user):
    added = auth_client.post(
        "/api/memories", {"category": "profile", "content": "Allergic to shellfish"}, format="json"
    )
    assert added.json()["key"] == "shellfish_allergy"
    diff = _say_and_commit(auth_client, user, ("user", "Heads up, I'm severely allergic to shellfish."))["memory_diff"]
    assert [(m["id"], m["content"]) for m in diff["updated"]] == [
        (added.json()["id"], "Is severely allergic to shellfish.")
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"category": "gossip", "content": "Likes tea."}, "category"),
        ({"category": "profile", "content": "   "}, "content"),
        ({"category": "profile"}, "content"),
        ({"category": "profile", "content": "x" * 10_001}, "content"),
        ({"category": "profile", "content": "Likes\x00tea."}, "content"),
        ({"category": "profile", "content": "Likes tea.", "key": "tea\x00"}, "key"),
        ({"content": "Likes tea."}, "category"),
    ],
)
def test_a_bad_memory_is_refused_with_the_field_named(auth_client, body, field):
    response = auth_client.post("/api/memories", body, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] and error["message"] and field in error["details"]["fields"]
    assert not Memory.objects.exists()


def test_another_users_token_cannot_see_or_change_a_memory_added_by_hand(auth_client, user, api_client):
    mine = auth_client.post(
        "/api/memories", {"category": "profile", "key": "locker", "content": "Locker 4411."}, format="json"
    ).json()
    stranger = UserFactory()
    api_client.force_authenticate(stranger)
    assert api_client.get("/api/memories").json()["count"] == 0
    assert api_client.get("/api/memories", {"q": "locker"}).json()["count"] == 0
    assert api_client.get(f"/api/memories/{mine['id']}").status_code == 404
    assert api_client.patch(f"/api/memories/{mine['id']}", {"content": "Locker 1."}, format="json").status_code == 404
    assert api_client.delete(f"/api/memories/{mine['id']}").status_code == 404
    theirs = api_client.post(
        "/api/memories", {"category": "profile", "key": "locker", "content": "Locker 1."}, format="json"
    )
    assert theirs.status_code == 201 and theirs.json()["id"] != mine["id"]
    assert Memory.objects.get(pk=mine["id"]).content == "Locker 4411."


def test_a_memory_without_an_archive_links_to_the_conversation_of_its_turn(auth_client, user):
    session = ChatSessionFactory(owner=user)
    turn = MessageFactory(session=session, role="user", content="Remember I park on level 3.")
    noted = Memory.objects.create(owner=user, category="patterns", key="park_on_level_3", content="Parks on level 3.")
    noted.source_messages.add(turn)
    by_hand, _ = services.memory_create(owner=user, category="profile", content="Is left-handed.")

    listed = {m["id"]: m for m in auth_client.get("/api/memories").json()["results"]}
    assert listed[noted.id]["session_id"] == str(session.id) and listed[noted.id]["source_message_id"] == turn.id
    assert listed[by_hand.id]["session_id"] is None
    assert auth_client.get(f"/api/memories/{noted.id}").json()["session_id"] == str(session.id)
    patched = auth_client.patch(f"/api/memories/{noted.id}", {"content": "Parks on level 4."}, format="json").json()
    assert patched["session_id"] == str(session.id)


def test_listing_memories_reads_their_conversations_in_one_query(auth_client, user, django_assert_max_num_queries):
    for n in range(6):
        session = ChatSessionFactory(owner=user)
        memory = Memory.objects.create(owner=user, category="profile", key=f"fact_{n}", content=f"Fact {n}.")
        memory.source_messages.add(MessageFactory(session=session, role="user", content=f"Fact {n}."))
    with django_assert_max_num_queries(4):  # the token, the count, the page
        results = auth_client.get("/api/memories").json()["results"]
    assert len(results) == 6 and all(m["session_id"] for m in results)
