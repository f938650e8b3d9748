"""The catalogues are complete, compiled, and keep every number's placeholder."""

from __future__ import annotations

import gettext
import re

import pytest

from tests.i18n.catalogue import PLACEHOLDER, TRANSLATED, messages, po_path, read_po

# Where translatable strings may come from: the respondent and student side only (the
# invite mailed to a respondent included).
RESPONDENT_SOURCES = re.compile(
    r"^(templates/(base|404)\.html|templates/survey/(respond|_question|_paper|thanks|closed"
    r"|invite_rejected|how_it_works|_example_coins)\.html"
    r"|templates/survey/invite_(email|subject)\.txt"
    r"|templates/classroom/(join|_join_form|explain|_explain|_student_status|_bar|_choice"
    r"|_number|_skipped|lesson_student|lessons/_\w+)\.html"
    r"|survey/devices\.py|survey/templatetags/respondent\.py|survey/templatetags/privacy\.py"
    r"|classroom/(live|lessons|lesson_views|models)\.py)$"
)


def key(entry) -> tuple[str | None, str]:
    return entry.msgctxt, entry.msgid


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_entry_is_translated_and_none_is_fuzzy(language):
    entries = read_po(language)
    assert "fuzzy" not in entries[0].flags, "the header is marked fuzzy"
    assert len(entries) > 300
    for entry in entries[1:]:
        assert "fuzzy" not in entry.flags, entry.msgid
        assert all(form.strip() for form in entry.msgstr), f"untranslated: {entry.msgid!r}"
        assert len(entry.msgstr) == (2 if entry.msgid_plural else 1), entry.msgid


def placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_placeholder_is_kept_so_every_number_is_filled_in(language):
    for entry in messages(language):
        if entry.msgid_plural:
            singular, plural = entry.msgstr
            assert placeholders(plural) == placeholders(entry.msgid_plural), entry.msgid
            # The singular may say "one" instead of the count, as English does.
            assert placeholders(singular) <= placeholders(entry.msgid_plural), entry.msgid
        else:
            assert placeholders(entry.msgstr[0]) == placeholders(entry.msgid), entry.msgid


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_compiled_catalogue_says_what_the_po_says(language):
    """The .mo files are committed (machines without gettext cannot compile them): a
    stale .mo would quietly show old wording."""
    with po_path(language).with_suffix(".mo").open("rb") as compiled:
        catalogue = gettext.GNUTranslations(compiled)
    assert catalogue.info()["language"] == language
    for entry in messages(language):
        context = f"{entry.msgctxt}\x04" if entry.msgctxt else ""
        if entry.msgid_plural:
            for n, form in ((1, entry.msgstr[0]), (5, entry.msgstr[1])):
                assert catalogue.ngettext(context + entry.msgid, entry.msgid_plural, n) == form
        else:
            assert catalogue.gettext(context + entry.msgid) == entry.msgstr[0], entry.msgid
    assert len(catalogue._catalog) == len(messages(language)) + 1 + sum(
        1 for e in messages(language) if e.msgid_plural
    )


def test_the_languages_share_one_catalogue_of_respondent_and_student_strings():
    """Researcher pages stay in English: nothing of theirs is in the catalogue."""
    keys = {language: [key(e) for e in messages(language)] for language in TRANSLATED}
    first, *others = keys.values()
    assert all(other == first for other in others)
    for entry in messages(TRANSLATED[0]):
        assert entry.locations, entry.msgid
        for location in entry.locations:
            assert RESPONDENT_SOURCES.match(location.split(":")[0]), location
