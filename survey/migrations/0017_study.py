from django.db import migrations, models


class Migration(migrations.Migration):
    """Skips, consent and conditions. Surveys that exist keep what their respondents saw (no skip);
    new surveys allow skipping."""

    dependencies = [
        ("survey", "0016_analyst_role_and_min_cell_floor"),
    ]

    operations = [
        migrations.AddField(
            model_name="survey",
            name="allow_skip",
            field=models.BooleanField(default=False),
        ),
        migrations.AlterField(
            model_name="survey",
            name="allow_skip",
            field=models.BooleanField(default=True),
        ),
        migrations.AddField(
            model_name="question",
            name="show_if",
            field=models.JSONField(blank=True, default=None, null=True),
        ),
        migrations.AddField(
            model_name="survey",
            name="consent_text",
            field=models.TextField(blank=True, default=""),
        ),
    ]
