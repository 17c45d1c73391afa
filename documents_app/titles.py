"""A document's title, as a person would name it.

The uploader's title wins. Otherwise the file's own title (a PDF's or DOCX's metadata, an HTML
``<title>``, a Markdown front matter's ``title:``), unless it is junk that tools leave behind: empty,
``about:blank``, "Untitled document", "Document1", "Microsoft Word - report.docx" (whose "report" is
kept), a URL, a file path or file name, or a placeholder. Then the heading that heads the whole
document, and last the file name made readable ("kettle_manual_v2.pdf" -> "Kettle manual v2").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from pathlib import PurePosixPath
from urllib.parse import unquote

# The longest title stored (Document.title and DocumentNode.title).
MAX_TITLE_CHARS = 512

# Extensions that make a title a bare file name ("scan0001.pdf"); a title such as "Node.js" is a name.
_FILE_EXTENSIONS = (
    "pdf|docx?|dotx?|odt|ott|rtf|txt|text|md|markdown|html?|xhtml|pptx?|ppsx?|odp|xlsx?|ods|csv|tsv|tex|dvi|"
    "e?ps|indd|pages|key|numbers|wpd|xps|oxps|epub|mobi|tiff?|jpe?g|png|gif|bmp|qxd|pub|vsdx?|msg|eml|log"
)
_FILE_NAME = re.compile(rf"^[^/\\]{{1,200}}\.(?:{_FILE_EXTENSIONS})$", re.IGNORECASE)
_PATH = re.compile(r"^(?:[a-z]:\\|\\\\|~?/|\.{1,2}/)|[\\/][^\\/\s]+[\\/]", re.IGNORECASE)
_URL = re.compile(
    r"^(?:[a-z][a-z0-9+.-]*://\S*|(?:about|data|mailto|file|urn|javascript|blob):\S*|www\.\S+)$", re.IGNORECASE
)
# "Microsoft Word - report.docx", "report.docx - Google Docs": the tool's name around the real one.
_TOOL_PREFIX = re.compile(
    r"^(?:microsoft\s+(?:word|powerpoint|excel|office\s+word)|libreoffice\s+\w+|openoffice\s+\w+|adobe\s+\w+)"
    r"\s*[-:\u2013\u2014]\s*",
    re.IGNORECASE,
)
_TOOL_SUFFIX = re.compile(
    r"\s*[-|:\u2013\u2014]\s*(?:google\s+(?:docs|sheets|slides|drive)|microsoft\s+word(?:\s+online)?|"
    r"word\s+online|onedrive|dropbox(?:\s+paper)?|notion|confluence|sharepoint|overleaf|pages)$",
    re.IGNORECASE,
)
# What editors, exporters and templates put where a title should be.
_PLACEHOLDERS = re.compile(
    r"^(?:(?:new\s+)?(?:microsoft\s+)?(?:word\s+)?(?:untitled|no\s+title|untitled\s+document|blank(?:\s+document)?|"
    r"(?:new|empty)\s+document|document|doc|book|presentation|slide|sheet|drawing|spreadsheet|workbook)"
    r"(?:[\s_-]*\d+)?|"
    r"title|(?:document|page|report|presentation)\s+title|title\s+of\s+(?:the\s+)?(?:document|page)|"
    r"(?:your|enter|add|insert|type)\s+(?:a\s+)?title(?:\s+here)?|insert\s+title\s+here|click\s+here.*|"
    r"powerpoint\s+presentation|microsoft\s+word\s+document|pdf(?:\s+document)?|print|printout|home|index|"
    r"default|placeholder|lorem\s+ipsum.*|sans\s+titre|unbenannt|sin\s+t[ií]tulo|senza\s+titolo|naamloos|"
    r"sem\s+t[ií]tulo|bez\s+tytu[lł]u|無題|无标题|untitled-\d+|\(untitled\)|\[untitled\]|\[title\]|<title>)$",
    re.IGNORECASE,
)
# A title with no letter or digit at all ("---", "*"), or a single character.
_MEANINGFUL = re.compile(r"[^\W_]", re.UNICODE)
# What a browser or a file manager adds to a downloaded or copied file's name: " (1)", " - Copy".
_COPY_MARK = re.compile(r"(?:\s*\(\d{1,3}\)|\s+-\s+copy(?:\s*\(\d{1,3}\))?|\s+copy)$", re.IGNORECASE)


def tidy(title: str) -> str:
    """A title on one line: control characters gone, white space folded, trimmed to the stored length."""
    text = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in title or "")
    return " ".join(text.split())[:MAX_TITLE_CHARS]


def without_tool_names(title: str) -> str:
    """ "Microsoft Word - report.docx" -> "report"; "Plan - Google Docs" -> "Plan"."""
    text = tidy(title)
    stripped = _TOOL_SUFFIX.sub("", _TOOL_PREFIX.sub("", text)).strip()
    if stripped != text and _FILE_NAME.match(stripped):
        stripped = PurePosixPath(stripped).stem.strip()
    return stripped


def is_junk(title: str) -> bool:
    """Whether a format's own title says nothing a person would call the document by."""
    text = tidy(title)
    if len(_MEANINGFUL.findall(text)) < 2:
        return True
    lowered = text.lower()
    return bool(
        lowered.startswith("about:")
        or _URL.match(text)
        or _PATH.search(text)
        or _FILE_NAME.match(text)
        or _PLACEHOLDERS.match(text)
    )


def readable_file_name(filename: str) -> str:
    """A file name as a title: "kettle_manual_v2.pdf" -> "Kettle manual v2"."""
    path = PurePosixPath(unquote(filename or ""))
    stem = "" if path.name.startswith(".") and path.name.count(".") == 1 else path.stem  # ".pdf": no name
    words = re.sub(r"[_+]+|(?<=\w)[.-](?=\w*[A-Za-z])|\s+-\s+|\s+", " ", stem)
    words = _COPY_MARK.sub("", " ".join(words.split())).strip(" .-_")
    if not words:
        return "Untitled"
    first = words.split(" ", 1)[0]
    # "kettle manual" -> "Kettle manual", but "iPhone guide" and "NASA report" keep their capitals.
    if first.islower():
        words = words[0].upper() + words[1:]
    return tidy(words)


def document_title(*, own: str, headings: Sequence[tuple[int, str]], filename: str) -> str:
    """The title of a document with no title given: its own, its heading, or its file name.

    ``headings`` are (level, title) of the document's real headings in order. The first one names the
    document when it heads all of it, when no other heading matches or outranks it: a document of "1.
    Safety", "2. Filling" ... is not called "1. Safety".
    """
    own = without_tool_names(own)
    if own and not is_junk(own):
        return tidy(own)
    if headings:
        level, text = headings[0]
        heads_all = all(other > level for other, _ in headings[1:])
        # A heading is the author's own words: only one with nothing to read in it is passed over.
        if heads_all and len(_MEANINGFUL.findall(text)) >= 2:
            return tidy(text)
    return readable_file_name(filename)
