"""Submissions keyed by a server-drawn random id (the client's id moves to a receipt),
answers keyed by (submission, question) with no sequential id, and a flag for the hours
whose rows are still in arrival order (``manage.py seal_hours`` rewrites them)."""

from __future__ import annotations

import uuid

import django.db.models.deletion
from django.db import migrations, models

ANSWER_FIELDS = "submission_id, question_id, value"


class Migration(migrations.Migration):
    dependencies = [
        ("survey", "0006_answer_values_integers"),
    ]

    operations = [
        migrations.CreateModel(
            name="Receipt",
            fields=[
                ("submission_id", models.UUIDField(primary_key=True, serialize=False)),
                ("received_hour", models.DateTimeField()),
                (
                    "survey",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="receipts",
                        to="survey.survey",
                    ),
                ),
            ],
        ),
        # Every id a client has used so far keeps protecting against duplicate retries;
        # the submissions keep them as keys only until their hour is sealed.
        migrations.RunSQL(
            "INSERT INTO survey_receipt (submission_id, survey_id, received_hour) "
            "SELECT submission_id, survey_id, received_hour FROM survey_submission",
            migrations.RunSQL.noop,
        ),
        migrations.AddField(
            model_name="submission",
            name="sealed",
            field=models.BooleanField(db_default=False),
        ),
        migrations.AlterField(
            model_name="submission",
            name="submission_id",
            field=models.UUIDField(default=uuid.uuid4, primary_key=True, serialize=False),
        ),
        migrations.AddIndex(
            model_name="submission",
            index=models.Index(
                condition=models.Q(("sealed", False)), fields=["received_hour"], name="hour_to_seal"
            ),
        ),
        # A primary key cannot be changed into a composite one in place: copy the answers
        # into a table keyed by (submission, question), then give it the old name.
        migrations.CreateModel(
            name="AnswerByQuestion",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "submission",
                        "question",
                        blank=True,
                        editable=False,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                (
                    "submission",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="survey.submission",
                    ),
                ),
                (
                    "question",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="survey.question",
                    ),
                ),
                ("value", models.BigIntegerField()),
            ],
        ),
        migrations.RunSQL(
            f"INSERT INTO survey_answerbyquestion ({ANSWER_FIELDS}) "
            f"SELECT {ANSWER_FIELDS} FROM survey_answer",
            f"INSERT INTO survey_answer ({ANSWER_FIELDS}) "
            f"SELECT {ANSWER_FIELDS} FROM survey_answerbyquestion",
        ),
        migrations.DeleteModel(name="Answer"),
        migrations.RenameModel(old_name="AnswerByQuestion", new_name="Answer"),
        migrations.AlterField(
            model_name="answer",
            name="submission",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="answers",
                to="survey.submission",
            ),
        ),
        migrations.AlterField(
            model_name="answer",
            name="question",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="answers",
                to="survey.question",
            ),
        ),
    ]
