"""Guards of the arrival (issue 12): studies may require a platform id (``Study.require_platform_id``),
and each browser arrival carries a random key, unique per study, so one arrival makes one annotator
however often its consent is posted (``Annotator.arrival_key``; existing annotators have none)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("studyapp", "0004_study_slug_help_text"),
    ]

    operations = [
        migrations.AddField(
            model_name="annotator",
            name="arrival_key",
            field=models.CharField(
                blank=True, editable=False, help_text="the random key of the browser's arrival: one arrival, one annotator", max_length=32
            ),
        ),
        migrations.AddField(
            model_name="study",
            name="require_platform_id",
            field=models.BooleanField(
                default=False, help_text="admit only newcomers whose link carries a Prolific or MTurk participant id (no anonymous link)"
            ),
        ),
        migrations.AddConstraint(
            model_name="annotator",
            constraint=models.UniqueConstraint(
                condition=models.Q(("arrival_key", ""), _negated=True), fields=("study", "arrival_key"), name="annotator_unique_arrival_key"
            ),
        ),
    ]
