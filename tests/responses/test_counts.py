"""The counts every result is computed from, live and frozen."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

from analysis.grouped import breakdown
from analysis.results import survey_results
from responses.counts import FrozenCounts, survey_counts
from responses.write import bulk_record, record_submission


def test_frozen_counts_give_every_result_as_it_was_when_frozen(make_survey):
    survey = make_survey(n_questions=2)
    group, cheat = survey.questions.all()
    group.design_name, group.design_params = "direct", {}
    group.save()
    earlier = datetime(2026, 11, 23, 9, tzinfo=UTC)
    bulk_record(survey, [{group.id: i % 2, cheat.id: int(i % 3 == 0)} for i in range(60)],
                simulated=False, hour=earlier)  # fmt: skip
    record_submission(survey, uuid.uuid4(), {group.id: 1, cheat.id: None})
    live = survey_counts(survey)
    frozen = FrozenCounts(survey, json.loads(json.dumps(FrozenCounts.freeze(live).data)))
    before = survey_results(survey, counts=live).as_dict()
    before_breakdown = breakdown(survey, cheat.id, group.id, 0.95, "wilson", counts=live)

    bulk_record(survey, [{group.id: 1, cheat.id: 1}] * 20, simulated=False)

    assert survey_results(survey, counts=frozen).as_dict() == before
    assert breakdown(survey, cheat.id, group.id, 0.95, "wilson", counts=frozen) == before_breakdown
    assert [h.hour for h in frozen.hours(cheat.id)][0] == earlier
    assert frozen.hours(cheat.id)[-1].hour > earlier + timedelta(hours=1)
    assert survey_results(survey).as_dict() != before
