"""Reading the translation catalogues as the tests need them: a small .po parser (the
test must not trust the same gettext machinery it checks) and the visible English of a
page."""

from __future__ import annotations

import ast
import html
import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from django.conf import settings

LOCALE = Path(settings.BASE_DIR) / "locale"
TRANSLATED = [code for code, _ in settings.LANGUAGES if code != settings.LANGUAGE_CODE]
PLACEHOLDER = re.compile(r"%\(\w+\)s|\{\w+\}")


@dataclass
class Entry:
    msgid: str
    msgctxt: str | None = None
    msgid_plural: str | None = None
    msgstr: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    locations: list[str] = field(default_factory=list)


def po_path(language: str) -> Path:
    return LOCALE / language / "LC_MESSAGES" / "django.po"


def read_po(language: str) -> list[Entry]:
    """The entries of a language's .po, the header (msgid "") first."""
    entries: list[Entry] = []
    for block in po_path(language).read_text(encoding="utf-8").strip().split("\n\n"):
        parts: dict[str, str] = {}
        flags: set[str] = set()
        locations: list[str] = []
        key = None
        for line in block.splitlines():
            if line.startswith("#,"):
                flags |= {f.strip() for f in line[2:].split(",")}
            elif line.startswith("#:"):
                locations += line[2:].split()
            elif line.startswith("#"):
                continue
            elif line.startswith('"'):
                parts[key] += ast.literal_eval(line)
            else:
                key, _, value = line.partition(" ")
                parts[key] = ast.literal_eval(value)
        plural_forms = [parts[k] for k in sorted(parts) if k.startswith("msgstr[")]
        entries.append(
            Entry(
                msgid=parts["msgid"],
                msgctxt=parts.get("msgctxt"),
                msgid_plural=parts.get("msgid_plural"),
                msgstr=plural_forms or [parts["msgstr"]],
                flags=flags,
                locations=locations,
            )
        )
    return entries


def messages(language: str) -> list[Entry]:
    return [e for e in read_po(language) if e.msgid]


class VisibleText(HTMLParser):
    """What a reader (or a screen reader) meets: text, labels and titles, and the
    sentences the page hands its scripts; not code, not the served rr.js."""

    ATTRIBUTES = ("aria-label", "placeholder", "title", "alt")
    # The chance devices' words respond.js builds its sentences from.
    ATTRIBUTES += ("data-win", "data-lose", "data-name", "data-if-win", "data-if-lose")
    SKIPPED = ("pre", "code", "style")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0
        self.json_block = False

    def handle_starttag(self, tag, attrs):
        names = dict(attrs)
        if tag in self.SKIPPED:
            self.skipping += 1
        self.json_block = tag == "script" and names.get("type") == "application/json"
        self.parts += [names[a] for a in self.ATTRIBUTES if names.get(a)]

    def handle_endtag(self, tag):
        if tag in self.SKIPPED:
            self.skipping -= 1
        if tag == "script":
            self.json_block = False

    def handle_data(self, data):
        if self.json_block:
            self.parts += [v for v in json.loads(data).values() if isinstance(v, str)]
        elif not self.skipping:
            self.parts.append(data)


def visible_text(page: str) -> str:
    parser = VisibleText()
    parser.feed(page)
    # Runs of ASCII white space only: a no-break space inside a number stays.
    return re.sub(r"[ \t\r\n]+", " ", " ".join(parser.parts)).strip()


WORD = re.compile(r"[A-Za-z][A-Za-z'’-]+")  # single letters are maths (q, p, E)


def english_runs(text: str, leave_out: list[str], length: int = 4) -> set[tuple[str, ...]]:
    """Every run of ``length`` consecutive words, lower-cased, outside the strings left
    out (what the researcher wrote, the same in every language): a sentence left in
    English shares runs with the English page, a translated one does not."""
    for written in sorted(leave_out, key=len, reverse=True):
        text = text.replace(written, "\n")
    text = re.sub(r"[0-9A-Fa-f:]{16,}", "\n", text)  # key fingerprints
    runs = set()
    for chunk in html.unescape(text).split("\n"):
        words = [w.lower() for w in WORD.findall(chunk)]
        runs |= {tuple(words[i : i + length]) for i in range(len(words) - length + 1)}
    return runs
