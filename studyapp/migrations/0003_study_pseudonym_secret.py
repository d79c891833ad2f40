"""A per-study HMAC key for the annotator pseudonyms of exports (services.data.pseudonyms).

AddField evaluates the callable default once for all existing rows, so each existing study then
gets its own key.
"""

import secrets

from django.db import migrations, models

import studyapp.models.study


def distinct_secrets(apps, schema_editor):
    Study = apps.get_model("studyapp", "Study")
    for study in Study.objects.all():
        study.pseudonym_secret = secrets.token_hex(32)
        study.save(update_fields=["pseudonym_secret"])


class Migration(migrations.Migration):
    dependencies = [
        ("studyapp", "0002_annotator_flow"),
    ]

    operations = [
        migrations.AddField(
            model_name="study",
            name="pseudonym_secret",
            field=models.CharField(
                default=studyapp.models.study.new_pseudonym_secret,
                editable=False,
                help_text="HMAC key of the annotator pseudonyms in exports",
                max_length=64,
            ),
        ),
        migrations.RunPython(distinct_secrets, migrations.RunPython.noop, elidable=True),
    ]
