"""The estimates as CSV: the estimates endpoint's numbers, one row per question, option or
mean."""

from __future__ import annotations

from analysis.results import SurveyResults
from survey.spreadsheets import csv_text

ESTIMATE_COLUMNS = [
    "question",
    "text",
    "kind",
    "option",
    "option_text",
    "n",
    "n_simulated",
    "skipped",
    "yes_count",
    "raw_yes_rate",
    "estimate",
    "estimate_unbiased",
    "std_error",
    "ci_low",
    "ci_high",
    "level",
    "method",
    "epsilon",
]


def estimates_csv(results: SurveyResults) -> str:
    """One row per question. Lines end in CRLF (RFC 4180), which also makes the csv
    module quote a text holding a lone carriage return (with LF endings it does not).
    Text cells are made safe for spreadsheets, numbers kept as numbers."""
    rows = (
        [row.get(key) for key in ESTIMATE_COLUMNS]
        for entry in results.as_dict()["questions"]
        for row in estimate_rows(entry)
    )
    return csv_text(rows, ESTIMATE_COLUMNS, lineterminator="\r\n")


def estimate_rows(entry: dict) -> list[dict]:
    """An estimates entry as CSV rows: one for a yes/no question (and one per other
    quantity of a design with arms), one per option for a multiple-choice question
    (``yes_count``/``raw_yes_rate`` are then that option's reports and rate), one for a
    number (``estimate`` is the mean)."""
    common = {key: entry.get(key) for key in ("question", "text", "n", "n_simulated", "skipped")}
    common |= {key: entry.get(key) for key in ("level", "method", "epsilon")}
    common["kind"] = entry.get("kind", "binary")
    if "options" in entry:
        return [*_option_rows(common, entry), *_option_ballot_rows(common, entry)]
    if "mean" in entry:
        # A split ballot's direct mean and difference follow, as quantities.
        mean = common | {"estimate": entry["mean"], "estimate_unbiased": entry["mean_unbiased"]}
        mean |= {key: entry[key] for key in ("std_error", "ci_low", "ci_high")}
        return [mean, *_quantity_rows(common, entry)]
    if "arms" in entry:
        # A design with arms: the prevalence's row, then one per other quantity (named in
        # ``option``: honesty, honest_no, cheaters), each with its SE and interval.
        main = {key: value for key, value in entry.items() if key in ESTIMATE_COLUMNS}
        return [main | common, *_quantity_rows(common, entry)]
    return [entry | common]


def _quantity_rows(common: dict, entry: dict) -> list[dict]:
    return [
        common
        | {"option": key, "option_text": key.replace("_", " ")}
        | {k: entry[key][k] for k in ("estimate", "std_error", "ci_low", "ci_high")}
        for key in QUANTITY_KEYS
        if isinstance(entry.get(key), dict)
    ]


def _option_rows(common: dict, entry: dict) -> list[dict]:
    return [
        common
        | {
            "option": option["index"],
            "option_text": option["text"],
            "yes_count": option["count"],
            "raw_yes_rate": option["raw_rate"],
        }
        | {key: option[key] for key in ("estimate", "estimate_unbiased", "std_error")}
        | {key: option[key] for key in ("ci_low", "ci_high")}
        for option in entry["options"]
    ]


def _option_ballot_rows(common: dict, entry: dict) -> list[dict]:
    """A choice split ballot: per option, its direct ballot's share and the difference
    randomized − direct (``option`` says which: "2 direct", "2 difference")."""
    wordings = {"direct": "asked directly", "difference": "randomized minus direct"}
    return [
        common
        | {"option": f"{option['index']} {key}", "option_text": f"{option['text']} ({words})"}
        | {k: option[key][k] for k in ("estimate", "std_error", "ci_low", "ci_high")}
        for option in entry["options"]
        if "difference" in option
        for key, words in wordings.items()
    ]


# The keys of an arms design's quantities beside the prevalence in an estimates entry
# (a split ballot's: the direct ballot's proportion and the difference randomized − direct).
QUANTITY_KEYS = ("honesty", "honest_no", "cheaters", "innocuous", "direct", "difference")
