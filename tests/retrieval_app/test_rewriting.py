"""The follow-up detector and the built-in resolver: which questions pay for a rewrite, and what the
resolver makes of them from the session's last turn and working set."""

from __future__ import annotations

import pytest

from retrieval_app import rewriting


@pytest.mark.parametrize(
    "query",
    [
        "what was its deadline?",
        "how often should I descale it?",
        "and for Germany?",
        "What does that section say about refunds?",
        "how about the warranty?",
        "the second one?",
        "summarize the document",
        "why?",
        "Yes. What is she playing there again?",
        "Probably. When is that due?",
        "Which days are those again?",
        "What does it say about the monthly fee?",
        "What time can we check in there?",
        "What should I do?",
        "Which should I pick?",
        "How do I reset?",
    ],
)
def test_follow_ups_are_detected(query):
    assert rewriting.detect_signals(query), query


@pytest.mark.parametrize(
    "query",
    [
        "What is the capital of France?",
        "What is the retention policy and how do I change it?",
        "how does Kafka store messages and why is it fast",
        "Which port does the staging database use?",
        "How do I reset the admin password of the Nimbus router?",
        "Is there a fee for closing the Cobble Premier Account?",
        "What does the Lumen K2 manual say about descaling?",
        # Short, but about the person asking: their memories answer it, not the last turn.
        "What should I avoid eating?",
        "What can't I eat?",
        "Where do I live?",
        "When is my flight?",
        # About the person as a whole: what was said of them answers it, not the manual quoted last.
        "What do you know about me?",
        "Who am I?",
    ],
)
def test_standalone_questions_pay_nothing(query):
    assert rewriting.detect_signals(query) == []


def _resolve(query: str, **context) -> rewriting.Rewrite:
    ctx = rewriting.RewriteContext(**context)
    return rewriting.resolve(rewriting.decide(query, ctx, enabled=True), ctx)


def test_a_pronoun_takes_the_subject_of_the_last_question():
    turns = [("user", "What's the deadline for the billing migration?"), ("assistant", "Friday.")]
    result = _resolve("who owns it?", recent_turns=turns)
    assert result.rewritten and "billing migration" in result.query
    assert result.resolved_terms == {"it": "billing migration"}


def test_a_person_pronoun_takes_a_person_and_it_takes_the_thing_owned():
    turns = [("user", "I'm booking a taxi for Maya's recital.")]
    assert "recital" in _resolve("where is it?", recent_turns=turns).query
    assert "Maya" in _resolve("what is she playing?", recent_turns=turns).query


def test_verbs_and_gerunds_are_not_subjects_but_nouns_ending_in_ing_are():
    turns = [("user", "I'm pointing the new migration job at the staging database this afternoon.")]
    phrases = rewriting.salient_phrases(turns)
    assert "pointing" not in " ".join(phrases)
    assert any("staging database" in p for p in phrases)


def test_a_reference_to_the_document_uses_the_active_document():
    result = _resolve(
        "What does it say about the cabin bag size?",
        recent_turns=[("user", "How late must I arrive?")],
        active_documents=[("doc-1", "Aurora Airways Conditions of Carriage")],
    )
    assert result.query == "What does the Aurora Airways Conditions of Carriage say about the cabin bag size?"


def test_nothing_to_resolve_from_keeps_the_query_and_says_so():
    result = _resolve("what about it?", summary="An earlier summary with no subject to offer.")
    assert not result.rewritten and result.query == "what about it?"
    assert "nothing in the session resolved them" in result.reason


def test_without_session_context_no_rewrite_is_attempted():
    decision = rewriting.decide("what was its deadline?", rewriting.RewriteContext(), enabled=True)
    assert not decision.rewritten and "no session context" in decision.reason


def test_it_takes_the_thing_named_and_keeps_the_aspect_as_context():
    turns = [("user", "Tell me about the Nimbus router warranty."), ("assistant", "Connect the grey WAN port first.")]
    result = _resolve("and how do I reset it?", recent_turns=turns)
    assert result.query == "and how do I reset Nimbus router? (warranty)"
    assert "WAN" not in result.query  # the answer's wording is not what the user asked about


def test_before_any_recorded_turn_the_documents_in_use_resolve_a_follow_up():
    """A session that has only searched so far: its working set names the manual it found."""
    in_use = [("doc-1", "Lumen K2 Kettle User Manual")]
    result = _resolve("and how long is it under warranty?", active_documents=in_use)
    # "It" is the kettle the manual is about, not the manual: a kettle is under warranty, its manual is not.
    assert result.rewritten and result.query == "and how long is Lumen K2 Kettle under warranty?"
    assert "nothing in the session resolved them" not in result.reason
    assert "Lumen K2" in _resolve("and the descaling?", active_documents=in_use).query


@pytest.mark.parametrize(
    ("title", "thing"),
    [
        ("Aurora K3 Kettle Manual", "Aurora K3 Kettle"),
        ("Lumen K2 Kettle User Manual v2", "Lumen K2 Kettle"),
        ("Nimbus router quick start guide", "Nimbus router"),
        ("User Guide", "User Guide"),
        ("Employee handbook 2024", "Employee handbook 2024"),
        ("Bike care notes", "Bike care notes"),
    ],
)
def test_a_manual_in_use_stands_for_the_product_it_is_about(title, thing):
    result = _resolve("is it still under warranty?", active_documents=[("doc-1", title)])
    assert result.resolved_terms == {"it": thing}
