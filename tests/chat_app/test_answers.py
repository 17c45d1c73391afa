"""The built-in engine's answers respond to what was said: a statement is acknowledged by what was
noted from it, a greeting in kind, a question with the passages judged relevant (carrying the steps
or the fix they introduce) or by saying that nothing relevant was found; the mood follows the judged
relevance of what was quoted."""

from __future__ import annotations

import re

import pytest

from chat_app import answer, quotes, speech
from chat_app import services as pipeline
from chat_app.quotes import best_quote
from chat_app.relevance import Judged
from foundation.ai import MemoryCandidate
from retrieval_app.hits import Hit
from sessions_app import services as sessions
from sessions_app.models import Memory, Message
from sessions_app.uris import message_uri
from tests.factories import index_document
from tests.helpers import ROOT

pytestmark = pytest.mark.django_db

BREWER = b"""# Brava Kettle Manual

## Descaling

Limescale builds up in hard water. To descale:

1. Fill the kettle to the MAX mark with equal parts water and white vinegar.
2. Boil it once and leave it to stand for an hour.
3. Empty it and rinse three times with clean water.

## Error codes

Error E3 means the kettle was switched on empty. Fill it above the MIN mark and press Start again.
Error E5 means the lid is open. Close the lid firmly.
"""
STEPS = [
    "1. Fill the kettle to the MAX mark with equal parts water and white vinegar.",
    "2. Boil it once and leave it to stand for an hour.",
    "3. Empty it and rinse three times with clean water.",
]
QUOTED_AS_RETRIEVED = "quoted as retrieved (not generated)"


def _chat(client, message: str, **body) -> dict:
    response = client.post("/api/ai/chat", {"message": message, "debug_search_trace": True, **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _stage(body: dict, name: str) -> dict:
    return next(stage for stage in body["search_trace"]["stages"] if stage["stage"] == name)


def test_a_statement_is_acknowledged_with_what_was_remembered(auth_client, user, library):
    body = _chat(auth_client, "I live in Lisbon.")
    memory = Memory.objects.get(owner=user)
    assert body["message"] == "Noted: you live in Lisbon. I'll keep that in mind."
    assert body["remembered"] == [
        {
            "id": memory.id,
            "uri": memory.uri,
            "category": "profile",
            "key": "location",
            "label": "Home",
            "content": "Lives in Lisbon.",
            "change": "created",
        }
    ]
    assert body["context"] == [], "no manual is quoted at someone saying where they live"
    assert body["mood"] == "confident" and "noted 1 memory" in body["mood_reason"]
    question, answer = Message.objects.filter(session_id=body["session_id"]).order_by("seq")
    assert list(memory.source_messages.all()) == [question]
    assert answer.metadata["remembered"] == body["remembered"], "the answer keeps what it announced"
    assert _stage(body, "memory_note")["remembered"] == body["remembered"]

    again = _chat(auth_client, "I live in Lisbon.", session_id=body["session_id"])
    assert again["message"] == "I already knew that you live in Lisbon."
    assert [m["change"] for m in again["remembered"]] == ["unchanged"]
    moved = _chat(auth_client, "I now live in Porto.", session_id=body["session_id"])
    assert moved["message"] == "Noted: you live in Porto (before: you live in Lisbon). I'll keep that in mind."


def test_what_was_just_told_answers_the_very_next_question_by_its_meaning(auth_client, user, library):
    told = _chat(auth_client, "I'm Priya, I live in Lisbon and I'm allergic to peanuts.")
    # No worker has run (its jobs wait for the commit): the turn that noted them gave them their meaning.
    assert Memory.objects.filter(owner=user).count() == 3
    assert not Memory.objects.filter(owner=user, embedding__isnull=True).exists()

    # Asked at once, as an agent does, in words the memory does not contain.
    body = _chat(auth_client, "What should I avoid eating?", session_id=told["session_id"])
    assert "Is allergic to peanuts." in body["message"], body["message"]


def test_every_fact_of_the_kind_a_question_asks_for_answers_it(auth_client, library):
    _chat(auth_client, "I'm allergic to peanuts.")
    _chat(auth_client, "I'm also allergic to shellfish, and I live in Lisbon.")

    # "Is allergic to shellfish." is further from the question than the peanut allergy (0.34 against 0.47),
    # under the similarity a memory needs; it is what the question asks for all the same.
    for question in ("What should I avoid eating?", "Any food I should stay away from?"):
        body = _chat(auth_client, question)
        answer = body["message"]
        assert "Is allergic to peanuts." in answer and "Is allergic to shellfish." in answer, answer
        assert "Lisbon" not in answer
        assert body["mood"] == "confident", "what the question asks for answers it, in whatever words"
    assert "allergic" not in _chat(auth_client, "What did I eat yesterday?")["message"]


def test_a_question_in_other_words_than_the_fact_still_finds_it(auth_client, library):
    told = _chat(
        auth_client, "I'm a structural engineer, I live in Utrecht, and my wife Ana and our son Theo moved with me."
    )

    # "What do I do for a living?" shares no word with "Is a structural engineer." (and "live" with "Lives
    # in Utrecht."), nor "my family" with "Their wife is Ana.": what each fact is (a job, their family) is
    # what the question names.
    work = _chat(auth_client, "What do I do for a living?")["message"]
    family = _chat(auth_client, "Tell me about my family")["message"]
    living = auth_client.post(
        "/api/retrieval/search",
        {"query": "What do I do for a living?", "session_id": told["session_id"], "limit": 3},
        format="json",
    ).json()["results"]

    assert "structural engineer" in work and "Utrecht" not in work, work
    assert "Ana" in family and "Theo" in family and "engineer" not in family, family
    assert living[0]["text"] == "Is a structural engineer.", living


def test_a_job_is_not_answered_with_where_they_live(auth_client, library):
    _chat(auth_client, "I live in Lisbon.")

    # "For a living" is the question's frame: "living" is no word of "Lives in Lisbon.".
    unknown = _chat(auth_client, "What do I do for a living?")
    _chat(auth_client, "I'm a nurse.")
    known = _chat(auth_client, "What do I do for a living?")

    assert unknown["mood"] != "confident", unknown["message"]
    assert known["mood"] == "confident" and "Is a nurse." in known["message"], known["message"]
    assert "Lisbon" not in known["message"]


def test_only_a_question_about_oneself_asks_for_what_a_fact_is(auth_client, library):
    _chat(auth_client, "I speak Dutch and Portuguese, and I live in Utrecht.")

    # Both are as close to "The languages they speak."; only the first asks it of the person.
    own = _chat(auth_client, "Which languages do I speak?")
    general = _chat(auth_client, "Which languages are spoken in Switzerland?")

    assert _stage(own, "memories")["asks_for"] == ["The languages they speak."]
    assert "Speaks Dutch and Portuguese." in own["message"]
    assert _stage(general, "memories")["asks_for"] == []


def test_asked_to_describe_them_the_person_hears_who_they_are_first(auth_client, library):
    _chat(auth_client, "I love jazz and I swim every Tuesday.")
    _chat(auth_client, "My name is Marta, I'm a structural engineer and I live in Utrecht.")

    body = _chat(auth_client, "Describe me in a few lines")

    remembered = [hit["text"] for hit in body["context"] if hit["origin"] == "memory"]
    assert remembered[:3] == ["Is called Marta.", "Lives in Utrecht.", "Is a structural engineer."], remembered
    # Their tastes and habits come after who they are, not in the order they were told.
    ranked = [candidate["uri"].split("/")[-2] for candidate in _stage(body, "memories")["candidates"]]
    assert ranked[:3] == ["profile"] * 3 and set(ranked[3:]) >= {"preferences"}, ranked


def test_asked_what_is_known_of_them_after_a_manual_was_quoted_the_person_hears_about_themselves(auth_client, library):
    told = _chat(auth_client, "My name is Dana and I work night shifts as a nurse.")
    quoted = _chat(auth_client, "How often should I descale the Aurora kettle?", session_id=told["session_id"])
    assert "four weeks" in quoted["message"]

    body = _chat(auth_client, "What do you know about me?", session_id=told["session_id"])
    assert not _stage(body, "rewrite")["rewritten"], "it follows on from nothing"
    assert {hit["origin"] for hit in body["context"]} == {"memory"}, body["message"]
    assert "Is called Dana." in body["message"] and "kettle" not in body["message"].lower()


def test_a_new_fact_told_is_not_searched_with_what_the_session_said_before(auth_client, library):
    told = _chat(auth_client, "My name is Dana and I work night shifts as a nurse.")
    body = _chat(auth_client, "I prefer short answers.", session_id=told["session_id"])
    assert body["message"] == "Noted: you prefer short answers. I'll keep that in mind."
    assert body["context"] == [] and not _stage(body, "rewrite")["rewritten"]


def test_what_is_said_of_a_sister_by_her_name_alone_is_remembered_as_hers(
    auth_client, user, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        told = _chat(auth_client, "My sister Mei is coming to Kyoto with me in April.")
        later = _chat(
            auth_client, "Mei is vegetarian, so we need to find restaurants for her.", session_id=told["session_id"]
        )
    assert [memory["content"] for memory in later["remembered"]] == ["Their sister Mei is vegetarian."]

    with django_capture_on_commit_callbacks(execute=True):
        body = _chat(auth_client, "What does my sister eat?")
    assert body["mood"] == "confident", _stage(body, "relevance")["judged"]
    assert body["message"].splitlines()[1].startswith('1. "Their sister Mei is vegetarian."'), body["message"]
    asked = _chat(auth_client, "Does my sister have any dietary restrictions?")
    assert asked["mood"] == "confident" and '"Their sister Mei is vegetarian."' in asked["message"]
    # Her diet is hers: asked what they themselves should eat, it is not what answers.
    own = _chat(auth_client, "What should I eat?")
    assert "Mei" not in own["message"] and own["mood"] == "uncertain"


def test_a_short_question_about_oneself_ranks_the_fact_it_asks_for_first(auth_client, library):
    told = _chat(auth_client, "I'm Priya, I live in Lisbon and I'm allergic to peanuts.")

    response = auth_client.post(
        "/api/retrieval/search",
        {"query": "What should I avoid eating?", "session_id": told["session_id"], "limit": 3},
        format="json",
    )

    body = response.json()
    # Not "What should I avoid eating? (Lisbon; Priya)", which put their home above their allergy.
    assert body["query_plan"]["rewrite"]["rewritten"] is False
    assert (body["results"][0]["origin"], body["results"][0]["text"]) == ("memory", "Is allergic to peanuts.")
    assert all("Lisbon" not in str(hit) for hit in body["results"]), body["results"]


def test_whatever_the_patterns_note_from_a_statement_is_what_is_announced(auth_client, library, monkeypatch):
    noted = [
        MemoryCandidate(category="profile", key="allergies", content="Severely allergic to peanuts"),
        MemoryCandidate(category="entities", key="daughter", content="Daughter: Maya"),
    ]
    monkeypatch.setattr(sessions.memories, "extract_by_patterns", lambda turns: noted)
    body = _chat(auth_client, "Please remember: I have a severe peanut allergy, and my daughter is Maya.")
    assert [(m["key"], m["content"]) for m in body["remembered"]] == [
        ("allergies", "Severely allergic to peanuts"),
        ("daughter", "Daughter: Maya"),
    ]
    assert body["message"] == (
        "Noted: you are severely allergic to peanuts and your daughter is Maya. I'll keep that in mind."
    )
    assert "viking://" not in body["message"] and "language model" not in body["message"]


def test_what_the_person_told_answers_questions_about_them_in_a_new_conversation(auth_client, library):
    _chat(auth_client, "Hi, I'm Priya and I live in Lisbon. I am allergic to peanuts.")

    about_me = _chat(auth_client, "What do you know about me?")
    where = _chat(auth_client, "Where do I live?")

    assert about_me["message"].startswith(answer.CONFIDENT_HEADER), about_me["message"]
    for fact in ("Priya", "Lisbon", "peanuts"):
        assert fact in about_me["message"]
    assert {hit["origin"] for hit in about_me["context"]} == {"memory"}, "no manual passage pads it"
    assert about_me["mood"] == "confident"
    assert where["message"].startswith(answer.CONFIDENT_HEADER) and "Lisbon" in where["message"]
    assert "Priya" not in where["message"], "only what answers the question"


def test_a_question_about_something_else_of_theirs_is_not_answered_with_their_profile(auth_client, library):
    _chat(auth_client, "Hi, I'm Priya and I live in Lisbon.")
    body = _chat(auth_client, "What is the capital of Mongolia?")
    assert body["context"] == [] and "Lisbon" not in body["message"]


def test_a_statement_with_nothing_to_note_says_so_and_a_greeting_gets_a_greeting(auth_client, library):
    said = _chat(auth_client, "The weather was lovely at the coast this weekend.")
    assert said["message"] == "Saved in this conversation; I noted no fact from it as a long-term memory."
    assert said["remembered"] == [] and said["context"] == []
    hello = _chat(auth_client, "Hi!")
    assert hello["message"].startswith("Hello!") and "viking://" not in hello["message"]
    assert _chat(auth_client, "Thanks!")["message"] == "You're welcome."


def test_an_off_topic_question_finds_nothing_and_says_so(auth_client, library):
    body = _chat(auth_client, "What is the capital of Mongolia?")
    assert body["message"] == (
        "I found nothing about the capital of Mongolia in your documents, memories or earlier conversations."
    )
    assert body["context"] == [] and "viking://" not in body["message"], "no unrelated passage pads it"
    assert body["mood"] == "uncertain" and "Nothing relevant" in body["mood_reason"]
    relevance = _stage(body, "relevance")
    assert relevance["judged"] and all(j["relevance"] < relevance["quoted_from"] for j in relevance["judged"])


def test_a_quote_that_ends_in_a_colon_carries_the_steps_verbatim(auth_client, user, library):
    index_document(user, "brava.md", BREWER)
    body = _chat(auth_client, "How do I descale the Brava kettle?")
    assert body["mood"] == "confident"
    (source,) = body["context"]
    assert f'"To descale:\n   {STEPS[0]}\n   {STEPS[1]}\n   {STEPS[2]}" (' in body["message"]
    # Each line the list keeps is a line of the source, as written (indented under its number).
    assert all(line.strip().strip('"') in BREWER.decode() for line in body["message"].splitlines()[2:4])
    assert body["message"].rstrip().endswith(f"{source['uri']})")


def test_the_fix_comes_with_the_error_it_answers(auth_client, user, library):
    index_document(user, "brava.md", BREWER)
    body = _chat(auth_client, "How do I fix error E3?")
    assert (
        '"Error E3 means the kettle was switched on empty. Fill it above the MIN mark and press Start again."'
        in body["message"]
    )
    assert "E5" not in body["message"]


def test_the_mood_of_the_right_passage_is_confident_and_of_a_near_miss_is_not(auth_client, library):
    right = _chat(auth_client, "How often should I descale the Aurora kettle?")
    assert right["mood"] == "confident" and "judged relevant" in right["mood_reason"]
    assert QUOTED_AS_RETRIEVED in right["message"] and "four weeks" in right["message"]
    assert [item["title"] for item in right["context"]] == ["Descaling"], "only what was quoted is a source"

    # The library has kettles and routers, not this kettle: what comes closest is not relied on.
    near = _chat(auth_client, "How do I descale the Zephyr Z5 kettle?")
    assert near["mood"] == "uncertain"
    assert near["message"].startswith("I found nothing about how to descale the Zephyr Z5 kettle")
    judged = _stage(near, "relevance")["judged"]
    assert judged and all(j["features"]["unknown_name"] == 1.0 for j in judged)


KETTLE_CARE = b"""# Kettle care

Wipe the kettle with a damp cloth. The lid hinge collects limescale: brush the hinge with a soft toothbrush
dipped in white vinegar, then rinse and dry it. Descale every four weeks with citric acid.
"""


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        # Every word of the question but "cleaned" is in all of the library's few passages: rarity alone
        # would make "cleaned" all that is asked about, and nothing holds it.
        ("How should the lid hinge be cleaned?", "brush the hinge with a soft toothbrush"),
        # "kettle" is what the whole manual is about; "descale" is what the question asks about.
        ("How often should I descale the kettle?", "Descale every four weeks with citric acid."),
    ],
)
def test_a_first_document_alone_answers_what_it_says(auth_client, user, question, answer):
    index_document(user, "care.md", KETTLE_CARE)
    body = _chat(auth_client, question)
    assert not body["message"].startswith("I found nothing"), _stage(body, "relevance")["judged"]
    quoted = body["message"].splitlines()[1]
    assert answer in quoted and "damp cloth" not in quoted


def test_a_first_document_alone_is_not_relied_on_for_what_it_does_not_say(auth_client, user):
    index_document(user, "care.md", KETTLE_CARE)
    body = _chat(auth_client, "How do I pair the kettle with my phone?")
    assert body["mood"] == "uncertain", "the closest it has, at most: never relied on"


def test_an_earlier_question_inside_a_longer_turn_is_not_the_source_of_its_own_answer(
    auth_client, user, django_capture_on_commit_callbacks
):
    index_document(user, "care.md", KETTLE_CARE)
    with django_capture_on_commit_callbacks(execute=True):  # the turn is embedded, as a worker would
        earlier = _chat(
            auth_client, "I bought the kettle last week and it squeaks. How should the lid hinge be cleaned?"
        )
    said = Message.objects.get(session_id=earlier["session_id"], role="user")

    body = _chat(auth_client, "How should the lid hinge be cleaned?")
    echoes = {echo["id"]: echo["why"] for echo in _stage(body, "conversations")["echoes"]}
    assert echoes == {said.id: "asks rather than tells"}
    assert [item["origin"] for item in body["context"]] == ["document"]
    assert "brush the hinge" in body["message"] and "squeaks" not in body["message"]

    # What it tells is still found for what it tells.
    told = _chat(auth_client, "Why does my kettle squeak?")
    assert said.id not in {echo["id"] for echo in _stage(told, "conversations")["echoes"]}
    candidates = [hit["uri"] for hit in _stage(told, "conversations")["candidates"]]
    assert message_uri(said.session_id, said.id) in candidates


LIGHTS = b"""# Nimbus R7 router: quick start

## Setting up

Plug the router into the modem with the yellow cable. Wait until the light turns solid white, then open the app.

## Lights

Solid white: connected. Blinking blue: starting up. Solid red: no internet. Blinking orange: resetting.
"""


def test_what_a_light_means_is_answered_by_what_it_says_not_by_the_word_mean(auth_client, user):
    index_document(user, "r7.md", LIGHTS)
    body = _chat(auth_client, "What does a solid red light mean?")
    assert body["mood"] == "confident", _stage(body, "relevance")["judged"]
    assert '"Solid red: no internet."' in body["message"].splitlines()[1]


def test_a_passage_s_own_subject_decides_between_sentences_only_after_what_the_question_asks():
    source = "Wipe the kettle with a damp cloth. Descale every four weeks with citric acid."
    question = "How often should I descale the kettle?"
    assert best_quote(question, source, about="Kettle care").text == "Descale every four weeks with citric acid."
    # Without the title, the two sentences hold as many of the question's words: the first comes first.
    assert best_quote(question, source).text.startswith("Wipe the kettle with a damp cloth.")


def test_weakly_relevant_passages_are_quoted_as_the_closest_and_the_mood_says_so(auth_client, library, settings):
    settings.CHAT_MOOD_CONFIDENT_SCORE = 0.999  # nothing reaches it
    body = _chat(auth_client, "How often should I descale the Aurora kettle?")
    assert body["mood"] == "uncertain" and "weakly relevant" in body["mood_reason"]
    assert body["message"].startswith("Nothing I found clearly answers this; these passages come closest")
    assert "four weeks" in body["message"]


def test_noting_a_memory_that_fails_never_fails_the_turn(auth_client, library, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("memory table locked")

    monkeypatch.setattr(pipeline.sessions, "memory_note_from_turn", broken)
    body = _chat(auth_client, "I live in Lisbon.")
    assert body["remembered"] == [] and body["mood"] == "confident"
    assert "memory table locked" in _stage(body, "memory_note")["error"]
    assert Message.objects.filter(session_id=body["session_id"], role="assistant").exists()


def test_with_a_model_the_noted_memories_are_handed_to_it(auth_client, library, hosted_llm, fake_llm):
    fake_llm.reply = lambda messages: "Lisbon, lovely. Noted."
    body = _chat(auth_client, "I live in Lisbon.")
    assert body["message"] == "Lisbon, lovely. Noted." and [m["content"] for m in body["remembered"]] == [
        "Lives in Lisbon."
    ]
    chat_requests = [r for r in fake_llm.requests if r["path"].endswith("/chat/completions") and r["body"]["stream"]]
    system = chat_requests[-1]["body"]["messages"][0]["content"]
    assert re.search(r"Noted just now .*\n- Lives in Lisbon", system)


def test_the_answer_never_repeats_how_to_configure_a_model(auth_client, library):
    for message in ("What is the capital of Mongolia?", "How often should I descale the Aurora kettle?", "Hi!"):
        answer = _chat(auth_client, message)["message"]
        assert "LLM_MODEL" not in answer and "language model" not in answer


@pytest.mark.parametrize(
    "message,kind",
    [
        ("I live in Lisbon.", speech.STATEMENT),
        ("Please remember: I have a severe peanut allergy.", speech.STATEMENT),
        ("Hi! I'm allergic to peanuts.", speech.STATEMENT),
        ("Our wedding anniversary is in June.", speech.STATEMENT),
        ("What is the capital of Mongolia?", speech.QUESTION),
        ("Tell me about the Aurora kettle.", speech.QUESTION),
        ("warranty", speech.QUESTION),
        ("descaling the kettle", speech.QUESTION),
        ("My kettle shows error E3.", speech.QUESTION),
        ("I can't remember how to reset the router.", speech.QUESTION),
        ("Hello there.", speech.GREETING),
        ("Thanks, that helped.", speech.GREETING),
    ],
)
def test_what_a_message_is(message, kind):
    assert speech.message_kind(message) == kind


@pytest.mark.parametrize(
    "content,said",
    [
        ("Lives in Lisbon", "you live in Lisbon"),
        ("Name: Dana Whitfield", "your name is Dana Whitfield"),
        ("Prefers their coffee black", "you prefer your coffee black"),
        ("Usually runs before breakfast", "you usually run before breakfast"),
        ("Is from Dublin", "you are from Dublin"),
        ("Severely allergic to peanuts", "you are severely allergic to peanuts"),
        ("Does not want meetings on Fridays", "you do not want meetings on Fridays"),
        ("My dentist appointment is on Friday at 3pm", "your dentist appointment is on Friday at 3pm"),
        ("Booked the Hoshinoya ryokan for three nights.", "you booked the Hoshinoya ryokan for three nights"),
        ("Just booked two tickets for the concert.", "you just booked two tickets for the concert"),
        ("Has reserved a table at Noma for Friday.", "you have reserved a table at Noma for Friday"),
        ("Married to Ana", "you are married to Ana"),
        ("Interested in jazz", "you are interested in jazz"),
    ],
)
def test_a_memory_is_said_back_to_the_person_it_is_about(content, said):
    assert speech.acknowledged(content) == said


@pytest.mark.parametrize(
    "question,topic",
    [
        ("What is the capital of Mongolia?", "the capital of Mongolia"),
        ("How do I descale my kettle?", "how to descale your kettle"),
        ("Tell me about the Zephyr kettle.", "the Zephyr kettle"),
        ("Where did I park?", "\u201cWhere did I park\u201d"),
    ],
)
def test_what_a_question_asks_about(question, topic):
    assert speech.topic_of(question) == topic


def test_a_carried_list_stays_within_its_bounds():
    items = "\n".join(f"{n}. Step number {n} of the long procedure." for n in range(1, 30))
    source = f"To reset the unit:\n\n{items}\n\nThat is all."
    quote = best_quote("How do I reset the unit?", source)
    lines = quote.text.splitlines()
    assert lines[0] == "To reset the unit:" and len(lines) == 1 + quotes.MAX_LIST_ITEMS
    assert all(line in source for line in lines), "verbatim lines of the source"
    assert len(quote.text) <= quotes.MAX_QUOTE_CHARS


def test_a_quote_that_ends_by_announcing_steps_carries_them():
    source = BREWER.decode().split("## Descaling")[1].split("## Error codes")[0]
    quote = best_quote("What should I do about limescale?", source)
    assert quote.text.splitlines() == ["Limescale builds up in hard water. To descale:", *STEPS]


@pytest.mark.parametrize(
    "question",
    [
        # The first line holds the question's words as well as the answer does.
        "How often should the Aurora kettle be descaled?",
        # It holds "descaling" as the question writes it, where the answer says "Descale".
        "What is the descaling interval for the Aurora kettle?",
    ],
)
def test_of_two_sentences_with_the_question_s_words_the_one_that_answers_is_quoted(question):
    source = (
        "The Aurora kettle descaling guide.\n\n"
        "Descale the Aurora kettle every four weeks with citric acid. Fill it to the MAX line and boil."
    )
    assert best_quote(question, source).text == "Descale the Aurora kettle every four weeks with citric acid."


def test_a_word_that_only_looks_like_a_form_of_another_does_not_match_it():
    # "plane" is not a form of "plan", nor "care" of "car": the sentence about the plan answers.
    source = "The plane leaves at nine and the car waits outside. Our plan is to meet at the gate at eight."
    quote = best_quote("What is the plan?", source)
    assert quote.text == "Our plan is to meet at the gate at eight."


def test_the_settings_page_shows_the_engine_and_how_to_configure_a_model(client, user):
    client.force_login(user)
    page = client.get("/settings/").content.decode()
    assert 'id="language-model"' in page and "None is configured" in page
    assert "LLM_MODEL=ollama/llama3.1" in page and "LLM_API_BASE=http://127.0.0.1:11434" in page
    assert "LLM_MODEL=openai/" in page and "LLM_API_KEY=" in page


def test_the_chat_page_says_once_how_to_add_a_model_and_not_with_a_model(client, user, settings):
    client.force_login(user)
    page = client.get("/chat/").content.decode()
    notice = re.search(r'<div class="notice small" id="model-notice" role="note" hidden>(.*?)</div>', page, re.S)
    assert notice and 'href="/settings/#language-model"' in notice.group(1)
    assert 'id="model-notice-close"' in page, "dismissed once, and the page's script remembers it"
    settings.LLM_MODEL = "openai/test-chat"
    assert 'id="model-notice"' not in client.get("/chat/").content.decode()
    script = (ROOT / "web_app/static/recollect/app/chat.js").read_text()
    assert "localStorage.setItem(NOTICE_DISMISSED" in script


def test_a_statement_lists_as_sources_only_what_its_answer_quotes(auth_client, user, library):
    index_document(user, "brava.md", BREWER)
    body = _chat(auth_client, "My kettle is full of limescale, I want to descale it this weekend.")
    assert body["message"] == "Saved in this conversation; I noted no fact from it as a long-term memory."
    assert body["context"] == [], "no source is shown under an answer that quotes none"
    relevance = _stage(body, "relevance")
    assert relevance["judged"] and relevance["kept"] == []


def test_steps_quoted_from_the_middle_of_a_list_still_render_as_a_list():
    uri = "viking://resources/users/1/documents/d/section_001/chunk_0001"
    fields = dict.fromkeys(("level", "text", "abstract", "overview", "source", "match_reason"), "")
    hit = Hit(uri=uri, doc_id="d", chunk_id="1", content="", title="Descaling", kind="chunk", origin="document",
              score=1.0, **fields)  # fmt: skip

    def quoted(text: str) -> list[str]:
        passage = Judged(hit=hit, quote=quotes.Quote(text, 0, len(text)), relevance=0.9, features={})
        return answer.quotes_block("Quoted:", [passage]).removesuffix(f'" (Descaling, {uri})').splitlines()[1:]

    # "2." cannot start a list right under a line of text in Markdown; after a blank line it can.
    assert quoted(f"{STEPS[0][3:]}\n{STEPS[1]}\n{STEPS[2]}") == [
        f'1. "{STEPS[0][3:]}',
        "   ",
        f"   {STEPS[1]}",
        f"   {STEPS[2]}",
    ]
    # A list that starts at 1, and a quote of one line, are left as they are.
    assert quoted(f"To descale:\n{STEPS[0]}") == ['1. "To descale:', f"   {STEPS[0]}"]
    assert quoted(STEPS[1]) == [f'1. "{STEPS[1]}']


@pytest.mark.parametrize(
    "message", ["Remember this conversation", "Can you save this chat?", "Please remember this whole conversation."]
)
def test_asking_to_remember_the_conversation_says_how_it_is_done(auth_client, library, message):
    body = _chat(auth_client, message)
    assert body["message"] == answer.KEEP_CONVERSATION and "Remember this conversation" in body["message"]
    assert body["context"] == [] and body["remembered"] == []
    assert speech.message_kind(message) == speech.STATEMENT
    told = _chat(auth_client, "Remember this conversation. I live in Lisbon.")
    assert told["message"] == f"Noted: you live in Lisbon. I'll keep that in mind.\n\n{answer.KEEP_CONVERSATION}"


def test_a_memory_found_is_quoted_once_not_again_as_the_turn_it_was_drawn_from(
    auth_client, user, library, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        told = _chat(auth_client, "Please remember: I have a severe peanut allergy.")
    memory = Memory.objects.get(owner=user)
    body = _chat(auth_client, "Do I have any allergies?")
    assert [hit["uri"] for hit in body["context"]] == [memory.uri], "the memory, not the turn it came from"
    (echo,) = [e for e in _stage(body, "conversations")["echoes"] if e["why"].startswith("is what a memory")]
    said = Message.objects.get(session_id=told["session_id"], role="user")
    assert echo["id"] == said.id


@pytest.mark.parametrize("question", ["How do I get rid of limescale?", "How do I remove limescale from the kettle?"])
def test_getting_rid_of_something_is_the_frame_and_the_steps_that_do_it_answer(auth_client, user, question):
    index_document(user, "brava.md", BREWER)
    body = _chat(auth_client, question)
    assert body["mood"] == "confident", _stage(body, "relevance")["judged"]
    assert [item["title"] for item in body["context"]] == ["Descaling"]
    assert f'"Limescale builds up in hard water. To descale:\n   {STEPS[0]}' in body["message"]


def test_a_fact_noted_earlier_answers_a_question_that_never_names_it(
    auth_client, user, library, django_capture_on_commit_callbacks
):
    """ "What should I avoid eating?" shares no word with "Is severely allergic to peanuts.": the memory is
    embedded and judged with what its kind of fact means for the person (a food to avoid eating), so it
    is found and relied on; it is cited by its label."""
    with django_capture_on_commit_callbacks(execute=True):  # the memory is embedded, as a worker would
        _chat(auth_client, "Please remember: I have a severe peanut allergy.")
    memory = Memory.objects.get(owner=user)
    with django_capture_on_commit_callbacks(execute=True):
        body = _chat(auth_client, "What should I avoid eating?")
    assert [(hit["uri"], hit["title"]) for hit in body["context"]] == [(memory.uri, "Peanut allergy")]
    assert '"Is severely allergic to peanuts." (Peanut allergy, ' in body["message"]
    assert body["mood"] == "confident", "relied on, not merely the closest passage"
    assert "kettle" not in body["message"].lower() and "router" not in body["message"].lower()


def test_a_question_about_the_person_right_after_they_introduced_themselves_finds_what_it_asks(
    auth_client, user, library, django_capture_on_commit_callbacks
):
    """The question follows the introduction in the same chat and opens as a follow-up of it ("And ..."),
    so it is rewritten with what was just said; yet it asks about eating, and the name and the city said
    just before must not pull the answer to them."""
    with django_capture_on_commit_callbacks(execute=True):
        told = _chat(auth_client, "I'm Priya and I live in Lisbon. I am allergic to peanuts.")
    allergy = Memory.objects.get(owner=user, key="peanut_allergy")
    with django_capture_on_commit_callbacks(execute=True):
        body = _chat(auth_client, "And what should I avoid eating?", session_id=told["session_id"])
    assert body["context"][0]["uri"] == allergy.uri, body["message"]
    assert "peanuts" in body["message"] and "Lisbon" not in body["message"]
    assert "as you asked it" in body["context"][0]["match_reason"]
    rewritten = _stage(body, "rewrite")["query"]
    assert _stage(body, "memories")["readings"] == [rewritten, "And what should I avoid eating?"]
