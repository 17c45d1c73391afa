"""The built-in memory extraction, as a person would judge it: what it keeps of what they said, under which
key and in which words, and what it leaves alone."""

from __future__ import annotations

import pytest

from bench.memory_eval import evaluate
from bench.memoryrecall import corpus as recall_corpus
from bench.memoryset import corpus
from foundation.ai import memories, memory_text


def _found(*said: str) -> list[tuple[str, str, str]]:
    return [(c.category, c.key, c.content) for c in memories.extract([("user", s) for s in said])]


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("Hi, I'm Priya", ("profile", "name", "Is called Priya.")),
        ("hey there! name's Tomasz, nice to meet you", ("profile", "name", "Is called Tomasz.")),
        ("just turned 40 last week, feeling old lol", ("profile", "age", "Is 40 years old.")),
        (
            "Heads up, I'm severely allergic to shellfish - I carry an EpiPen.",
            ("profile", "shellfish_allergy", "Is severely allergic to shellfish."),
        ),
        (
            "I have a mild intolerance to fructose.",
            ("profile", "fructose_intolerance", "Has a mild intolerance to fructose."),
        ),
        (
            "I take 50mg of sertraline every morning.",
            ("profile", "sertraline", "Takes 50mg of sertraline every morning."),
        ),
        (
            "I tore my ACL skiing in January so I'm on crutches.",
            ("profile", "acl_injury", "Tore their ACL skiing in January."),
        ),
        ("I was diagnosed with ADHD last year.", ("profile", "adhd", "Was diagnosed with ADHD last year.")),
        ("I no longer eat meat, trying to be kinder to the planet.", ("preferences", "diet", "No longer eats meat.")),
        (
            "i dont eat beef for religious reasons",
            ("preferences", "no_beef", "Does not eat beef for religious reasons."),
        ),
        ("We keep halal at home.", ("preferences", "halal", "Keeps halal at home.")),
        ("I have a twin sister, Noor.", ("entities", "sister_noor", "Has a twin sister, Noor.")),
        ("We have two kids, 8 and 11.", ("entities", "children", "Has two kids, aged 8 and 11.")),
        ("My dad passed away last year.", ("entities", "father", "Their father passed away last year.")),
        ("I'm on the data platform team.", ("profile", "team", "Is on the data platform team.")),
        ("I work four days a week, Fridays off.", ("profile", "work_schedule", "Works four days a week.")),
        ("originally from Lagos", ("profile", "origin", "Is from Lagos.")),
        ("My birthday is on 14 March.", ("events", "birthday", "Their birthday is on 14 March.")),
        (
            "My dentist appointment is on Friday at 3pm.",
            ("events", "dentist_appointment", "Their dentist appointment is on Friday at 3pm."),
        ),
        (
            "Next month I start a new job at Spotify.",
            ("events", "job_at_spotify", "Starts a new job at Spotify next month."),
        ),
        ("I prefer oat milk in my coffee.", ("preferences", "oat_milk_in_coffee", "Prefers oat milk in their coffee.")),
        ("I'm not a fan of horror movies.", ("preferences", "horror_movie", "Dislikes horror movies.")),
        (
            "please never use emojis in replies",
            ("preferences", "never_emoji_in_reply", "Asks to never use emojis in replies."),
        ),
        (
            "Every weekend I call my grandmother.",
            ("patterns", "call_grandmother", "Calls their grandmother every weekend."),
        ),
        ("Remember that my locker code is 4411.", ("entities", "locker_code", "Their locker code is 4411.")),
        (
            "Please remember: I park on level 3 at work.",
            ("patterns", "park_on_level_3_at_work", "Parks on level 3 at work."),
        ),
    ],
)
def test_each_kind_of_fact_is_kept_as_a_sentence_about_the_user(said, expected):
    assert _found(said) == [expected]


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        # Facts said in passing, the way people tell them in the middle of asking for something else.
        (
            "I'm the head chef at Little Fig.",
            [("profile", "occupation", "Is a head chef."), ("profile", "employer", "Works at Little Fig.")],
        ),
        ("We moved from Leeds to Bristol in spring.", [("profile", "location", "Lives in Bristol.")]),
        ("I've been in Oslo for 3 years now.", [("profile", "location", "Lives in Oslo.")]),
        ("I can't take aspirin, I'm allergic.", [("profile", "aspirin_allergy", "Is allergic to aspirin.")]),
        (
            "I can't eat peanuts as I'm severely allergic",
            [("profile", "peanut_allergy", "Is severely allergic to peanuts.")],
        ),
        ("The GP put me on metformin last month.", [("profile", "metformin", "Is on metformin.")]),
        (
            "I went completely vegetarian in January.",
            [("preferences", "diet", "Went completely vegetarian in January.")],
        ),
        ("Hi, I'm Aiko \U0001f60a could you help me with a letter?", [("profile", "name", "Is called Aiko.")]),
        ("My eldest boy Leo is 12.", [("entities", "son_leo", "Has an eldest son, Leo, aged 12.")]),
        ("I need to renew my asthma inhaler.", [("profile", "asthma", "Has asthma.")]),
        ("My husband is Joris.", [("entities", "partner", "Their husband is Joris.")]),
        (
            "My son is Theo and he is allergic to eggs.",
            [
                ("entities", "son_theo", "Has a son, Theo."),
                ("entities", "son_theo_egg_allergy", "Their son Theo is allergic to eggs."),
            ],
        ),
        (
            "I go to the office on Mondays and Wednesdays.",
            [("profile", "work_schedule", "Goes to the office on Mondays and Wednesdays.")],
        ),
        ("Reminder for myself: dentist 14 May at 8:30", [("events", "dentist_at_8_30", "Dentist 14 May at 8:30.")]),
    ],
)
def test_a_fact_said_in_passing_is_kept(said, expected):
    assert _found(said) == expected


def test_both_ways_of_telling_a_peanut_allergy_are_one_memory_and_the_latest_wins():
    assert _found("Hi! I'm allergic to peanuts.") == [("profile", "peanut_allergy", "Is allergic to peanuts.")]
    assert _found("Hi! I'm allergic to peanuts.", "Please remember: I have a severe peanut allergy.") == [
        ("profile", "peanut_allergy", "Is severely allergic to peanuts.")
    ]


def test_a_later_word_on_a_subject_keeps_its_key():
    assert _found("My peanut allergy is actually mild.") == [
        ("profile", "peanut_allergy", "Is mildly allergic to peanuts.")
    ]
    assert _found("I live in Lisbon now.", "I moved to Porto") == [("profile", "location", "Lives in Porto.")]
    assert _found("I'm vegetarian.", "Went vegan in January") == [("preferences", "diet", "Went vegan in January.")]


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        (
            "I'm allergic to almonds and I'm also lactose intolerant.",
            {
                ("profile", "almond_allergy", "Is allergic to almonds."),
                ("profile", "lactose_intolerance", "Is lactose intolerant."),
            },
        ),
        (
            "Quick one: I'm allergic to cats and also to dust mites.",
            {
                ("profile", "cat_allergy", "Is allergic to cats."),
                ("profile", "dust_mite_allergy", "Is allergic to dust mites."),
            },
        ),
        (
            "My daughter Mia is 6 and my son Leo just turned 3.",
            {
                ("entities", "daughter_mia", "Has a daughter, Mia, aged 6."),
                ("entities", "son_leo", "Has a son, Leo, aged 3."),
            },
        ),
        (
            "I live in Dublin and I work at Stripe.",
            {("profile", "location", "Lives in Dublin."), ("profile", "employer", "Works at Stripe.")},
        ),
        (
            "I love dogs but I'm allergic to them",
            {("preferences", "dog", "Loves dogs."), ("profile", "dog_allergy", "Is allergic to dogs.")},
        ),
    ],
)
def test_several_facts_in_one_sentence_are_each_kept(said, expected):
    assert set(_found(said)) == expected


def test_a_greeting_with_several_facts_keeps_them_all():
    found = {
        (category, key)
        for category, key, _ in _found(
            "hi!! im Jess, 31, from Glasgow originally but living in Bristol now. "
            "i'm coeliac so everything needs to be gluten free"
        )
    }
    assert found == {
        ("profile", "name"),
        ("profile", "age"),
        ("profile", "origin"),
        ("profile", "location"),
        ("profile", "coeliac_disease"),
    }


def test_a_family_members_own_fact_is_kept_as_theirs_and_a_colleagues_not_at_all():
    assert set(_found("my son Oliver is allergic to eggs")) == {
        ("entities", "son_oliver", "Has a son, Oliver."),
        ("entities", "son_oliver_egg_allergy", "Their son Oliver is allergic to eggs."),
    }
    assert _found("My husband has a shellfish allergy.") == [
        ("entities", "partner_shellfish_allergy", "Their husband is allergic to shellfish.")
    ]
    assert _found("my colleague is allergic to nuts") == []
    assert _found("My friend Tom is vegan.") == []


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        # Denied, it is no description of them; of what they eat, it is a fact of its own.
        (
            "My son Theo can't eat eggs.",
            {
                ("entities", "son_theo", "Has a son, Theo."),
                ("entities", "son_theo_no_egg", "Their son Theo does not eat eggs."),
            },
        ),
        ("My sister Mei is not coming.", {("entities", "sister_mei", "Has a sister, Mei.")}),
        # What is said of someone or something of theirs is not said of them.
        ("My sister Mei's birthday is in May.", {("entities", "sister_mei", "Has a sister, Mei.")}),
        ("My sister Mei's husband has cancer.", {("entities", "sister_mei", "Has a sister, Mei.")}),
        ("My sister Mei's married.", {("entities", "sister_mei", "Has a sister, Mei, who is married.")}),
    ],
)
def test_what_is_said_of_a_family_member_reads_as_a_sentence(said, expected):
    assert expected <= set(_found(said)), _found(said)
    assert all(" is can" not in content and " who 's" not in content for _, _, content in _found(said))


def test_what_is_said_of_someone_named_before_is_said_of_the_relation_they_were_named_as():
    family = memories.kin_of(
        [
            ("entities", "Has a sister, Mei."),
            ("entities", "Their husband is Tom, who works as a pilot."),
            ("entities", "Has an older brother, Ken."),
            ("profile", "Is called Dana."),
        ]
    )
    assert family == {"Mei": "sister", "Tom": "husband", "Ken": "brother"}
    said = "We booked the ryokan. Mei is vegetarian, and Tom can't eat shellfish. So Ken is allergic to cats."
    assert memories.names_someone(said)
    read = memories.with_kin_named(said, family)
    assert read == (
        "We booked the ryokan. my sister Mei is vegetarian, and my husband Tom can't eat shellfish."
        " So my brother Ken is allergic to cats."
    )
    kept = memories.said_of_kin(memories.extract([("user", said)]), memories.extract([("user", read)]), family)
    assert {(c.key, c.content) for c in kept} >= {
        ("sister_mei_diet", "Their sister Mei is vegetarian."),
        ("partner_tom_no_shellfish", "Their husband Tom does not eat shellfish."),
        ("brother_ken_cat_allergy", "Their brother Ken is allergic to cats."),
    }
    assert not {c.key for c in kept} & {"sister_mei", "partner", "brother_ken"}, "who they are is not said again"


@pytest.mark.parametrize(
    "said",
    [
        "Tom is my boss.",  # who Tom is, maybe another Tom
        "Dr. Mei is my doctor.",  # a title, not a sentence's end
        "What is the plan?",
        "This is great.",
        "Ana is vegetarian.",  # no Ana in the family
    ],
)
def test_only_a_clause_about_family_named_before_is_read_as_theirs(said):
    family = {"Mei": "sister", "Tom": "husband"}
    assert memories.with_kin_named(said, family) == said


def test_what_is_said_of_a_relative_by_name_never_rewrites_who_they_are():
    family = memories.kin_of([("entities", "Has a dog, Max, aged 3."), ("entities", "Has a sister, Mei.")])
    for said in ("Max is sick today.", "Mei's husband has cancer.", "Mei is at work."):
        read = memories.with_kin_named(said, family)
        assert memories.said_of_kin([], memories.extract([("user", read)]), family) == [], read


@pytest.mark.parametrize(
    "said", ["My husband can't come tonight.", "My mum must be tired.", "My husband won't be joining us."]
)
def test_what_a_relative_cannot_do_today_is_no_fact_about_them(said):
    assert _found(said) == []


@pytest.mark.parametrize(
    "said",
    [
        "am I allergic to anything?",
        "should I go vegan?",
        "Do you remember my daughter's name?",
        "I'm allergic to Mondays.",
        "I live in the office at this point lol",
        "I'm married to my job",
        "If I were vegan, would I get enough protein?",
        "Maybe I'll move to Spain when I retire.",
        "I wish I spoke Japanese.",
        "my colleague is allergic to nuts",
        "The client is based in Austin.",
        "My neighbour's dog is called Rex.",
        "My doctor said I might be pre-diabetic.",
        "He says he's allergic to cats but I don't believe him.",
        "I'm not vegetarian.",
        "I don't have any allergies.",
        "I never said I was from Paris.",
        "I don't live in London anymore.",
        "we use IT for payroll",
        "We use Postgres for everything.",
        "Remember this conversation",
        "Thanks, that's really helpful!",
        "I've been in Rome for two days.",
        "My wife is Italian.",
        "I can't take the stairs, I'm exhausted.",
        "I'm the one who booked the table.",
    ],
)
def test_what_is_not_a_fact_about_the_user_is_not_kept(said):
    assert _found(said) == []


def test_an_explicit_request_is_always_kept_even_when_nothing_else_reads_it():
    assert _found("Remember this: the wifi password at the cabin is pinecone42.") == [
        ("entities", "wifi_password_at_cabin", "The wifi password at the cabin is pinecone42.")
    ]
    assert _found("Note to self - my passport expires in 2027.") == [
        ("entities", "passport", "Their passport expires in 2027.")
    ]
    assert _found("Can you remember that I'm meeting Jo for lunch on Thursday?") == [
        ("events", "meeting_jo_for_lunch", "Is meeting Jo for lunch on Thursday.")
    ]


def test_a_note_s_label_asks_nothing_to_be_remembered():
    """Imported notes are often labelled "note 3 ..."; only a note set apart or said of oneself is a request."""
    assert _found("note 3 about the kettle") == []
    assert _found("Note 2 covers the pricing tiers for the Berlin office.") == []
    assert [category for category, _, _ in _found("Note: my locker code is 4471.")] == ["entities"]
    assert [key for _, key, _ in _found("Please note I'm vegetarian for any recipes.")] == ["diet"]


def test_a_name_given_in_the_next_sentence_names_the_pet():
    assert _found("I just got a puppy! Her name is Olive.") == [("entities", "dog_olive", "Has a puppy, Olive.")]


def test_keys_read_as_labels():
    assert memories.label("oat_milk_in_coffee", "Prefers oat milk in their coffee.") == "Oat milk in coffee"
    assert memories.label("peanut_allergy", "Is allergic to peanuts.") == "Peanut allergy"
    assert memories.label("daughter_mia", "Has a daughter, Mia, aged 6.") == "Daughter Mia"
    assert memories.label("answer_in_french", "Prefers to get answers in French.") == "Answer in French"
    assert memories.label("location", "Lives in Lyon.") == "Home"
    assert memories.slug("Oat milk in my coffee") == "oat_milk_in_coffee"


def test_every_memory_of_the_labelled_set_reads_as_a_sentence():
    statements = corpus.statements()
    found = [c for s in statements for c in memories.extract([("user", s["text"])])]
    assert len(found) > 300
    for candidate in found:
        assert candidate.content[0].isupper() and candidate.content[-1] in ".!?\u2026", candidate
        assert "_" not in candidate.content and len(candidate.content) <= memories.CONTENT_MAX_CHARS
        assert candidate.category in memories.CATEGORIES and candidate.key == candidate.key.lower()


@pytest.mark.parametrize("part", corpus.PARTS)
def test_the_labelled_set_is_read_well(part):
    """A floor, well below today's figures (bench/memory_eval.py), that a change to the patterns must not break."""
    assert corpus.check() == []
    overall = evaluate(corpus.statements(part), memories.extract)["overall"]
    assert overall["recall"] >= 0.9 and overall["precision"] >= 0.9, overall


def test_a_fact_of_health_or_diet_says_what_it_means_for_the_person():
    assert memories.implication("profile", "peanut_allergy") == "A food to avoid eating."
    assert memories.implication("profile", "tree_nut_allergy") == "A food to avoid eating."
    assert memories.implication("profile", "lactose_intolerance") == "A food to avoid eating."
    assert memories.implication("profile", "penicillin_allergy") == "A medicine to avoid taking."
    assert memories.implication("profile", "flucloxacillin_allergy") == "A medicine to avoid taking."
    assert memories.implication("profile", "cat_allergy") == "Something to avoid."
    assert memories.implication("profile", "coeliac_disease") == "A food to avoid eating."
    for key in ("diet", "halal", "no_pork", "keto_diet"):
        assert memories.implication("preferences", key) == "What they eat and avoid eating.", key
    assert memories.implication("profile", "metformin") == "A medicine they take, for their health."
    # Another person's allergy is not the person's to avoid: it is their family's; a fact whose words say
    # it all means nothing more.
    assert memories.implication("entities", "son_oliver_egg_allergy") == memory_text.FAMILY
    assert memories.implication("preferences", "jazz") == ""


def test_a_fact_about_who_the_person_is_says_what_it_answers():
    assert memories.implication("profile", "location") == "Where they live now: their home town and city."
    assert memories.implication("profile", "origin") == "Where they come from and grew up: their hometown."
    assert memories.implication("profile", "occupation") == "What they do for a living: their job and work."
    for key in ("partner", "son_theo", "daughter", "mother", "mother_in_law", "sisters", "grandchildren"):
        assert memories.implication("entities", key) == memory_text.FAMILY, key
    # Colleagues, friends and pets are in the person's life, not their family.
    for key in ("manager", "friend_sam", "dog_biscuit", "landlord"):
        assert memories.implication("entities", key) == "", key


@pytest.mark.parametrize(
    "said",
    ["Remember this conversation", "Please remember this whole conversation.", "Can you remember our entire chat?"],
)
def test_asking_to_remember_the_conversation_itself_notes_no_fact(said):
    assert _found(said) == []


def test_the_labelled_questions_about_remembered_facts_are_consistent():
    """``bench/memoryrecall``: every label names words its person said, only ``none`` questions have none."""
    assert recall_corpus.check() == []


def test_a_relative_s_own_fact_says_whose_it_is_and_what_it_means_for_them():
    assert memory_text.relative_fact("sister_mei_diet") == ("sister", memory_text.DIET)
    assert memory_text.relative_fact("partner_shellfish_allergy") == ("partner", memory_text.FOOD_TO_AVOID)
    # As the patterns key a named relative's own facts: the name is no part of the food.
    assert memory_text.relative_fact("son_theo_egg_allergy") == ("son", memory_text.FOOD_TO_AVOID)
    assert memory_text.relative_fact("partner_tom_shellfish_allergy") == ("partner", memory_text.FOOD_TO_AVOID)
    assert memory_text.relative_fact("son_theo_no_egg") == ("son", memory_text.DIET)
    assert memory_text.relative_fact("sister_mei") == ("", "")
    assert memory_text.relative_fact("peanut_allergy") == ("", "")
    assert memory_text.relations_named("What can my husband and my sisters not eat?") == {"partner", "sister"}
    assert memory_text.relations_named("Can my kids eat this?") >= {"son", "daughter"}


def test_a_job_said_with_working_hours_is_said_once():
    assert set(_found("My name is Dana and I work night shifts as a nurse.")) == {
        ("profile", "name", "Is called Dana."),
        ("profile", "occupation", "Is a nurse."),
        ("profile", "work_schedule", "Works night shifts."),
    }


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        (
            "My sister Mei is coming to Kyoto with me in April.",
            [
                ("entities", "sister_mei", "Has a sister, Mei."),
                ("events", "sister_mei_coming_kyoto", "Their sister Mei is coming to Kyoto with them in April."),
            ],
        ),
        # What they do every week, or for years, is who they are.
        (
            "My grandson Felix visits every Sunday.",
            [("entities", "grandson_felix", "Has a grandson, Felix, who visits every Sunday.")],
        ),
        ("My son Theo is studying medicine.", [("entities", "son_theo", "Has a son, Theo, who is studying medicine.")]),
    ],
)
def test_a_relative_s_plan_is_an_event_of_theirs_not_who_they_are(said, expected):
    assert _found(said) == expected
