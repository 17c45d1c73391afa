"""The built-in engine's tiers and overviews, offline: a document's L0 and L1 are sentences about its
text (no instructions passed off as descriptions, no markup, no dangling list items), and an
archive's overview reads as a person would write it (a topic phrase, open items still open)."""

import re

import pytest

from foundation import ai
from foundation.ai import extractive
from foundation.ai.engines import ExtractiveEngine, Overview, Turn, abstract_of, build_overview

MARKUP = re.compile(r"\*\*|__|`|^#|\s#{1,6}\s|\]\(|\[[^\]]*\]|\||<[a-z/]", re.MULTILINE)

SAFETY = """- Never immerse the base, cord or plug in water.
- **Do not** fill the kettle above the `MAX` mark; boiling water may spill out.
- Keep the kettle out of reach of children.
- The kettle must only be used with the supplied base."""

FILLING = """Before first use, boil a full kettle of water and discard it. Repeat this twice.

1. Lift the kettle off the base and open the lid.
2. Fill with fresh water between the MIN and MAX marks.
3. Press the switch: the light turns blue.

The kettle switches off automatically when the water boils."""

ERROR_CODES = """| Code | Meaning |
|------|---------|
| E1 | Boiled dry |
| E2 | Sensor fault |"""

IN_THE_BOX = """The box contains:

- Lumen K2 kettle
- Power base
- Removable limescale filter"""

describe = ExtractiveEngine().describe


@pytest.mark.parametrize(
    ("marked", "plain"),
    [
        ("**Do not** fill above `MAX`.", "Do not fill above MAX."),
        ("See [the tips](https://example.com/tips) and ![a diagram](d.png).", "See the tips and a diagram."),
        ("## 7. Warranty ##", "7. Warranty"),
        ("> _Quoted_ __text__ with ~~old~~ <b>tags</b> &amp; entities", "Quoted text with old tags & entities"),
        ("| E1 | Boiled dry |", "E1, Boiled dry"),
        ("- a list item", "a list item"),
        ("Set execution_timeout and snake_case_names * 2", "Set execution_timeout and snake_case_names * 2"),
    ],
)
def test_markup_goes_and_the_words_stay(marked, plain):
    assert extractive.plain_text(marked) == plain


@pytest.mark.parametrize(
    "sentence",
    [
        "Repeat this twice.",
        "Press and hold the button.",
        "Never immerse the base in water.",
        "Do not use abrasive cleaners.",
        "Stop the kettle and unplug it.",
        "Make sure the lid is closed.",
        "Don't overfill the kettle.",
        "If the light flashes red, hold the reset button for ten seconds.",
        "Then fill the kettle with fresh water.",
        "Please keep your receipt.",
        "See the descaling tips for more.",
        "Set execution_timeout to 1800 seconds on the load task.",
    ],
)
def test_instructions_are_recognised(sentence):
    assert extractive.is_instruction(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The kettle switches off automatically when the water boils.",
        "Contact details are listed on the back cover.",
        "Water damage is not covered by the warranty.",
        "Returns are accepted within 30 days.",
        "Use of the kettle outdoors voids the warranty.",
        "In 2020, the company released the first model.",
        "You should descale the kettle every four weeks.",
        "Make and model are printed on the label.",
        "Select models have a glass jug.",
    ],
)
def test_statements_are_not_taken_for_instructions(sentence):
    assert not extractive.is_instruction(sentence)


def _sentences(text: str) -> list[str]:
    return extractive.split_sentences(text)


def test_an_overview_reports_instructions_instead_of_passing_them_off_as_descriptions():
    overview = describe([FILLING], max_words=60)
    assert "Repeat this twice." not in overview
    assert not any(extractive.is_instruction(s) for s in _sentences(overview)), overview
    assert overview.startswith("It says to boil a full kettle of water and discard it before first use, to ")
    assert "The kettle switches off automatically when the water boils." in overview


def test_an_overview_has_no_markup_and_no_dangling_list_items():
    for text in (SAFETY, FILLING, ERROR_CODES, IN_THE_BOX):
        overview = describe([text], max_words=60)
        assert overview and not MARKUP.search(overview), overview
        for sentence in _sentences(overview):
            assert sentence[-1] in ".!" and len(sentence.split()) >= 3, f"not a sentence: {sentence!r}"


def test_a_list_of_short_items_is_one_sentence_with_its_introduction():
    assert describe([IN_THE_BOX], max_words=60) == (
        "The box contains Lumen K2 kettle, power base and removable limescale filter."
    )


@pytest.mark.parametrize(
    "text",
    ["Parts:\n- \n- .\n", "Spare parts:\n-   \n", "| code | |\n|---|---|\n| E1 | |\n"],
)
def test_empty_list_items_and_table_cells_are_described_without_failing(text):
    # An empty bullet in a README once stopped the whole document from being indexed.
    described = describe([text], max_words=60)
    assert described and "  " not in described and not described.endswith(" .")


def test_a_table_is_described_in_a_sentence():
    assert (
        describe([ERROR_CODES], max_words=60) == "For each code it has the meaning: E1, Boiled dry; E2, Sensor fault."
    )


def test_an_instruction_is_reported_with_the_reason_given_for_it():
    overview = describe([SAFETY], max_words=80)
    assert "It says never to immerse the base, cord or plug in water." in overview
    assert "It says not to fill the kettle above the MAX mark; boiling water may spill out." in overview
    assert "It says to keep the kettle out of reach of children." in overview
    assert "The kettle must only be used with the supplied base." in overview


@pytest.mark.parametrize(
    ("instruction", "reported"),
    [
        ("Do not use abrasive cleaners.", "It says not to use abrasive cleaners."),
        ("Never immerse the base.", "It says never to immerse the base."),
        ("Don't stop the pump.", "It says not to stop the pump."),
        ("Always unplug it before cleaning.", "It says always to unplug it before cleaning."),
        ("If it flashes red, hold the reset button.", "It says to hold the reset button if it flashes red."),
        ("Please see the tips.", "It says to see the tips."),
        (
            "Wipe the outside with a damp cloth. Do not use abrasive cleaners.",
            "It says to wipe the outside with a damp cloth and not to use abrasive cleaners.",
        ),
    ],
)
def test_an_instruction_is_reported_as_what_the_text_is_about(instruction, reported):
    assert describe([instruction], max_words=30) == reported


def test_an_overview_is_deterministic_and_bounded():
    text = "\n\n".join([SAFETY, FILLING, ERROR_CODES, IN_THE_BOX])
    assert describe([text], max_words=40) == describe([text], max_words=40)
    assert len(describe([text], max_words=40).split()) <= 40


def test_a_chunks_abstract_is_its_most_informative_statement():
    overview = describe([FILLING], max_words=60)
    assert abstract_of(overview) == "The kettle switches off automatically when the water boils."


def test_a_sections_abstract_says_what_it_covers_with_its_most_telling_statement():
    warranty = describe(
        ["The Lumen K2 is covered by a two-year warranty from the date of purchase. Keep your receipt."],
        max_words=60,
    )
    assert abstract_of(warranty, title="7. Warranty") == (
        "Warranty: The Lumen K2 is covered by a two-year warranty from the date of purchase."
    )


def test_a_documents_abstract_says_what_it_is_and_how_it_opens():
    line = abstract_of(
        "Repeat this twice. The kettle holds 1.7 litres.",
        title="Lumen K2 Kettle User Manual",
        opening="This manual covers the Lumen K2 kettle: safety, filling, descaling and its warranty.",
    )
    assert line == (
        "Lumen K2 Kettle User Manual: This manual covers the Lumen K2 kettle: safety, filling, descaling and its "
        "warranty."
    )
    assert abstract_of("Repeat this twice. The kettle holds 1.7 litres.", title="Manual") == (
        "Manual: The kettle holds 1.7 litres."
    ), "without an opening, the overview's most telling statement"


def test_a_vector_is_made_from_what_the_text_says_not_from_how_a_tier_tells_it():
    said = extractive.as_said(describe([FILLING], max_words=60))
    assert said.startswith("Boil a full kettle of water and discard it before first use. ") and "It says" not in said
    assert extractive.as_said("It says never to immerse it and not to overfill it. It has a lid.") == (
        "Never immerse it. Do not overfill it. A lid."
    )
    assert extractive.as_said("It says that the lid is open.") == "It says that the lid is open."


@pytest.mark.django_db
def test_a_models_overview_is_cleaned_of_markup(hosted_llm):
    hosted_llm.reply = lambda messages: (
        "## Overview\n\n- **Warranty**: two years from purchase\n- See [the form](x.pdf)"
    )
    overview = ai.text_engine().describe(["The warranty lasts two years."], max_words=50)
    assert overview == "Overview. Warranty: two years from purchase. See the form."


# --- Archive overviews --------------------------------------------------------------------------------

ALLERGY_AND_MOVE = [
    Turn("user", "Hi! Just so you know, I'm allergic to peanuts, so please keep that in mind for any recipes."),
    Turn("assistant", "Noted: I will leave peanuts and peanut oil out of every recipe I suggest."),
    Turn("user", "Also, we are moving to Lisbon next month and the new kitchen only has a gas hob."),
    Turn("assistant", "Congratulations on the move to Lisbon! A gas hob works well; keep the flame low for sauces."),
    Turn("user", "Can you suggest a peanut-free dessert for six people?"),
    Turn("assistant", "Pastel de nata: custard tarts made with eggs, milk, sugar and puff pastry, with no nuts."),
]


def test_an_archive_topic_is_a_phrase_of_the_conversations_own_words():
    topic = build_overview(ALLERGY_AND_MOVE).topic
    assert topic == "Peanut allergy and move to Lisbon"
    assert "," not in topic and len(topic.split()) <= 8


def test_an_archive_topic_never_lists_stems():
    overview = build_overview(
        [
            Turn("user", "I'm allergic to peanuts."),
            Turn("user", "We moved to Lisbon last month."),
            Turn("assistant", "Lisbon has many peanut-free bakeries."),
        ]
    )
    said = " ".join(t.content for t in ALLERGY_AND_MOVE).lower() + " we moved to lisbon last month allergy move"
    assert "," not in overview.topic and "month" not in overview.topic.lower() and "last" not in overview.topic
    assert all(word.lower() in said for word in overview.topic.split()), overview.topic


def test_a_question_the_next_turn_answered_is_not_open():
    overview = build_overview(ALLERGY_AND_MOVE)
    assert overview.open_items == []


def test_a_question_settled_by_a_later_user_turn_is_not_open_and_an_unanswered_one_is():
    overview = build_overview(
        [
            Turn("user", "Our nightly export job fails with an out of memory error."),
            Turn("assistant", "Raise the worker memory limit to 2 GB and split the export into daily files."),
            Turn("user", "Should I also compress the files?"),
            Turn("user", "Never mind, I found the compression flag in the docs."),
            Turn("user", "Who owns the export bucket?"),
            Turn("assistant", "I don't know; the infrastructure team would."),
        ]
    )
    assert overview.open_items == ["Who owns the export bucket?"]


def test_a_question_answered_after_the_assistant_asked_back_is_not_open():
    asked_back = [
        Turn("user", "Can you help me write onboarding notes for analysts who need the warehouse?"),
        Turn("assistant", "Sure. What do they connect to, and with which account?"),
        Turn("user", "The warehouse is ClickHouse on port 8123, and analysts use the read-only role."),
    ]
    assert build_overview(asked_back).open_items == [
        "Can you help me write onboarding notes for analysts who need the warehouse?"
    ], "asked back, not yet answered"
    answered = [*asked_back, Turn("assistant", "Here are the onboarding notes: connect to ClickHouse on port 8123.")]
    assert build_overview(answered).open_items == []


def test_an_archive_abstract_reads_as_one_line():
    overview = build_overview(ALLERGY_AND_MOVE)
    line = overview.abstract
    assert "\n" not in line and line.startswith("Peanut allergy and move to Lisbon: ")
    assert len(line.split()) <= 31 and not line.endswith(" ...")
    long = Overview(topic="Export job", outcome=" ".join(["word"] * 60), intent="Fix the export job.")
    assert long.abstract == "Export job: Fix the export job.", "a request that fits reads better than a cut outcome"
