from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.core.management import call_command

from estimator.analysis import survey_results
from survey.models import Tally, current_hour

pytestmark = pytest.mark.django_db


def test_compacting_keeps_every_total_and_the_chart(make_survey):
    survey = make_survey(n_questions=2)
    rng = np.random.default_rng(3)
    for hours_ago in (3, 2, 1):
        for _ in range(12):  # many small batches land on several shards per hour
            survey.simulate(5, 0.4, rng, hour=current_hour() - timedelta(hours=hours_ago))
    tallies = Tally.objects.filter(question__survey=survey)
    before_counts, before_chart = tallies.counts(), tallies.counts_by_hour()
    before_estimates = survey_results(survey).as_dict()
    rows_before = tallies.count()

    call_command("compact_tallies", verbosity=0)

    assert tallies.counts() == before_counts
    assert tallies.counts_by_hour() == before_chart
    assert survey_results(survey).as_dict() == before_estimates
    assert tallies.count() == 3 * 2 * 2 < rows_before
    assert set(tallies.values_list("shard", flat=True)) == {0}


def test_compacting_leaves_the_current_hour_alone(make_survey):
    survey = make_survey()
    for _ in range(20):
        survey.simulate(3, 0.5, np.random.default_rng(1))
    rows = Tally.objects.count()
    assert Tally.objects.all().compact(before=current_hour()) == 0
    assert Tally.objects.count() == rows
