from itertools import groupby

import django.db.models.deletion
from django.db import migrations, models

from estimator.designs import make_design
from responses.batch import Batch, Row, pattern_key
from responses.models import receipt_of


def rebuild_sealed_counts(apps, schema_editor):
    """Receipts keep a digest of the client's id, no longer the id. Every stored
    submission becomes one more in the count of its answer pattern,
    per question, hour and report in the tallies, and in its survey's count: all
    rebuilt from the answers themselves, so that earlier imports (which kept no patterns
    and tallied numbers by their raw report) count exactly like every other path."""
    Question = apps.get_model("survey", "Question")
    Submission = apps.get_model("responses", "Submission")
    Answer = apps.get_model("responses", "Answer")
    AnswerPattern = apps.get_model("responses", "AnswerPattern")
    Tally = apps.get_model("responses", "Tally")
    SurveyCount = apps.get_model("responses", "SurveyCount")
    OldReceipt = apps.get_model("responses", "OldReceipt")
    Receipt = apps.get_model("responses", "Receipt")
    for start in range(0, OldReceipt.objects.count(), 5000):
        Receipt.objects.bulk_create(
            Receipt(submission_id=receipt_of(r.submission_id), survey_id=r.survey_id)
            for r in OldReceipt.objects.order_by("pk")[start : start + 5000]
        )
    designs = {
        q.id: make_design(q.kind, q.design_name, q.design_params, k=len(q.options or ()) or None)
        for q in Question.objects.all()
    }
    Tally.objects.all().delete()
    for survey_id in Submission.objects.values_list("survey_id", flat=True).distinct():
        answers = (
            Answer.objects.filter(submission__survey_id=survey_id)
            .order_by("submission_id")
            .values_list(
                "submission_id",
                "submission__round",
                "submission__simulated",
                "submission__received_hour",
                "question_id",
                "value",
            )
            .iterator(chunk_size=5000)
        )
        batch = Batch()
        for _, group in groupby(answers, key=lambda row: row[0]):
            rows = list(group)
            _, round_, simulated, hour = rows[0][:4]
            key = pattern_key({row[4]: row[5] for row in rows})
            batch.add(Row(survey_id, round_, simulated, hour, key), designs)
        AnswerPattern.objects.bulk_create(
            AnswerPattern(survey_id=s, round=r, simulated=sim, key=k, count=n)
            for (s, r, sim, k), n in batch.patterns.items()
        )
        Tally.objects.bulk_create(
            Tally(
                question_id=qid,
                round=r,
                simulated=sim,
                hour=hour,
                value=key,
                count=sums.count,
                total=sums.total,
                total_sq=sums.total_sq,
            )
            for (qid, r, sim, hour, key), sums in batch.tally_rows().items()
        )
        real = sum(n for (s, sim), n in batch.submissions.items() if not sim)
        simulated = sum(n for (s, sim), n in batch.submissions.items() if sim)
        SurveyCount.objects.create(survey_id=survey_id, real=real, simulated=simulated)


class Migration(migrations.Migration):
    """Submissions and answers become counts (answer patterns, tallies, survey counts),
    the sealed form of every response, and receipts digests; then the old tables go,
    with their files."""


    dependencies = [
        ('responses', '0002_current_hour_tables'),
        ('survey', '0015_reports_move_to_responses'),
    ]

    operations = [
        migrations.CreateModel(
            name='AnswerPattern',
            fields=[
                ('pk', models.CompositePrimaryKey('survey', 'round', 'simulated', 'key', blank=True, editable=False, primary_key=True, serialize=False)),
                ('round', models.PositiveIntegerField(default=1)),
                ('simulated', models.BooleanField(default=False)),
                ('key', models.TextField()),
                ('count', models.BigIntegerField(default=0)),
                ('survey', models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='patterns', to='survey.survey')),
            ],
        ),
        migrations.RunPython(rebuild_sealed_counts, migrations.RunPython.noop),
        migrations.DeleteModel(
            name='Answer',
        ),
        migrations.DeleteModel(
            name='OldAnswerPattern',
        ),
        migrations.DeleteModel(
            name='OldReceipt',
        ),
        migrations.DeleteModel(
            name='Submission',
        ),
    ]
