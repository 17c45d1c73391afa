"""What a message is and how the built-in engine speaks of it, without a language model.

A message is a ``question`` (a question, a request, a search by keywords, or a problem reported, which
asks for help), a ``statement`` (something the person says about themselves or asks to be remembered)
or a ``greeting`` (pleasantries alone). The built-in answer acknowledges a statement by what was noted
from it, worded from the memory's own text in the second person ("Lives in Lisbon" -> "you live in
Lisbon"), and says what a question was about when nothing relevant was found ("What is the capital of
Mongolia?" -> "the capital of Mongolia").
"""

from __future__ import annotations

import re

from foundation.ai import extractive

QUESTION, STATEMENT, GREETING = "question", "statement", "greeting"

# Openings that ask for something: questions, requests and commands to the assistant.
_ASKING = re.compile(
    r"^(?:how|what|what's|why|when|where|which|who|whom|whose|can|could|would|should|shall|will|is|are|am|"
    r"was|were|do|does|did|has|have|had|may|might|tell|show|explain|describe|list|give|find|search|look|"
    r"summari[sz]e|compare|define|remind|help|check|recommend|suggest|any|anything)\b",
    re.IGNORECASE,
)
_ASKING_ANYWHERE = re.compile(
    r"\b(?:can you|could you|would you|will you|please (?:tell|show|explain|find|help|give|list|check)|"
    r"i (?:want|need|would like|'d like) to know|i wonder|do you know|help me|i(?:'m| am) looking for|"
    r"i (?:can't|cannot|don't) (?:remember|find|figure out|work out|know)|how (?:do|can|should) i)\b",
    re.IGNORECASE,
)
# A problem reported ("my kettle shows error E3", "the app won't connect") asks for help.
_PROBLEM = re.compile(
    r"\b(?:error|errors|fails?|failing|failed|broken|crash(?:es|ed)?|stuck|not working|doesn't work|won't|"
    r"isn't working|can't (?:connect|log ?in|find|open|start))\b",
    re.IGNORECASE,
)
# A request to remember is a statement, whatever its wording.
_TO_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:remember|note|keep in mind|don't forget|for the record|fyi|just so you know)\b", re.IGNORECASE
)
# A request to keep the conversation itself ("Remember this conversation", "can you save this chat?"): the
# page's "Remember this conversation" does that, with a summary; a chat turn only notes facts.
_KEEP_CONVERSATION = re.compile(
    r"^(?:(?:please|can you|could you|would you|will you)\s+)?(?:remember|save|keep|archive|memori[sz]e)\s+"
    r"(?:this|the|our|all of this|all this)\s+(?:whole\s+|entire\s+)?(?:conversation|chat|discussion|session|thread)\b",
    re.IGNORECASE,
)
# Someone speaking of themselves or their own ("I ...", "my ...", "we ...", "our ...").
_FIRST_PERSON = re.compile(r"^(?:i|i'm|i've|i'd|i'll|im|my|we|we're|we've|our|me|mine)\b", re.IGNORECASE)
_GREETING = re.compile(r"^(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening|day))\b", re.IGNORECASE)
_THANKS = re.compile(r"^(?:thanks|thank you|cheers|many thanks|ta)\b", re.IGNORECASE)
_FAREWELL = re.compile(r"^(?:bye|goodbye|see you|good night|farewell)\b", re.IGNORECASE)
# Minimum words for a sentence without closing punctuation to be a statement rather than keywords.
STATEMENT_MIN_WORDS = 3


def _sentence_kind(sentence: str) -> str:
    text = sentence.strip()
    if extractive.is_pleasantry(text):
        return GREETING
    if _TO_REMEMBER.match(text) or _KEEP_CONVERSATION.match(text):
        return STATEMENT
    if text.endswith("?") or _ASKING.match(text) or _ASKING_ANYWHERE.search(text) or _PROBLEM.search(text):
        return QUESTION
    if _FIRST_PERSON.match(text) and len(text.split()) >= 2:
        return STATEMENT
    # A sentence that ends as one says something; a few words without it are searched for.
    if text.endswith((".", "!")) and len(text.split()) >= STATEMENT_MIN_WORDS:
        return STATEMENT
    return QUESTION


def message_kind(message: str) -> str:
    """``question`` when any sentence asks something; else ``statement`` when any says something;
    else (pleasantries alone) ``greeting``."""
    kinds = {_sentence_kind(sentence) for sentence in extractive.split_sentences(message)}
    for kind in (QUESTION, STATEMENT, GREETING):
        if kind in kinds:
            return kind
    return QUESTION


def asks_to_keep_conversation(message: str) -> bool:
    """Whether a sentence of the message asks to remember the conversation itself, not a fact in it."""
    return any(_KEEP_CONVERSATION.match(sentence.strip()) for sentence in extractive.split_sentences(message))


def greeting_reply(message: str) -> str:
    """A reply in kind to the pleasantry a message opens with, or "" when it opens with none."""
    sentences = extractive.split_sentences(message)
    first = sentences[0].strip() if sentences else ""
    if not extractive.is_pleasantry(first) and not _GREETING.match(first):
        return ""
    if _THANKS.match(first):
        return "You're welcome."
    if _FAREWELL.match(first):
        return "Goodbye!"
    if _GREETING.match(first):
        return "Hello!"
    return ""


_PRONOUNS = {
    "i": "you",
    "me": "you",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "i'm": "you're",
    "i've": "you've",
    "i'd": "you'd",
    "i'll": "you'll",
    "am": "are",
    "their": "your",
    "theirs": "yours",
    "them": "you",
    "themselves": "yourself",
    "they": "you",
    "they're": "you're",
    "they've": "you've",
}
_PRONOUN = re.compile(r"\b(?:" + "|".join(re.escape(word) for word in _PRONOUNS) + r")\b", re.IGNORECASE)


def second_person(text: str) -> str:
    """ "my coffee" -> "your coffee", "they prefer" -> "you prefer": the person addressed, not described."""
    return _PRONOUN.sub(lambda match: _PRONOUNS[match.group(0).lower()], text)


_IRREGULAR = {"is": "are", "has": "have", "does": "do", "was": "were", "goes": "go"}
# Words that may open a memory before its verb ("Usually drinks tea", "Often works late").
_ADVERBS = frozenset(
    [
        "usually",
        "always",
        "often",
        "never",
        "sometimes",
        "normally",
        "typically",
        "regularly",
        "rarely",
        "also",
        "still",
        "now",
        "currently",
        "just",
        "recently",
        "already",
    ]
)
# "Booked the Hoshinoya ryokan", "Moved to Porto last year": something done, not what the person is
# ("Married to Ana", "Interested in jazz": an adjective, then what it is about).
_DONE = re.compile(
    r"^\w+ed\s+(?!(?:to|from|in|into|at|with|by|of|on|for|about|against|as|after|over|up)\b)\S", re.IGNORECASE
)
# Memories that open with an adjective say what the person is ("Allergic to peanuts").
_ADJECTIVE = re.compile(r"^(?:\w+ly\s+)?(?:\w+(?:ic|ed|ant|ent|ous|ive|ful|ible|able|ian|an)|left-handed)\b")
_LABELLED = re.compile(r"^(?P<label>[A-Z][\w' -]{0,40}):\s+(?P<value>.+)$")


def _base_form(verb: str) -> str | None:
    """ "lives" -> "live", "prefers" -> "prefer", "carries" -> "carry"; None when not a verb in -s."""
    word = verb.lower()
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zes")):
        return word[:-2]
    if len(word) > 2 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return None


def acknowledged(content: str) -> str:
    """A memory's text as said to the person it is about: "Lives in Lisbon" -> "you live in Lisbon",
    "Name: Dana" -> "your name is Dana", "Allergic to peanuts" -> "you are allergic to peanuts"; a text
    of another shape is kept as it is."""
    text = content.strip().rstrip(".")
    if match := _LABELLED.match(text):
        return f"your {match.group('label').lower()} is {second_person(match.group('value'))}"
    words = text.split()
    leading = []
    while words and words[0].lower() in _ADVERBS and len(words) > 1:
        leading.append(words.pop(0).lower())
    if words and (verb := _base_form(words[0])):
        return " ".join(["you", *leading, verb, second_person(" ".join(words[1:]))]).strip()
    if words and _DONE.match(" ".join(words)):
        return " ".join(["you", *leading, words[0].lower(), second_person(" ".join(words[1:]))]).strip()
    if words and not leading and _ADJECTIVE.match(text.lower()):
        return f"you are {second_person(text[0].lower() + text[1:])}"
    return second_person(text)


_TOPIC_PATTERNS = (
    re.compile(
        r"^(?:(?:can|could|would) you\s+)?(?:please\s+)?(?:tell me|remind me|explain|describe|show me|"
        r"do you know|what do you know|is there anything|anything)\s+(?:anything\s+)?(?:about\s+|of\s+)?(?P<t>.+)$",
        re.IGNORECASE,
    ),
    re.compile(r"^(?:what|who)(?:'s|\s+is|\s+are|\s+was|\s+were)\s+(?P<t>.+)$", re.IGNORECASE),
    re.compile(r"^what about\s+(?P<t>.+)$", re.IGNORECASE),
)
_HOW_TO = re.compile(r"^how (?:do|can|should|could|would) (?:i|we|you|one)\s+(?P<t>.+)$", re.IGNORECASE)


def topic_of(question: str) -> str:
    """What a question asks about, for "I found nothing about ...": "the capital of Mongolia" for
    "What is the capital of Mongolia?", "how to descale it" for "How do I descale it?"; otherwise the
    question itself, in quotes."""
    text = " ".join(question.split()).rstrip("?.! ")
    if match := _HOW_TO.match(text):
        return "how to " + second_person(match.group("t"))
    for pattern in _TOPIC_PATTERNS:
        if match := pattern.match(text):
            return second_person(match.group("t"))
    return f"\u201c{text}\u201d"


def question_part(message: str) -> str:
    """The sentence of ``message`` that asks (the first), or the whole message when none does."""
    sentences = extractive.split_sentences(message)
    return next((s for s in sentences if _sentence_kind(s) == QUESTION), message)
