import django.core.validators
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("survey", "0009_builder_revisions_close_date"),
    ]

    operations = [
        migrations.AddField(
            model_name="survey",
            name="min_cell_count",
            field=models.PositiveSmallIntegerField(
                default=10, validators=[django.core.validators.MinValueValidator(1)]
            ),
        ),
        migrations.CreateModel(
            name="AnswerPattern",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "survey", "round", "simulated", "key", "shard", blank=True,
                        editable=False,
                        primary_key=True, serialize=False,
                    ),
                ),
                ("round", models.PositiveIntegerField(default=1)),
                ("simulated", models.BooleanField(default=False)),
                ("key", models.TextField()),
                ("shard", models.PositiveSmallIntegerField(default=0)),
                ("count", models.BigIntegerField(default=0)),
                (
                    "survey",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="patterns",
                        to="survey.survey",
                    ),
                ),
            ],
        ),
    ]
