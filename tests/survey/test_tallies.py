from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.core.management import call_command

from analysis.results import survey_results
from responses.models import Tally
from responses.write import simulate_respondents
from survey.models import current_hour

pytestmark = pytest.mark.django_db


def test_compacting_keeps_every_total_and_the_chart(make_survey):
    survey = make_survey(n_questions=2)
    rng = np.random.default_rng(3)
    for hours_ago in (3, 2, 1):
        for _ in range(12):  # many small batches land on several shards per hour
            simulate_respondents(
                survey, 5, 0.4, rng, hour=current_hour() - timedelta(hours=hours_ago)
            )
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
        simulate_respondents(survey, 3, 0.5, np.random.default_rng(1))
    rows = Tally.objects.count()
    assert Tally.objects.all().compact(before=current_hour()) == 0
    assert Tally.objects.count() == rows


def test_the_migration_fills_sums_and_bins_existing_number_tallies(owner):
    """Tallies written before sums existed: reports as keys, no sums. The migration's
    step gives them their sums and folds a number question's reports into its bins."""
    from importlib import import_module

    from django.db import connection
    from django.db.migrations.loader import MigrationLoader

    from survey.models import Survey

    apps = MigrationLoader(connection).project_state(("survey", "0011_tally_sums")).apps

    survey = Survey.objects.create(owner=owner, title="Old", status=Survey.Status.OPEN)
    yes_no = survey.questions.create(text="Cheated?", design_params={})
    number = survey.questions.create(
        text="Drinks?", kind="number", design_name="laplace",
        design_params={"epsilon": 1.0, "lower": 0, "upper": 10},
    )  # fmt: skip
    hour = current_hour()
    old = [(yes_no, 1, 7), (yes_no, 0, 3), (number, -60, 2), (number, 3, 4), (number, 4, 1)]
    Tally.objects.bulk_create(
        Tally(question=q, hour=hour, value=v, count=n, total=0, total_sq=0) for q, v, n in old
    )
    import_module("survey.migrations.0011_tally_sums").fill_sums(apps, None)

    sums = Tally.objects.sums()
    assert sums[yes_no.id] == (10, 7, 7)
    assert sums[number.id] == (7, -120 + 12 + 4, 7200 + 36 + 16)
    design = number.design
    expected = {design.tally_key(-60): 2}
    for report, n in ((3, 4), (4, 1)):
        expected[design.tally_key(report)] = expected.get(design.tally_key(report), 0) + n
    assert Tally.objects.counts()[number.id] == expected
    assert Tally.objects.counts()[yes_no.id] == {1: 7, 0: 3}
