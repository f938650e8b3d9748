"""The split ballot as a question of the app: ``direct_share`` set through the API
(refused, naming the field, where it cannot apply), a report sent with its ballot and
stored apart from the randomized ones, and the results (randomized estimate, direct
estimate, their difference) agreeing with :func:`estimator.compare.split_ballot`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from estimator.compare import simulate_split, split_ballot
from estimator.designs import ForcedResponse
from responses.write import bulk_record
from survey.models import Survey
from tests.analysis.test_arms_question import SLD, submit
from tests.storage import nothing_stored, stored_reports
from tests.survey.api_schema import assert_matches_schema

pytestmark = pytest.mark.django_db

PLAIN = {"name": "forced_response", "p_truth": 0.5, "p_yes": 0.5}


def post_survey(api, *questions: dict):
    return api.post(
        "/api/surveys/", {"title": "Split", "questions": list(questions)}, format="json"
    )


def split_question(share=0.25, **extra) -> dict:
    return {"text": "Cheated?", "kind": "binary", "design": PLAIN, "direct_share": share} | extra


def create(api, share: float = 0.25) -> Survey:
    response = post_survey(api, split_question(share), {"text": "Other?", "design": PLAIN})
    assert response.status_code == 201, response.json()
    survey = Survey.objects.get(id=response.json()["id"])
    survey.status = Survey.Status.OPEN
    survey.save()
    return survey


def test_the_direct_share_is_saved_and_given_back(api):
    response = post_survey(api, split_question(0.3), {"text": "Other?", "design": PLAIN})
    assert response.status_code == 201, response.json()
    split, other = response.json()["questions"]
    assert split["direct_share"] == 0.3 and other["direct_share"] is None
    # The promise to the randomized ballot: the design's own ε.
    assert split["epsilon"] == pytest.approx(ForcedResponse().epsilon)
    assert split["design"]["name"] == "forced_response"
    assert Survey.objects.get().questions.order_by("position")[0].direct_share == 0.3


@pytest.mark.parametrize(
    ("question", "words"),
    [
        (split_question(0), "between 0 and 1"),
        (split_question(1), "between 0 and 1"),
        (split_question(-0.2), "between 0 and 1"),
        (split_question(1.5), "between 0 and 1"),
        (split_question("half"), "valid number"),
        (split_question(design=SLD, allow_no_privacy=True), "without arms"),
        (
            split_question(
                kind="choice", options=["a", "b"], design={"name": "direct"}, not_sensitive=True
            ),
            "randomized",
        ),
        (split_question(design={"name": "direct"}, not_sensitive=True), "randomized"),
    ],
)
def test_a_bad_direct_share_is_refused_naming_the_field(api, question, words):
    response = post_survey(api, question)
    assert response.status_code == 400
    errors = response.json()["questions"]["0"]
    assert "direct_share" in errors, errors
    assert words in " ".join(errors["direct_share"])
    assert not Survey.objects.exists()


def test_a_patch_keeps_the_share_and_can_remove_it(api):
    response = post_survey(api, split_question(0.25), {"text": "Other?", "design": PLAIN})
    survey = Survey.objects.get(id=response.json()["id"])
    first, second = survey.questions.order_by("position")
    items = [{"id": first.id}, {"id": second.id}]
    url = f"/api/surveys/{survey.id}/"
    assert api.patch(url, {"questions": items}, format="json").status_code == 200
    first.refresh_from_db()
    assert first.direct_share == 0.25
    items[0]["direct_share"] = None
    assert api.patch(url, {"questions": items}, format="json").status_code == 200
    first.refresh_from_db()
    assert first.direct_share is None


@pytest.mark.django_db(transaction=True)
def test_a_direct_answer_is_stored_on_its_own_ballot(api, client):
    survey = create(api)
    split, other = survey.questions.order_by("position")
    direct = submit(
        client,
        survey,
        {"question": split.id, "value": 1, "arm": 1},
        {"question": other.id, "value": 0},
    )
    randomized = submit(
        client,
        survey,
        {"question": split.id, "value": 1, "arm": 0},
        {"question": other.id, "value": 0},
    )
    assert direct.status_code == randomized.status_code == 201
    # ballot·2 + answer: the direct "yes" is 3, the randomized "yes" 1.
    assert stored_reports(survey) == [{split.id: 1, other.id: 0}, {split.id: 3, other.id: 0}]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ({"value": 1}, "arm missing"),
        ({"value": 1, "arm": 2}, "arm 2"),
        ({"value": 2, "arm": 1}, "value 2"),
        ({"value": 1, "arm": True}, "arm"),
    ],
)
def test_a_bad_ballot_is_refused_and_nothing_is_stored(api, client, answer, words):
    survey = create(api)
    split, other = survey.questions.order_by("position")
    response = submit(
        client, survey, {"question": split.id, **answer}, {"question": other.id, "value": 0}
    )
    assert response.status_code == 400
    assert words in json.dumps(response.json()), response.json()
    assert nothing_stored()


def simulated(n: int, share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded respondents, 30 % of them "yes" if asked directly and honest, 40 % truly."""
    rng = np.random.default_rng(seed)
    truths = (rng.random(n) < 0.4).astype(int)
    direct, reports = simulate_split(ForcedResponse(), share, truths, rng)
    # Asked directly, a quarter of the carriers deny: what a split ballot is there to see.
    reports = np.where(direct & (truths == 1) & (rng.random(n) < 0.25), 0, reports)
    return direct, reports


def test_the_estimates_agree_with_the_maths(api, client, owner):
    survey = create(api, share=0.3)
    split, other = survey.questions.order_by("position")
    direct, reports = simulated(6000, 0.3, seed=12)
    stored = 2 * direct.astype(int) + reports
    bulk_record(survey, [{split.id: int(r), other.id: 0} for r in stored], simulated=False)
    response = api.get(f"/api/surveys/{survey.id}/estimates/", {"level": "0.9"})
    assert response.status_code == 200
    assert_matches_schema(response, "/api/surveys/{survey_id}/estimates/", "GET")
    entry = response.json()["questions"][0]
    expected = split_ballot(
        ForcedResponse().estimate(int(reports[~direct].sum()), int((~direct).sum())),
        int(reports[direct].sum()),
        int(direct.sum()),
    )
    comparison = expected.comparison(0.9)
    assert entry["n"] == (~direct).sum()
    assert entry["estimate"] == pytest.approx(expected.randomized.estimate)
    assert (entry["ci_low"], entry["ci_high"]) == pytest.approx(
        expected.randomized.ci(0.9, "wilson")
    )
    assert entry["direct"]["estimate"] == pytest.approx(expected.direct.estimate)
    assert entry["direct"]["std_error"] == pytest.approx(expected.direct.std_error)
    assert entry["difference"]["estimate"] == pytest.approx(comparison.difference)
    assert (entry["difference"]["ci_low"], entry["difference"]["ci_high"]) == pytest.approx(
        comparison.ci()
    )
    assert [a["n"] for a in entry["arms"]] == [(~direct).sum(), direct.sum()]
    # The direct ballot undercounts; randomized response finds about 10 points more.
    assert 0.35 < entry["estimate"] < 0.45 and 0.25 < entry["direct"]["estimate"] < 0.35
    assert comparison.ci_low > 0
    assert entry["words"].startswith("Randomized response found")
    assert "significantly more admitted with randomized response" in entry["words"]
    client.force_login(owner)
    html = client.get(f"/surveys/{survey.id}/results/").content.decode()
    assert f"{100 * comparison.difference:.1f} points more" in html
    assert "Asked directly: n = " in html


def test_skips_are_counted_apart_from_both_ballots(api):
    survey = create(api)
    survey.allow_skip = True
    survey.save()
    split, other = survey.questions.order_by("position")
    reports = [{split.id: r, other.id: None if r is None else 0} for r in (0, 1, 2, 3, 3, None)]
    bulk_record(survey, reports, simulated=False)
    estimates = api.get(f"/api/surveys/{survey.id}/estimates/").json()
    assert estimates["n_responses"] == 5  # both ballots, not the skip
    entry = estimates["questions"][0]
    assert entry["skipped"] == 1
    assert entry["arms"] == [
        {"index": 0, "n": 2, "yes_count": 1},
        {"index": 1, "n": 3, "yes_count": 2},
    ]
    assert entry["direct"]["estimate"] == pytest.approx(2 / 3)


def test_exports_say_which_ballot_and_the_codebook_how_to_compare(api, client, owner):
    import csv
    import io

    import pyreadstat

    survey = create(api)
    split, other = survey.questions.order_by("position")
    bulk_record(survey, [{split.id: 3, other.id: 0}, {split.id: 0, other.id: 1}], simulated=False)
    client.force_login(owner)
    exported = client.get(f"/api/surveys/{survey.id}/export.csv").content.decode()
    rows = list(csv.reader(io.StringIO(exported)))
    assert rows[0] == ["round", "q1", "q1_arm", "q2"]
    assert sorted(rows[1:]) == [["1", "0", "0", "1"], ["1", "1", "1", "0"]]
    book = client.get(f"/api/surveys/{survey.id}/codebook.json").json()
    entry = book["questions"][0]
    assert entry["direct_share"] == 0.25 and entry["arm_column"] == "q1_arm"
    assert entry["arm_values"]["1"].startswith("direct ballot")
    assert (
        "q1_arm == 0" in entry["rrreg"]
        and "difference = randomized - direct" in (entry["reanalysis"])
    )
    assert "split ballot" in book["columns"]["q<k>_arm"]
    content = client.get(f"/api/surveys/{survey.id}/export.sav").content
    path = f"/tmp/split-export-{survey.id}.sav"
    with open(path, "wb") as f:
        f.write(content)
    frame, meta = pyreadstat.read_sav(path)
    assert sorted(frame["q1_arm"].tolist()) == [0, 1]
    assert meta.variable_value_labels["q1_arm"][1] == "direct ballot"


@pytest.mark.django_db(transaction=True)
def test_an_export_imports_with_its_ballots_and_a_bad_ballot_stores_nothing(api):
    import io

    from responses.exports import responses_csv
    from responses.imports import ImportRejected, import_responses

    survey = create(api)
    split, other = survey.questions.order_by("position")
    rows = [{split.id: 3, other.id: 0}, {split.id: 0, other.id: 1}, {split.id: 2, other.id: 1}]
    bulk_record(survey, rows, simulated=False)
    exported = responses_csv(survey).encode()
    copy = create(api)
    for bad in (b"round,q1,q2\n1,1,0\n", b"round,q1,q1_arm,q2\n1,1,2,0\n"):
        with pytest.raises(ImportRejected):
            import_responses(copy, io.BytesIO(bad))
        assert not list(stored_reports(copy))
    assert import_responses(copy, io.BytesIO(exported)) == 3
    csplit, cother = copy.questions.order_by("position")
    assert sorted((r[csplit.id], r[cother.id]) for r in stored_reports(copy)) == [
        (0, 1),
        (2, 1),
        (3, 0),
    ]


@pytest.mark.django_db(transaction=True)
def test_the_paper_form_draws_the_ballot_by_hand_and_stores_it(api, client):
    survey = create(api)
    split, other = survey.questions.order_by("position")
    html = client.get(survey.get_absolute_url()).content.decode()
    assert "decide by chance alone how this question is asked" in html
    # Before the numbered steps, so that "go on to step 2" still points at the second coin.
    assert html.index('class="ballot-step"') < html.index('class="paper-steps"')
    assert f'name="arm_{split.id}" value="1"' in html and f'name="arm_{other.id}"' not in html
    assert "Your device may ask" in html  # the guarantee says what its ε leaves out
    form = {f"reported_{split.id}": "1", f"reported_{other.id}": "0", "design_version": 1}
    refused = client.post(f"/s/{survey.slug}/paper/", form)
    assert refused.status_code == 400 and nothing_stored()  # the ballot left out
    assert (
        client.post(f"/s/{survey.slug}/paper/", form | {f"arm_{split.id}": "1"}).status_code == 200
    )
    assert stored_reports(survey) == [{split.id: 3, other.id: 0}]


def test_the_ballot_notices_speak_the_surveys_language(api, client):
    survey = create(api)
    survey.language = "de"
    survey.save()
    html = client.get(survey.get_absolute_url()).content.decode()
    assert "Diese Frage wird direkt gestellt: Ihre Antwort wird so gesendet" in html
    assert "Ihr Gerät kann Ihnen stattdessen <strong>1 Frage direkt</strong> stellen" in html
    assert "Entscheiden Sie zuerst, bevor Sie an Ihre Antwort denken" in html


def test_the_estimates_csv_gives_the_direct_ballot_and_the_difference_their_rows(api):
    import csv
    import io

    survey = create(api)
    split, other = survey.questions.order_by("position")
    reports = [{split.id: r, other.id: 0} for r in (0, 1, 1, 2, 3, 3)]
    bulk_record(survey, reports, simulated=False)
    text = api.get(f"/api/surveys/{survey.id}/estimates.csv").content.decode()
    rows = [r for r in csv.DictReader(io.StringIO(text)) if r["question"] == str(split.id)]
    assert [r["option"] for r in rows] == ["", "direct", "difference"]
    entry = api.get(f"/api/surveys/{survey.id}/estimates/").json()["questions"][0]
    assert float(rows[1]["estimate"]) == pytest.approx(entry["direct"]["estimate"])
    assert float(rows[2]["ci_low"]) == pytest.approx(entry["difference"]["ci_low"])
