"""The split ballot on a number question: a direct answer stored beyond every randomized
report, its tallies on keys of their own; the randomized mean, the direct one and their
difference (Welch, agreeing with :mod:`estimator.split`) on every surface, before and
after the hour is sealed; exports, codebook and breakdowns that know the ballot."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pyreadstat
import pytest

from estimator.designs import Laplace
from estimator.estimates import NumberStats
from estimator.split import with_direct_share
from responses.sealing import seal
from responses.write import bulk_record
from survey.models import Survey
from tests.analysis.test_arms_question import submit
from tests.analysis.test_split_ballot_choice import open_split_survey
from tests.storage import nothing_stored, stored_reports
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db

LAPLACE = {"name": "laplace", "epsilon": 1.0, "lower": 0, "upper": 10}
DESIGN = with_direct_share(Laplace(epsilon=1.0, lower=0, upper=10), 0.3)


def create(api, *more: dict) -> Survey:
    question = {"text": "Drinks last week?", "kind": "number", "design": LAPLACE}
    return open_split_survey(api, question, *more)


@pytest.mark.django_db(transaction=True)
def test_a_direct_number_is_stored_beyond_the_randomized_reports(api, client):
    survey = create(api)
    question = survey.questions.get()
    for answer in ({"value": 7, "arm": 1}, {"value": -40, "arm": 0}):
        assert submit(client, survey, {"question": question.id, **answer}).status_code == 201
    assert sorted(r[question.id] for r in stored_reports(survey)) == [-40, DESIGN.encode(1, 7)]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ({"value": 4}, "arm missing"),
        ({"value": 11, "arm": 1}, "value 11"),
        ({"value": -1, "arm": 1}, "value -1"),
        ({"value": 10**6, "arm": 0}, "impossible"),
        ({"value": 3, "arm": 2}, "arm 2"),
        ({"value": 3.5, "arm": 1}, "whole number"),
    ],
)
def test_a_bad_number_ballot_is_refused_and_nothing_is_stored(api, client, answer, words):
    survey = create(api)
    response = submit(client, survey, {"question": survey.questions.get().id, **answer})
    assert response.status_code == 400
    assert words in json.dumps(response.json()), response.json()
    assert nothing_stored()


def seeded(n: int = 6000) -> np.ndarray:
    """Stored reports: on the direct ballot, answers shaded down by 3 (not below 0) —
    what a split ballot is there to find."""
    rng = np.random.default_rng(8)
    stored = DESIGN.simulate(rng.integers(0, 11, n), rng)
    direct = stored >= DESIGN.encode(1, 0)
    return np.where(direct, np.maximum(stored - 3, DESIGN.encode(1, 0)), stored)


def expected_estimate(stored: np.ndarray):
    ballots = [DESIGN.decode(r) for r in stored]
    sums = [
        NumberStats(len(v), sum(v), sum(x * x for x in v))
        for v in ([a for b, a in ballots if b == arm] for arm in (0, 1))
    ]
    return DESIGN.estimate(sums[0], direct=sums[1])


@pytest.mark.django_db(transaction=True)
def test_the_results_agree_with_the_maths_on_every_surface_before_and_after_the_seal(
    api, client, owner
):
    survey = create(api)
    question = survey.questions.get()
    stored = seeded()
    bulk_record(survey, [{question.id: int(r)} for r in stored], simulated=False)
    expected = expected_estimate(stored)
    comparison = expected.comparison(0.9)
    assert comparison.ci_low > 0  # the shading is found

    def entry() -> dict:
        response = api.get(f"/api/surveys/{survey.id}/estimates/", {"level": "0.9"})
        assert_matches_schema(response, "/api/surveys/{survey_id}/estimates/", "GET")
        assert response.json()["n_responses"] == len(stored)
        return response.json()["questions"][0]

    live = entry()
    assert live["n"] == expected.n
    assert [a["n"] for a in live["arms"]] == [expected.n, expected.direct_n]
    assert live["mean_unbiased"] == pytest.approx(expected.estimate_unbiased)
    assert live["direct"]["estimate"] == pytest.approx(expected.direct.estimate)
    assert live["difference"]["estimate"] == pytest.approx(comparison.difference)
    assert (live["difference"]["ci_low"], live["difference"]["ci_high"]) == pytest.approx(
        comparison.ci()
    )
    assert live["difference"]["p_value"] == pytest.approx(comparison.p_value)
    assert "significantly higher with randomized response" in live["words"]
    histogram_total = sum(b["count"] for b in live["histogram"])
    assert histogram_total == expected.n  # the randomized ballot's reports alone
    seal(everything=True, rng=__import__("random").Random(1))
    assert entry() == live

    client.force_login(owner)
    html = client.get(f"/surveys/{survey.id}/results/").content.decode()
    section = html.split('data-kind="split"', 1)[1].split("</div>", 1)[0]
    assert f"n = {expected.direct_n}" in section and "Welch" in section
    assert f"{comparison.difference:.2f}" in html.split('data-kind="split"', 1)[1]

    rows = list(
        csv.DictReader(
            io.StringIO(client.get(f"/api/surveys/{survey.id}/estimates.csv").content.decode())
        )
    )
    assert [r["option"] for r in rows] == ["", "direct", "difference"]
    assert float(rows[1]["estimate"]) == pytest.approx(expected.direct.estimate)
    assert float(rows[2]["estimate"]) == pytest.approx(expected.comparison().difference)


def test_exports_and_codebook_know_the_ballot(api, client, owner, tmp_path):
    survey = create(api)
    question = survey.questions.get()
    rows = [{question.id: DESIGN.encode(1, 6)}, {question.id: -12}, {question.id: None}]
    bulk_record(survey, rows, simulated=False)
    client.force_login(owner)
    export = client.get(f"/api/surveys/{survey.id}/export.csv").content.decode()
    rows = list(csv.reader(io.StringIO(export)))
    assert rows[0] == ["round", "q1", "q1_arm"]
    assert sorted(rows[1:]) == [["1", "", ""], ["1", "-12", "0"], ["1", "6", "1"]]
    entry = client.get(f"/api/surveys/{survey.id}/codebook.json").json()["questions"][0]
    assert entry["arm_column"] == "q1_arm" and entry["direct_share"] == 0.3
    assert "Welch" in entry["reanalysis"] and entry["noise_variance"] > 0
    assert entry["outputs"]["direct_shift"] == DESIGN.shift
    path = tmp_path / "split.sav"
    path.write_bytes(client.get(f"/api/surveys/{survey.id}/export.sav").content)
    frame, meta = pyreadstat.read_sav(str(path), user_missing=True)
    answered = frame[frame["q1_arm"].isin([0, 1])]
    assert sorted(zip(answered["q1"], answered["q1_arm"], strict=True)) == [(-12, 0), (6, 1)]
    assert meta.variable_value_labels["q1_arm"][1] == "direct ballot"


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        (b"round,q1,q1_arm\n1,11,1\n", "q1 on arm 1: a report of 11 is impossible"),
        (b"round,q1,q1_arm\n1,4,\n", "q1_arm must be the arm"),
        (b"round,q1,q1_arm\n1,300,0\n", "q1 must be a whole number from -276 to 286"),
    ],
)
def test_an_import_with_a_bad_number_ballot_says_why_and_stores_nothing(api, bad, words):
    from responses.imports import ImportRejected, import_responses

    survey = create(api)
    with pytest.raises(ImportRejected) as refused:
        import_responses(survey, io.BytesIO(bad))
    assert words in str(refused.value), str(refused.value)
    assert nothing_stored()


def test_the_export_imports_into_a_copy_made_from_the_codebook_with_the_same_results(api):
    survey = create(api)
    question = survey.questions.get()
    stored = seeded(300)
    bulk_record(survey, [{question.id: int(r)} for r in stored], simulated=False)
    exported = api.get(f"/api/surveys/{survey.id}/export.csv").content.decode()
    book = api.get(f"/api/surveys/{survey.id}/codebook.json").json()
    copy = api.post("/api/surveys/", book, format="json").json()
    imported = api.post(f"/api/surveys/{copy['id']}/import/", exported, content_type="text/csv")
    assert imported.json() == {"imported": len(stored)}, imported.json()
    copied = Survey.objects.get(id=copy["id"])
    assert sorted(r[copied.questions.get().id] for r in stored_reports(copied)) == sorted(stored)
    before, after = (
        api.get(f"/api/surveys/{i}/estimates/").json()["questions"][0]
        for i in (survey.id, copy["id"])
    )
    assert before.pop("question") != after.pop("question")
    assert before == after


def test_a_breakdown_reads_the_randomized_ballot_alone(api):
    faculty = {"text": "Faculty?", "kind": "choice", "options": ["Arts", "Law"]}
    faculty |= {"design": {"name": "direct"}, "not_sensitive": True}
    survey = create(api, faculty)
    split, by = survey.questions.order_by("position")
    rng = np.random.default_rng(5)
    reports = DESIGN.simulate(rng.integers(0, 11, 800), rng)
    rows = [{split.id: int(r), by.id: int(rng.integers(0, 2))} for r in reports]
    bulk_record(survey, rows, simulated=False)
    url = f"/api/surveys/{survey.id}/estimates/breakdown/?question={split.id}&by={by.id}"
    response = api.get(url)
    assert response.status_code == 200, response.json()
    for cell in response.json()["categories"]:
        kept = [
            r[split.id]
            for r in rows
            if r[by.id] == cell["category"] and DESIGN.decode(r[split.id])[0] == 0
        ]
        assert cell["n"] == len(kept)
        assert cell["mean_unbiased"] == pytest.approx(np.mean(kept))


ONE_BIT = {"name": "one_bit", "epsilon": 1.0, "lower": 0, "upper": 10}


def create_one_bit(api) -> Survey:
    question = {"text": "Drinks last week?", "kind": "number", "design": ONE_BIT}
    return open_split_survey(api, question)


@pytest.mark.django_db(transaction=True)
def test_a_one_bit_number_on_the_direct_ballot_is_stored_above_the_bit(api, client):
    survey = create_one_bit(api)
    question = survey.questions.get()
    for answer in ({"value": 7, "arm": 1}, {"value": 1, "arm": 0}):
        assert submit(client, survey, {"question": question.id, **answer}).status_code == 201
    refused = submit(client, survey, {"question": question.id, "value": 5, "arm": 0})
    assert refused.status_code == 400 and "value 5" in json.dumps(refused.json())
    assert sorted(r[question.id] for r in stored_reports(survey)) == [1, 9]


def test_a_one_bit_split_gives_both_means_and_imports_its_ballots(api, client, owner):
    from responses.imports import ImportRejected, import_responses

    survey = create_one_bit(api)
    question = survey.questions.get()
    design = question.design
    rng = np.random.default_rng(12)
    stored = design.simulate(rng.integers(0, 11, 4000), rng)
    bulk_record(survey, [{question.id: int(r)} for r in stored], simulated=False)
    response = api.get(f"/api/surveys/{survey.id}/estimates/")
    assert_matches_schema(response, "/api/surveys/{survey_id}/estimates/", "GET")
    entry = response.json()["questions"][0]
    bits, answers = stored[stored < 2], stored[stored >= 2] - design.shift
    expected = design.estimate(
        [len(bits) - bits.sum(), bits.sum()],
        direct=(len(answers), int(answers.sum()), int((answers**2).sum())),
    )
    assert entry["n"] == len(bits) and entry["arms"][1]["n"] == len(answers)
    assert entry["mean_unbiased"] == pytest.approx(expected.estimate_unbiased)
    assert entry["direct"]["estimate"] == pytest.approx(answers.mean())
    assert entry["difference"]["estimate"] == pytest.approx(expected.comparison().difference)
    assert entry["difference"]["ci_low"] < 0 < entry["difference"]["ci_high"]
    client.force_login(owner)
    page = client.get(f"/surveys/{survey.id}/results/").content.decode()
    section = page.split('data-kind="split"', 1)[1].split("</div>", 1)[0]
    assert f"asked directly: n = {len(answers)}" in section and "Welch" in section

    copy = create_one_bit(api)
    imported = import_responses(copy, io.BytesIO(b"round,q1,q1_arm\n1,7,1\n1,0,0\n"))
    assert imported == 2
    assert sorted(r[copy.questions.get().id] for r in stored_reports(copy)) == [0, 9]
    with pytest.raises(ImportRejected) as refused:
        import_responses(copy, io.BytesIO(b"round,q1,q1_arm\n1,7,0\n"))
    assert "q1 on arm 0" in str(refused.value)
    with pytest.raises(ImportRejected) as refused:
        import_responses(copy, io.BytesIO(b"round,q1,q1_arm\n1,11,1\n"))
    assert "on the direct ballot (arm 1) the answer as given, from 0 to 10" in str(refused.value)
