"""Memories from a hosted model (LLM_MODEL set), over real HTTP against the loopback server: what the
prompt asks for, how leniently the answer is read, and the built-in patterns behind anything unusable."""

from __future__ import annotations

import json

import pytest

from foundation import ai
from foundation.ai import memories
from foundation.ai.engines import Turn
from sessions_app.models import Memory
from tests.factories import ChatSessionFactory

pytestmark = pytest.mark.django_db

TURNS = [
    Turn("user", "Hi! I'm Rosa. I'm allergic to peanuts and my son Leo is 4."),
    Turn("assistant", "Thanks Rosa, noted."),
    Turn("user", "Please remember: we're moving to Valencia in March."),
]


def _prompt(fake) -> str:
    return fake.requests[-1]["body"]["messages"][0]["content"]


def test_the_prompt_names_the_kinds_the_rules_and_the_users_keys(hosted_llm):
    hosted_llm.reply = lambda messages: '{"memories": []}'
    found = ai.text_engine().extract_memories(
        TURNS, known_keys=[("profile", "peanut_allergy"), ("entities", "son_leo")]
    )
    assert found == [], "an empty list is an answer: nothing to keep"
    prompt = _prompt(hosted_llm)
    for words in ("allergies and intolerances", "diet", "family", "plans", "ALWAYS kept", "remember that"):
        assert words in prompt
    for never in ("questions", "hypotheticals", "other people's facts", "negated statements", "what someone else"):
        assert never in prompt
    assert "- profile/peanut_allergy\n- entities/son_leo" in prompt
    assert "[0] user: Hi! I'm Rosa." in prompt and "[2] user: Please remember" in prompt


def test_memories_in_a_code_fence_with_prose_around_them_are_read(hosted_llm):
    answer = {
        "memories": [
            {"category": "profile", "key": "name", "content": "Is called Rosa.", "turn": 0},
            {"category": "profile", "key": "peanut_allergy", "content": "Is allergic to peanuts.", "turn": 0},
            {"category": "entities", "key": "son_leo", "content": "Has a son, Leo, aged 4.", "turn": 0},
            {"category": "events", "key": "move_to_valencia", "content": "Is moving to Valencia in March.", "turn": 2},
        ]
    }
    hosted_llm.reply = lambda messages: f"Here is what I found:\n```json\n{json.dumps(answer)}\n```\nHope it helps!"
    found = ai.text_engine().extract_memories(TURNS)
    assert [(c.category, c.key, c.content, c.turns) for c in found] == [
        ("profile", "name", "Is called Rosa.", [0]),
        ("profile", "peanut_allergy", "Is allergic to peanuts.", [0]),
        ("entities", "son_leo", "Has a son, Leo, aged 4.", [0]),
        ("events", "move_to_valencia", "Is moving to Valencia in March.", [2]),
    ]


def test_a_list_with_prose_around_it_and_items_of_every_shape(hosted_llm):
    long_text = "Is allergic to peanuts. " + "She carries an EpiPen everywhere and reads every label. " * 20
    items = [
        {"category": "Preference", "key": "Oat Milk In Coffee", "content": "Prefers oat milk in coffee."},
        {"category": "family", "content": "Has a son, Leo, aged 4."},  # no key: one from its text
        {"category": "gossip", "key": "x", "content": "Not a category of ours."},
        {"category": "profile", "key": "peanut_allergy", "content": long_text, "turn": 99},
        {"category": "profile", "key": "empty", "content": "   "},
        "not an object",
    ]
    hosted_llm.reply = lambda messages: "Sure! " + json.dumps(items) + " Let me know."
    found = {(c.category, c.key): c for c in ai.text_engine().extract_memories(TURNS)}
    assert set(found) == {
        ("preferences", "oat_milk_in_coffee"),
        ("entities", memories.slug("Has a son, Leo, aged 4.")),
        ("profile", "peanut_allergy"),
    }
    allergy = found[("profile", "peanut_allergy")]
    assert len(allergy.content) <= memories.CONTENT_MAX_CHARS and allergy.content.endswith(".")
    assert allergy.turns == [0, 1, 2], "a turn that does not exist means every turn"


def test_a_known_key_is_kept_exactly_as_it_is(hosted_llm):
    hosted_llm.reply = lambda messages: json.dumps(
        [{"category": "preferences", "key": "oat_milk_coffee", "content": "Prefers oat milk in coffee, always."}]
    )
    found = ai.text_engine().extract_memories(TURNS, known_keys=[("preferences", "oat_milk_coffee")])
    assert [c.key for c in found] == ["oat_milk_coffee"]


@pytest.mark.parametrize(
    "answer",
    [
        "I'm sorry, I can't help with that.",
        '{"status": "ok"}',
        json.dumps([{"category": "gossip", "content": "x"}, {"category": "profile", "content": ""}]),
        "```json\n{not json at all\n```",
    ],
)
def test_an_answer_with_nothing_usable_falls_back_to_the_patterns(hosted_llm, answer):
    hosted_llm.reply = lambda messages: answer
    found = {(c.category, c.key): c.content for c in ai.text_engine().extract_memories(TURNS)}
    assert found[("profile", "peanut_allergy")] == "Is allergic to peanuts."
    assert found[("entities", "son_leo")] == "Has a son, Leo, aged 4."
    assert ("events", "move_to_valencia") in found


def test_a_failed_call_falls_back_to_the_patterns(hosted_llm):
    hosted_llm.failures = 5
    found = {(c.category, c.key) for c in ai.text_engine().extract_memories(TURNS)}
    assert ("profile", "name") in found and ("profile", "peanut_allergy") in found


def test_at_commit_the_model_sees_the_users_keys_and_updates_the_memory_in_place(auth_client, user, hosted_llm):
    Memory.objects.create(owner=user, category="profile", key="peanut_allergy", content="Is allergic to peanuts.")
    hosted_llm.reply = lambda messages: json.dumps(
        {
            "memories": [
                {"category": "profile", "key": "peanut_allergy", "content": "Is mildly allergic to peanuts.", "turn": 0}
            ]
        }
    )
    session = ChatSessionFactory(owner=user)
    auth_client.post(
        f"/api/sessions/{session.id}/messages",
        {"messages": [{"role": "user", "content": "My peanut allergy is actually mild."}]},
        format="json",
    )
    diff = auth_client.post(f"/api/sessions/{session.id}/commit", {}, format="json").json()["memory_diff"]
    assert [(m["key"], m["content"], m["previous"]) for m in diff["updated"]] == [
        ("peanut_allergy", "Is mildly allergic to peanuts.", "Is allergic to peanuts.")
    ]
    prompts = [
        r["body"]["messages"][0]["content"] for r in hosted_llm.requests if "long-term memories" in str(r["body"])
    ]
    assert prompts and "- profile/peanut_allergy" in prompts[-1]
    assert Memory.objects.filter(owner=user).count() == 1
