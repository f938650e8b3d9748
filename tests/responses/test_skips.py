"""A skip ("prefer not to answer") is stored as a skip: never a "no" or a 0, counted apart
in every result, and left out of every estimate."""

from __future__ import annotations

import csv
import io
import uuid
from collections import Counter

from analysis.results import survey_results
from responses.counts import joint_counts
from responses.exports import responses_csv
from responses.write import record_submission
from tests.storage import stored_reports


def test_a_skip_is_stored_as_a_skip_and_counted_apart(make_survey):
    survey = make_survey(n_questions=2)
    first, second = survey.questions.all()
    record_submission(survey, uuid.uuid4(), {first.id: 1, second.id: None})
    record_submission(survey, uuid.uuid4(), {first.id: 0, second.id: 1})

    assert stored_reports(survey) == [
        {first.id: 0, second.id: 1},
        {first.id: 1, second.id: None},
    ]
    entries = survey_results(survey).as_dict()["questions"]
    assert (entries[0]["n"], entries[0]["skipped"], entries[0]["yes_count"]) == (2, 0, 1)
    assert (entries[1]["n"], entries[1]["skipped"], entries[1]["yes_count"]) == (1, 1, 1)
    assert joint_counts(survey, [first.id, second.id]) == Counter({(0, 1): 1})
    rows = list(csv.reader(io.StringIO(responses_csv(survey))))
    assert sorted(rows[1:]) == [["1", "0", "1"], ["1", "1", ""]]
