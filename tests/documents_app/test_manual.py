"""A product manual as a new user meets it, with no LLM configured: every heading is a node, the short
last section answers the questions about it, and the tiers read as sentences about the text."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from documents_app.models import DocumentNode
from documents_app.parsing import parse
from documents_app.tree import build_tree, walk
from foundation.ai import extractive
from retrieval_app.services import retrieval_find
from tests.documents_app import files

pytestmark = pytest.mark.django_db

MANUAL = b"""# Lumen K2 Kettle User Manual

Thank you for choosing the **Lumen K2**, a 1.7 litre cordless kettle with a stainless steel body.

## 1. Safety

- Never immerse the base, cord or plug in water.
- **Do not** fill the kettle above the `MAX` mark; boiling water may spill out.
- Keep the kettle out of reach of children.

## 2. Filling and boiling

Before first use, boil a full kettle of water and discard it. Repeat this twice.

1. Lift the kettle off the base and open the lid.
2. Fill with fresh water between the MIN and MAX marks.
3. Press the switch: the light turns blue.

The kettle switches off automatically when the water boils. If it runs dry, the safety cut-out
switches it off and the light flashes.

## 3. Descaling

Limescale builds up faster in hard-water areas and slows boiling. Descale the kettle every four weeks
with a solution of equal parts white vinegar and water. Leave it for an hour, then rinse three times.
See [the descaling tips](https://example.com/tips) for more.

## 4. Error codes

| Code | Meaning |
|------|---------|
| E1 | Boiled dry |
| E2 | Sensor fault |
| E3 | Base not detected |

## 5. Cleaning

Wipe the outside with a damp cloth. Do not use abrasive cleaners or scouring pads on the body.

## 6. Specifications

The Lumen K2 draws 2200 W at 230 V and holds 1.7 litres. It weighs 1.1 kg empty.

## 7. Warranty

The Lumen K2 comes with a two-year guarantee from the date of purchase.
Keep your receipt as proof of purchase.
"""

MARKUP = re.compile(r"\*\*|__|`|^#|\s#{1,6}\s|\]\(|\[[^\]]*\]\(|\|", re.MULTILINE)


@pytest.fixture
def manual(auth_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.post(
            "/api/documents/upload", {"file": SimpleUploadedFile("lumen_k2.md", MANUAL)}, format="multipart"
        )
    return auth_client.get(f"/api/documents/{response.json()['doc_id']}").json()


def _section(doc_id: str, title: str) -> DocumentNode:
    return DocumentNode.objects.get(document_id=doc_id, kind="section", title=title)


def test_the_short_last_section_is_a_node_of_its_own(manual):
    titles = list(
        DocumentNode.objects.filter(document_id=manual["doc_id"], kind="section")
        .order_by("level", "position")
        .values_list("title", flat=True)
    )
    assert titles == [
        "Lumen K2 Kettle User Manual",
        "1. Safety",
        "2. Filling and boiling",
        "3. Descaling",
        "4. Error codes",
        "5. Cleaning",
        "6. Specifications",
        "7. Warranty",
    ]
    warranty = _section(manual["doc_id"], "7. Warranty")
    chunks = DocumentNode.objects.filter(parent_uri=warranty.uri)
    assert [c.content for c in chunks] == [
        "The Lumen K2 comes with a two-year guarantee from the date of purchase.\n"
        "Keep your receipt as proof of purchase."
    ]
    specifications = DocumentNode.objects.get(parent_uri=_section(manual["doc_id"], "6. Specifications").uri)
    assert "guarantee" not in specifications.content, "nothing is folded into the section before it"


def test_a_warranty_question_finds_the_warranty_section_first(auth_client, user, manual):
    warranty = _section(manual["doc_id"], "7. Warranty")
    hits = retrieval_find(owner=user, query="How long is the warranty?", limit=5).hits
    assert hits[0].uri.startswith(warranty.uri + "/")
    answer = auth_client.post("/api/ai/chat", {"message": "How long is the warranty?"}, format="json").json()
    assert answer["context"][0]["uri"].startswith(warranty.uri + "/")
    assert "two-year guarantee" in answer["message"]


def test_the_manuals_abstract_says_what_it_is(manual):
    assert manual["title"] == "Lumen K2 Kettle User Manual"
    assert manual["abstract"] == (
        "Lumen K2 Kettle User Manual: Thank you for choosing the Lumen K2, a 1.7 litre cordless kettle with a "
        "stainless steel body."
    )
    # The heading over all of it is the whole manual under another name, and reads as it does (not as the
    # section that says most, such as the warranty).
    assert _section(manual["doc_id"], "Lumen K2 Kettle User Manual").abstract == manual["abstract"]


def test_no_tier_is_an_instruction_or_carries_markup(manual):
    nodes = DocumentNode.objects.filter(document_id=manual["doc_id"])
    for node in nodes:
        for tier in (node.abstract, node.overview):
            assert tier and "\n" not in node.abstract
            assert not MARKUP.search(tier), f"markup in {node.uri}: {tier!r}"
            for sentence in extractive.split_sentences(tier):
                assert not extractive.is_instruction(sentence), f"an instruction in {node.uri}: {sentence!r}"
                assert sentence.endswith((".", "!", "...")), f"a fragment in {node.uri}: {sentence!r}"
    abstracts = {node.title: node.abstract for node in nodes if node.kind == "section"}
    assert (
        abstracts["7. Warranty"] == "Warranty: The Lumen K2 comes with a two-year guarantee from the date of purchase."
    )
    assert abstracts["2. Filling and boiling"] in (
        "Filling and boiling: The kettle switches off automatically when the water boils.",
        "Filling and boiling: If it runs dry, the safety cut-out switches it off and the light flashes.",
    )
    assert "Repeat this twice" not in " ".join(n.abstract + n.overview for n in nodes)
    assert abstracts["4. Error codes"] == (
        "Error codes: For each code it has the meaning: E1, Boiled dry; E2, Sensor fault; E3, Base not detected."
    )


WARRANTY = "The K2 comes with a two-year guarantee.\nKeep your receipt."


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("manual.md", f"# K2\n\n## Specifications\n\nIt draws 2200 W.\n\n## Warranty\n\n{WARRANTY}\n".encode()),
        (
            "manual.html",
            b"<html><body><h1>K2</h1><h2>Specifications</h2><p>It draws 2200 W.</p><h2>Warranty</h2>"
            b"<p>The K2 comes with a two-year guarantee.</p><p>Keep your receipt.</p></body></html>",
        ),
        (
            "manual.docx",
            files.docx(
                [
                    ("Heading 1", "K2"),
                    ("Heading 2", "Specifications"),
                    ("Normal", "It draws 2200 W."),
                    ("Heading 2", "Warranty"),
                    ("Normal", "The K2 comes with a two-year guarantee."),
                    ("Normal", "Keep your receipt."),
                ]
            ),
        ),
    ],
)
def test_a_short_last_section_is_its_own_node_in_every_format(name, data):
    parsed = parse(data, name)
    root = build_tree(uri="viking://resources/users/1/documents/d", title=parsed.title, blocks=parsed.blocks)
    sections = {node.title: node for node in walk(root) if node.kind == "section"}
    assert set(sections) == {"K2", "Specifications", "Warranty"}
    (chunk,) = sections["Warranty"].children
    assert chunk.kind == "chunk" and " ".join(chunk.text.split()) == " ".join(WARRANTY.split())
    assert "guarantee" not in sections["Specifications"].children[0].text
