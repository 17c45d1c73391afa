"""Words that say when something happened, which recall weighs for questions that ask when."""

import pytest

from foundation.when import asks_when, says_when


@pytest.mark.parametrize(
    "text",
    [
        "We got her last Saturday!",
        "The tiler comes on THURSDAY.",
        "That was two weeks ago.",
        "See you next   week",
        "It opened on the 21st",
        "Back in 1999 we lived in Leeds.",
        "Invoice dated 2023-05-01",
        "Let's meet tomorrow",
        "in May",
    ],
)
def test_words_that_say_when_are_found_in_any_case(text):
    assert says_when(text)


@pytest.mark.parametrize(
    "text",
    [
        "The billing service failed over twice.",
        "Ticket OPS-21433 is closed.",
        "The agony of the build",
        "last, week",
        "this weekly report",
        "v2023x shipped",
        "the 121st run",
    ],
)
def test_words_that_only_look_like_a_time_are_not(text):
    assert not says_when(text)


def test_a_question_about_a_time_is_told_from_others():
    assert asks_when("When did she adopt the kitten?")
    assert not asks_when("Who adopted the kitten?")
