"""Tallies keep the sum and the sum of squares of their reports, and a number
question's reports are tallied under their design's histogram bin."""

from collections import defaultdict

from django.db import migrations, models

from estimator.designs import make_design


def fill_sums(apps, schema_editor):
    """Existing rows: total = report × count, total_sq = report² × count; a number
    question's rows, keyed by report until now, are folded into their bins."""
    Tally = apps.get_model("survey", "Tally")
    Question = apps.get_model("survey", "Question")
    for question in Question.objects.filter(tallies__isnull=False).distinct():
        design = make_design(
            question.kind,
            question.design_name,
            question.design_params,
            k=len(question.options) or None,
        )
        rows = list(Tally.objects.filter(question=question))
        folded = defaultdict(lambda: [0, 0, 0])
        for row in rows:
            key = (row.round, row.simulated, row.hour, design.tally_key(row.value), row.shard)
            sums = folded[key]
            sums[0] += row.count
            sums[1] += row.value * row.count
            sums[2] += row.value * row.value * row.count
        Tally.objects.filter(pk__in=[row.pk for row in rows]).delete()
        Tally.objects.bulk_create(
            Tally(
                question=question,
                round=r,
                simulated=s,
                hour=h,
                value=v,
                shard=shard,
                count=n,
                total=total,
                total_sq=total_sq,
            )
            for (r, s, h, v, shard), (n, total, total_sq) in folded.items()
        )


class Migration(migrations.Migration):
    dependencies = [
        ("survey", "0010_analysis"),
    ]

    operations = [
        migrations.AddField(
            model_name="tally",
            name="total",
            field=models.DecimalField(decimal_places=0, default=0, max_digits=40),
        ),
        migrations.AddField(
            model_name="tally",
            name="total_sq",
            field=models.DecimalField(decimal_places=0, default=0, max_digits=60),
        ),
        migrations.RunPython(fill_sums, migrations.RunPython.noop),
    ]
