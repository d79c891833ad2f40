# The schema of migrations 0001-0023 in one step, written by makemigrations from the models (Django's squash
# optimizer only got 216 -> 214 operations): a new database (every test database, `make run`, each scratch database
# of the tests) is built from these CREATE statements instead of 23 migrations' worth of state reloads and SQLite
# table rebuilds. A database that applied the originals keeps them (`replaces`); their two RunPython steps only
# check or re-key existing rows, which a new database has none of (elidable).

import datetime
import uuid
from decimal import Decimal

import django.db.models.deletion
import django.db.models.expressions
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

import studyapp.models.annotation
import studyapp.models.study


class Migration(migrations.Migration):
    replaces = [
        ("studyapp", "0001_initial"),
        ("studyapp", "0002_annotator_flow"),
        ("studyapp", "0003_study_pseudonym_secret"),
        ("studyapp", "0004_study_slug_help_text"),
        ("studyapp", "0005_arrival_guards"),
        ("studyapp", "0006_quality_control"),
        ("studyapp", "0007_annotator_platform_from_registry"),
        ("studyapp", "0008_study_teams"),
        ("studyapp", "0009_withdrawal_and_erasure"),
        ("studyapp", "0010_staff_sessions"),
        ("studyapp", "0011_study_settings_declared"),
        ("studyapp", "0012_timestamps_in_range"),
        ("studyapp", "0013_study_language_and_fair_exits"),
        ("studyapp", "0014_document_text"),
        ("studyapp", "0015_platform_review"),
        ("studyapp", "0016_adaptive_allocation"),
        ("studyapp", "0017_allocation_decided_answers"),
        ("studyapp", "0018_withdrawn_participants"),
        ("studyapp", "0019_review_pay_sent"),
        ("studyapp", "0020_review_jobs"),
        ("studyapp", "0021_stored_plan"),
        ("studyapp", "0022_adaptive_two_phase"),
        ("studyapp", "0023_review_claim_holder"),
    ]

    initial = True

    dependencies = [
        ("auth", "__first__"),
    ]

    operations = [
        migrations.CreateModel(
            name="Annotator",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("pseudonym", models.CharField(default=studyapp.models.annotation.new_pseudonym, max_length=20, unique=True)),
                ("token", models.CharField(default=studyapp.models.annotation.new_token, editable=False, max_length=64, unique=True)),
                (
                    "platform",
                    models.CharField(
                        blank=True,
                        default="",
                        help_text="the key of the platform the link came from (services.platforms); empty: the anonymous link",
                        max_length=10,
                    ),
                ),
                ("external_id", models.CharField(blank=True, help_text="e.g. the Prolific PID or the MTurk worker id", max_length=100)),
                (
                    "external_ids",
                    models.JSONField(blank=True, default=dict, help_text="the platform parameters of the latest arrival (query string)"),
                ),
                (
                    "arrival_key",
                    models.CharField(
                        blank=True,
                        editable=False,
                        help_text="the random key of the browser's arrival: one arrival, one annotator",
                        max_length=32,
                    ),
                ),
                (
                    "kept_pseudonym",
                    models.CharField(
                        blank=True,
                        editable=False,
                        help_text="the export pseudonym, kept when the platform id was purged (purge_platform_ids)",
                        max_length=20,
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("new", "arrived, no items yet"),
                            ("active", "working"),
                            ("finished", "finished"),
                            ("refused", "refused: study full"),
                            ("excluded", "excluded by quality control"),
                            ("screened", "screened out: failed the comprehension check"),
                        ],
                        default="new",
                        max_length=10,
                    ),
                ),
                ("exclusion_reason", models.TextField(blank=True)),
                ("consent_version", models.CharField(blank=True, help_text="the consent version accepted last", max_length=50)),
                ("consented_at", models.DateTimeField(blank=True, null=True)),
                ("instructions_read_at", models.DateTimeField(blank=True, null=True)),
                ("practice_value", models.SmallIntegerField(blank=True, help_text="the practice answer as shown (-4..4)", null=True)),
                ("practice_answered_at", models.DateTimeField(blank=True, null=True)),
                ("comprehension_attempts", models.PositiveSmallIntegerField(default=0)),
                ("comprehension_passed_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("last_seen_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "ordering": ["study", "created_at"],
            },
        ),
        migrations.CreateModel(
            name="Collection",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100, unique=True)),
                ("description", models.TextField(blank=True)),
                ("source", models.JSONField(blank=True, default=dict)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["name"],
            },
        ),
        migrations.CreateModel(
            name="Presentation",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[("pair", "run pair"), ("identical", "check: identical pages"), ("degraded", "check: degraded copy")],
                        default="pair",
                        max_length=10,
                    ),
                ),
                (
                    "level",
                    models.CharField(
                        choices=[("topic", "topic level (all kept subtopics)"), ("subtopic", "subtopic level (one subtopic)")],
                        max_length=10,
                    ),
                ),
                ("b_documents", models.JSONField(blank=True, default=list)),
                (
                    "expected_sign",
                    models.SmallIntegerField(blank=True, help_text="checks only: expected sign of the canonical answer", null=True),
                ),
            ],
            options={
                "ordering": ["study", "id"],
            },
        ),
        migrations.CreateModel(
            name="Subtopic",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("number", models.CharField(help_text="the intent id of the qrels (usually 1, 2, ...)", max_length=32)),
                ("text", models.TextField(blank=True)),
                ("weight", models.FloatField(blank=True, help_text="Pr(i|q) as given; empty means uniform", null=True)),
                ("type", models.CharField(choices=[("inf", "informational"), ("nav", "navigational")], default="inf", max_length=3)),
                ("position", models.PositiveIntegerField(default=0)),
            ],
            options={
                "ordering": ["topic", "position"],
            },
        ),
        migrations.CreateModel(
            name="Assignment",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("position", models.PositiveIntegerField(help_text="order in the annotator's sequence, from 1")),
                ("a_on_left", models.BooleanField(help_text="is run_a (the canonical first run) shown on the left?")),
                ("assigned_at", models.DateTimeField()),
                ("served_at", models.DateTimeField(blank=True, null=True)),
                ("lease_expires_at", models.DateTimeField()),
                ("released_at", models.DateTimeField(blank=True, null=True)),
                (
                    "annotator",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="assignments", to="studyapp.annotator"),
                ),
                (
                    "presentation",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="assignments", to="studyapp.presentation"),
                ),
            ],
            options={
                "ordering": ["annotator", "position"],
                "indexes": [models.Index(fields=["presentation", "lease_expires_at"], name="assignment_presentation_lease")],
                "constraints": [
                    models.UniqueConstraint(fields=("annotator", "presentation"), name="assignment_unique_presentation"),
                    models.UniqueConstraint(fields=("annotator", "position"), name="assignment_unique_position"),
                    models.CheckConstraint(condition=models.Q(("position__gte", 1)), name="assignment_position_positive"),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("assigned_at__gte", datetime.datetime(2000, 1, 1, 0, 0, tzinfo=datetime.UTC)),
                            ("assigned_at__lt", datetime.datetime(2100, 1, 1, 0, 0, tzinfo=datetime.UTC)),
                        ),
                        name="assignment_assigned_at_range",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("served_at__isnull", True),
                            models.Q(
                                ("served_at__gte", datetime.datetime(2000, 1, 1, 0, 0, tzinfo=datetime.UTC)),
                                ("served_at__lt", datetime.datetime(2100, 1, 1, 0, 0, tzinfo=datetime.UTC)),
                            ),
                            _connector="OR",
                        ),
                        name="assignment_served_at_range",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("lease_expires_at__gte", datetime.datetime(2000, 1, 1, 0, 0, tzinfo=datetime.UTC)),
                            ("lease_expires_at__lt", datetime.datetime(2100, 1, 1, 0, 0, tzinfo=datetime.UTC)),
                        ),
                        name="assignment_lease_expires_at_range",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="Document",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("docid", models.CharField(max_length=200)),
                ("title", models.TextField(blank=True)),
                ("url", models.TextField(blank=True)),
                ("snippet", models.TextField(blank=True)),
                ("text", models.TextField(blank=True, db_default="", default="")),
                (
                    "collection",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="documents", to="studyapp.collection"),
                ),
            ],
            options={
                "ordering": ["collection", "docid"],
                "constraints": [models.UniqueConstraint(fields=("collection", "docid"), name="document_unique_docid")],
            },
        ),
        migrations.CreateModel(
            name="Preference",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("value", models.SmallIntegerField(help_text="as shown: -4 left much better .. +4 right much better")),
                ("canonical", models.SmallIntegerField(help_text="re-oriented: positive = run_b preferred")),
                ("server_seconds", models.FloatField(blank=True, null=True)),
                (
                    "client_ms",
                    models.PositiveIntegerField(blank=True, help_text="the browser's decision time: first shown -> submitted", null=True),
                ),
                ("visible_ms", models.PositiveIntegerField(blank=True, help_text="of that, how long the page was visible", null=True)),
                (
                    "first_interaction_ms",
                    models.PositiveIntegerField(blank=True, help_text="first shown -> first input on the page", null=True),
                ),
                ("request_id", models.CharField(blank=True, help_text="client-generated, makes answering idempotent", max_length=64)),
                ("answered_at", models.DateTimeField()),
                ("late", models.BooleanField(default=False, help_text="arrived after the lease had expired")),
                (
                    "assignment",
                    models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name="preference", to="studyapp.assignment"),
                ),
            ],
            options={
                "ordering": ["answered_at"],
                "constraints": [
                    models.CheckConstraint(condition=models.Q(("value__gte", -4), ("value__lte", 4)), name="preference_value_range"),
                    models.CheckConstraint(
                        condition=models.Q(("canonical__gte", -4), ("canonical__lte", 4)), name="preference_canonical_range"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("canonical", models.F("value")),
                            ("canonical", django.db.models.expressions.CombinedExpression(models.F("value"), "*", models.Value(-1))),
                            _connector="OR",
                        ),
                        name="preference_canonical_is_reoriented",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("server_seconds__isnull", True), ("server_seconds__gte", 0), _connector="OR"),
                        name="preference_server_seconds_nonnegative",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("answered_at__gte", datetime.datetime(2000, 1, 1, 0, 0, tzinfo=datetime.UTC)),
                            ("answered_at__lt", datetime.datetime(2100, 1, 1, 0, 0, tzinfo=datetime.UTC)),
                        ),
                        name="preference_answered_at_range",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="Run",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100)),
                ("source", models.CharField(blank=True, help_text="file it was imported from", max_length=500)),
                (
                    "collection",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="runs", to="studyapp.collection"),
                ),
            ],
            options={
                "ordering": ["collection", "name"],
                "constraints": [models.UniqueConstraint(fields=("collection", "name"), name="run_unique_name")],
            },
        ),
        migrations.AddField(
            model_name="presentation",
            name="run_a",
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to="studyapp.run"),
        ),
        migrations.AddField(
            model_name="presentation",
            name="run_b",
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to="studyapp.run"),
        ),
        migrations.CreateModel(
            name="StaffSession",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "key_digest",
                    models.CharField(help_text="SHA-256 of the random key kept in the signed session", max_length=64, unique=True),
                ),
                ("created_at", models.DateTimeField()),
                ("expires_at", models.DateTimeField()),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="staff_sessions", to=settings.AUTH_USER_MODEL
                    ),
                ),
            ],
            options={
                "ordering": ["user", "created_at"],
                "indexes": [models.Index(fields=["user", "expires_at"], name="staffsession_user_expiry")],
            },
        ),
        migrations.CreateModel(
            name="Study",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100, unique=True)),
                (
                    "slug",
                    models.SlugField(
                        help_text="part of the annotators' address: /s/demo-study/ for the slug demo-study", max_length=100, unique=True
                    ),
                ),
                (
                    "status",
                    models.CharField(choices=[("open", "open"), ("paused", "paused"), ("closed", "closed")], default="open", max_length=10),
                ),
                (
                    "levels",
                    models.CharField(
                        choices=[("topic", "topic only"), ("subtopic", "subtopic only"), ("both", "topic and subtopic")],
                        default="both",
                        max_length=10,
                    ),
                ),
                ("config", models.JSONField(blank=True, default=dict, help_text="the configuration it was created from")),
                (
                    "pseudonym_secret",
                    models.CharField(
                        default=studyapp.models.study.new_pseudonym_secret,
                        editable=False,
                        help_text="HMAC key of the annotator pseudonyms in exports",
                        max_length=64,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("subtopics_per_topic", models.PositiveSmallIntegerField(default=3, help_text="subtopics kept per topic (the heaviest)")),
                ("depth", models.PositiveSmallIntegerField(default=10, help_text="documents shown per result page")),
                (
                    "annotators_per_presentation",
                    models.PositiveSmallIntegerField(default=3, help_text="k, valid answers wanted per presentation"),
                ),
                ("items_per_annotator", models.PositiveIntegerField(default=60, help_text="quota per annotator, check items included")),
                ("fast_threshold_seconds", models.FloatField(default=10.0, help_text="decisions faster than this count as fast")),
                (
                    "fast_limit",
                    models.PositiveIntegerField(default=30, help_text="more decisions than this under the threshold exclude an annotator"),
                ),
                ("lease_minutes", models.PositiveIntegerField(default=20, help_text="inactivity after which items are freed")),
                ("check_share", models.FloatField(default=0.0, help_text="share of each annotator's items that are check items")),
                ("consent_text", models.TextField(blank=True, default="", help_text="shown before the study (Markdown)")),
                (
                    "consent_version",
                    models.CharField(default="1", help_text="stored with each consent; a new version asks everyone again", max_length=50),
                ),
                (
                    "instructions",
                    models.TextField(blank=True, default="", help_text="shown before the first item (Markdown), then the study's rules"),
                ),
                ("completion_code", models.CharField(blank=True, default="", help_text="shown at the end", max_length=100)),
                ("screenout_code", models.CharField(blank=True, default="", help_text="shown when the study is full", max_length=100)),
                (
                    "withdrawal_code",
                    models.CharField(
                        blank=True,
                        default="",
                        help_text="shown to participants who withdraw (empty: they are asked to return the study on their platform)",
                        max_length=100,
                    ),
                ),
                (
                    "platform_id_retention_days",
                    models.PositiveIntegerField(
                        blank=True,
                        default=None,
                        help_text="purge_platform_ids removes platform ids this many days after the last visit (empty: the site default)",
                        null=True,
                    ),
                ),
                (
                    "redirect_url",
                    models.CharField(
                        blank=True, default="", help_text="e.g. https://app.prolific.com/submissions/complete?cc={code}", max_length=500
                    ),
                ),
                (
                    "allocation",
                    models.CharField(
                        choices=[
                            ("uniform", "uniform: the presentations with the fewest answers first"),
                            ("adaptive", "adaptive: drawn groups disputed among the metrics still in the best set first"),
                        ],
                        default="uniform",
                        help_text="which presentations are offered first: uniform or adaptive",
                        max_length=10,
                    ),
                ),
                (
                    "same_pair_both_levels",
                    models.BooleanField(default=False, help_text="may one annotator see the same (topic, run pair) at both levels?"),
                ),
                (
                    "require_platform_id",
                    models.BooleanField(
                        default=False, help_text="admit only newcomers whose link carries a platform's participant id (no anonymous link)"
                    ),
                ),
                (
                    "language",
                    models.CharField(
                        choices=[("en", "English"), ("zh-hans", "Simplified Chinese"), ("ja", "Japanese")],
                        default="en",
                        help_text="the language of the participant pages",
                        max_length=10,
                    ),
                ),
                (
                    "min_viewport_width",
                    models.PositiveSmallIntegerField(
                        blank=True,
                        default=None,
                        help_text="participants whose browser window is narrower (CSS pixels) are asked to use a larger screen (empty: any width)",
                        null=True,
                    ),
                ),
                (
                    "excluded_exit",
                    models.CharField(
                        choices=[
                            ("return", "return the study on the platform (no code)"),
                            ("screenout", "leave with the screen-out code (Prolific: its redirect)"),
                        ],
                        default="return",
                        help_text="what a participant excluded mid-study by quality control is asked to do",
                        max_length=10,
                    ),
                ),
                (
                    "fast_time",
                    models.CharField(
                        choices=[
                            ("server", "server: item first served -> answer arrived"),
                            ("visible", "browser: time the page was visible (server time when the browser sent none)"),
                        ],
                        default="server",
                        help_text="which decision time the fast rule reads",
                        max_length=10,
                    ),
                ),
                (
                    "check_fail_limit",
                    models.PositiveIntegerField(
                        blank=True,
                        default=1,
                        help_text="exclude annotators failing more check items than this (default 1: two failed checks exclude; empty: only reported)",
                        null=True,
                    ),
                ),
                (
                    "straightline_limit",
                    models.PositiveIntegerField(
                        blank=True,
                        default=None,
                        help_text="exclude annotators giving the same answer more times in a row than this (empty: only reported)",
                        null=True,
                    ),
                ),
                (
                    "side_bias_limit",
                    models.FloatField(
                        blank=True,
                        default=None,
                        help_text="exclude annotators whose share of non-zero answers on one side exceeds this (empty: only reported)",
                        null=True,
                    ),
                ),
                (
                    "median_seconds_min",
                    models.FloatField(
                        blank=True,
                        default=None,
                        help_text="exclude annotators whose median decision time is under this (empty: only reported)",
                        null=True,
                    ),
                ),
                (
                    "bonus_amount",
                    models.DecimalField(
                        decimal_places=2,
                        default=Decimal("0.00"),
                        help_text="bonus per approved submission, in the platform study's currency (0: no bonus)",
                        max_digits=8,
                    ),
                ),
                (
                    "bonus_reason",
                    models.CharField(blank=True, default="", help_text="the bonus's reason (MTurk shows it to the worker)", max_length=500),
                ),
                (
                    "collection",
                    models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="studies", to="studyapp.collection"),
                ),
            ],
            options={
                "verbose_name_plural": "studies",
                "ordering": ["-created_at"],
                "constraints": [
                    models.CheckConstraint(condition=models.Q(("status__in", ["open", "paused", "closed"])), name="study_status_valid"),
                    models.CheckConstraint(condition=models.Q(("levels__in", ["topic", "subtopic", "both"])), name="study_levels_valid"),
                    models.CheckConstraint(
                        condition=models.Q(("subtopics_per_topic__gte", 1), ("subtopics_per_topic__lte", 100)),
                        name="study_subtopics_per_topic_range",
                    ),
                    models.CheckConstraint(condition=models.Q(("depth__gte", 1), ("depth__lte", 100)), name="study_depth_range"),
                    models.CheckConstraint(
                        condition=models.Q(("annotators_per_presentation__gte", 1), ("annotators_per_presentation__lte", 100)),
                        name="study_annotators_per_presentation_range",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("items_per_annotator__gte", 1), ("items_per_annotator__lte", 10000)),
                        name="study_items_per_annotator_range",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("fast_threshold_seconds__gt", 0), ("fast_threshold_seconds__lte", 3600)),
                        name="study_fast_threshold_seconds_range",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("fast_limit__gte", 0), ("fast_limit__lte", 10000)), name="study_fast_limit_range"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("lease_minutes__gte", 1), ("lease_minutes__lte", 1440)), name="study_lease_minutes_range"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("check_share__gte", 0), ("check_share__lte", 0.5)), name="study_check_share_range"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("platform_id_retention_days__isnull", True),
                            models.Q(("platform_id_retention_days__gte", 1), ("platform_id_retention_days__lte", 3650)),
                            _connector="OR",
                        ),
                        name="study_platform_id_retention_days_range",
                    ),
                    models.CheckConstraint(condition=models.Q(("allocation__in", ["uniform", "adaptive"])), name="study_allocation_valid"),
                    models.CheckConstraint(condition=models.Q(("language__in", ["en", "zh-hans", "ja"])), name="study_language_valid"),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("min_viewport_width__isnull", True),
                            models.Q(("min_viewport_width__gte", 240), ("min_viewport_width__lte", 3840)),
                            _connector="OR",
                        ),
                        name="study_min_viewport_width_range",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("excluded_exit__in", ["return", "screenout"])), name="study_excluded_exit_valid"
                    ),
                    models.CheckConstraint(condition=models.Q(("fast_time__in", ["server", "visible"])), name="study_fast_time_valid"),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("check_fail_limit__isnull", True),
                            models.Q(("check_fail_limit__gte", 0), ("check_fail_limit__lte", 10000)),
                            _connector="OR",
                        ),
                        name="study_check_fail_limit_range",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("straightline_limit__isnull", True),
                            models.Q(("straightline_limit__gte", 1), ("straightline_limit__lte", 10000)),
                            _connector="OR",
                        ),
                        name="study_straightline_limit_range",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("side_bias_limit__isnull", True),
                            models.Q(("side_bias_limit__gte", 0.5), ("side_bias_limit__lte", 1)),
                            _connector="OR",
                        ),
                        name="study_side_bias_limit_range",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("median_seconds_min__isnull", True),
                            models.Q(("median_seconds_min__gt", 0), ("median_seconds_min__lte", 3600)),
                            _connector="OR",
                        ),
                        name="study_median_seconds_min_range",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("bonus_amount__gte", 0), ("bonus_amount__lte", 100)), name="study_bonus_amount_range"
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="StoredPlan",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("design", "from the design and assumed users (before recruiting)"),
                            ("data", "from the answers so far (user model fitted to them)"),
                        ],
                        max_length=8,
                    ),
                ),
                ("computed_at", models.DateTimeField()),
                ("assumptions", models.JSONField(help_text="truth, signal, noise, random share, simulations per row, seed, reward")),
                ("table", models.JSONField(help_text="one object per participant count: the planning table's columns")),
                ("lines", models.TextField(help_text="the table as plan_study printed it")),
                (
                    "summary",
                    models.TextField(help_text="one sentence: the recommendation, or that no size in the grid separates the metrics"),
                ),
                ("answers", models.PositiveIntegerField(default=0, help_text="valid answers at the analysed level when computed")),
                ("seconds", models.FloatField(default=0, help_text="time the simulation took")),
                ("study", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="plans", to="studyapp.study")),
            ],
            options={
                "verbose_name": "stored plan",
                "ordering": ["study", "kind"],
                "constraints": [
                    models.UniqueConstraint(fields=("study", "kind"), name="storedplan_one_per_kind"),
                    models.CheckConstraint(condition=models.Q(("kind__in", ["design", "data"])), name="storedplan_kind_valid"),
                ],
            },
        ),
        migrations.CreateModel(
            name="ReviewJob",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "status",
                    models.CharField(
                        choices=[("queued", "queued"), ("running", "running"), ("done", "done"), ("failed", "failed")],
                        default="queued",
                        max_length=10,
                    ),
                ),
                ("created_at", models.DateTimeField()),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                (
                    "heartbeat_at",
                    models.DateTimeField(blank=True, help_text="the worker's last sign of life (a silent one is taken over)", null=True),
                ),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("worker", models.CharField(blank=True, help_text="host and process id of the worker running it", max_length=100)),
                (
                    "attempts",
                    models.PositiveSmallIntegerField(default=0, help_text="workers that took it (more than 1: a worker was lost)"),
                ),
                ("steps_done", models.PositiveIntegerField(default=0)),
                ("steps_failed", models.PositiveIntegerField(default=0)),
                ("log", models.TextField(blank=True, help_text="one line per step, as the command prints them")),
                ("error", models.TextField(blank=True)),
                (
                    "staff",
                    models.ForeignKey(
                        blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
                ("study", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="review_jobs", to="studyapp.study")),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "indexes": [models.Index(fields=["status", "created_at"], name="reviewjob_status_time")],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("status__in", ["queued", "running", "done", "failed"])), name="reviewjob_status_valid"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="ReviewDecision",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("action", models.CharField(choices=[("approve", "approve"), ("reject", "reject"), ("skip", "no action")], max_length=10)),
                (
                    "category",
                    models.CharField(
                        blank=True, help_text="the platform's rejection category (Prolific: e.g. FAILED_CHECK)", max_length=30
                    ),
                ),
                ("message", models.TextField(blank=True, help_text="the participant-facing reason sent with a rejection")),
                ("bonus", models.DecimalField(decimal_places=2, default=Decimal("0.00"), help_text="bonus to pay (0: none)", max_digits=8)),
                (
                    "source",
                    models.CharField(choices=[("rules", "the study's rules"), ("staff", "staff decision")], default="rules", max_length=10),
                ),
                ("decided_at", models.DateTimeField()),
                (
                    "applied_action",
                    models.CharField(
                        blank=True, help_text="approve/reject: what the platform holds (sent by us or found there)", max_length=10
                    ),
                ),
                ("applied_at", models.DateTimeField(blank=True, help_text="when the last apply looked at this submission", null=True)),
                (
                    "applied_note",
                    models.TextField(blank=True, help_text="what the last apply found, e.g. an error or 'returned on Prolific'"),
                ),
                (
                    "claimed_at",
                    models.DateTimeField(
                        blank=True, editable=False, help_text="an apply is sending this decision: its holder's last heartbeat", null=True
                    ),
                ),
                ("claimed_by", models.CharField(blank=True, editable=False, help_text="host:pid of the apply sending it", max_length=100)),
                (
                    "bonus_token",
                    models.UUIDField(default=uuid.uuid4, editable=False, help_text="our stable id of this bonus, the same on every retry"),
                ),
                (
                    "bonus_batch",
                    models.CharField(
                        blank=True, help_text="the platform's id of the bonus payment created for it (Prolific)", max_length=100
                    ),
                ),
                ("bonus_paid", models.DecimalField(blank=True, decimal_places=2, help_text="the amount paid", max_digits=8, null=True)),
                ("bonus_paid_at", models.DateTimeField(blank=True, null=True)),
                (
                    "bonus_unknown",
                    models.BooleanField(
                        default=False,
                        help_text="pay sent, outcome unknown: set before the pay call goes out, cleared only by a clean answer or staff",
                    ),
                ),
                (
                    "bonus_sent_at",
                    models.DateTimeField(blank=True, help_text="when the pay call whose answer is awaited was sent", null=True),
                ),
                (
                    "annotator",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE, related_name="review_decision", to="studyapp.annotator"
                    ),
                ),
                (
                    "staff",
                    models.ForeignKey(
                        blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
                (
                    "study",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="review_decisions", to="studyapp.study"),
                ),
            ],
            options={
                "ordering": ["study", "annotator__created_at"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("action__in", ["approve", "reject", "skip"])), name="reviewdecision_action_valid"
                    ),
                    models.CheckConstraint(condition=models.Q(("source__in", ["rules", "staff"])), name="reviewdecision_source_valid"),
                    models.CheckConstraint(condition=models.Q(("bonus__gte", 0)), name="reviewdecision_bonus_not_negative"),
                    models.UniqueConstraint(fields=("bonus_token",), name="reviewdecision_unique_bonus_token"),
                ],
            },
        ),
        migrations.CreateModel(
            name="QualityDecision",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("action", models.CharField(choices=[("exclude", "excluded"), ("reinstate", "reinstated")], max_length=10)),
                (
                    "rule",
                    models.CharField(
                        choices=[
                            ("fast", "fast decisions"),
                            ("checks", "failed check items"),
                            ("straightline", "straight-lining"),
                            ("side_bias", "left/right bias"),
                            ("median_time", "median decision time"),
                            ("rules", "no rule broken any more"),
                            ("staff", "staff decision"),
                        ],
                        max_length=15,
                    ),
                ),
                ("detail", models.TextField(blank=True, help_text='what the rule found, e.g. "fast: 31 of 60 decisions under 10 s"')),
                ("counts", models.JSONField(blank=True, default=dict, help_text="the rule's numbers and the settings it used")),
                ("reason", models.TextField(blank=True, help_text="the staff member's reason")),
                ("released", models.JSONField(blank=True, default=list, help_text="ids of the open assignments freed by this exclusion")),
                ("decided_at", models.DateTimeField()),
                (
                    "annotator",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="quality_decisions", to="studyapp.annotator"
                    ),
                ),
                (
                    "staff",
                    models.ForeignKey(
                        blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
                (
                    "study",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="quality_decisions", to="studyapp.study"),
                ),
            ],
            options={
                "ordering": ["study", "decided_at", "id"],
                "indexes": [models.Index(fields=["annotator", "decided_at"], name="qualitydecision_annotator")],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("action__in", ["exclude", "reinstate"])), name="qualitydecision_action_valid"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("rule__in", ["fast", "checks", "straightline", "side_bias", "median_time", "rules", "staff"])),
                        name="qualitydecision_rule_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("rule", "staff"), _negated=True), models.Q(("reason", ""), _negated=True), _connector="OR"
                        ),
                        name="qualitydecision_staff_reason",
                    ),
                ],
            },
        ),
        migrations.AddField(
            model_name="presentation",
            name="study",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="presentations", to="studyapp.study"),
        ),
        migrations.CreateModel(
            name="PlatformCall",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("platform", models.CharField(max_length=10)),
                ("operation", models.CharField(help_text="state, approve, reject, bonus, pay_bonus, create_draft", max_length=15)),
                ("request", models.JSONField(blank=True, default=dict, help_text="method, path and body (no credentials)")),
                ("ok", models.BooleanField()),
                ("status", models.PositiveSmallIntegerField(blank=True, help_text="HTTP status (empty: network error)", null=True)),
                ("response", models.TextField(blank=True, help_text="the answer or the error, shortened")),
                ("created_at", models.DateTimeField()),
                (
                    "annotator",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="platform_calls",
                        to="studyapp.annotator",
                    ),
                ),
                (
                    "staff",
                    models.ForeignKey(
                        blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
                (
                    "study",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="platform_calls", to="studyapp.study"),
                ),
            ],
            options={
                "verbose_name": "platform call",
                "ordering": ["study", "created_at", "id"],
                "indexes": [models.Index(fields=["study", "created_at"], name="platformcall_study_time")],
            },
        ),
        migrations.CreateModel(
            name="ErasureLog",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "source",
                    models.CharField(
                        choices=[
                            ("withdrawal", "the participant withdrew (withdraw page)"),
                            ("admin", "staff request (admin action)"),
                            ("command", "staff request (manage.py erase_participant)"),
                        ],
                        max_length=12,
                    ),
                ),
                ("answers", models.PositiveIntegerField(help_text="answers erased")),
                ("assignments", models.PositiveIntegerField(help_text="items given to them, answered or not (their places re-opened)")),
                ("status", models.CharField(blank=True, help_text="where they stood: new, active, finished, excluded, ...", max_length=10)),
                ("erased_at", models.DateTimeField()),
                (
                    "staff",
                    models.ForeignKey(
                        blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
                ("study", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="erasures", to="studyapp.study")),
            ],
            options={
                "verbose_name": "erasure",
                "ordering": ["study", "erased_at", "id"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("source__in", ["withdrawal", "admin", "command"])), name="erasurelog_source_valid"
                    )
                ],
            },
        ),
        migrations.AddField(
            model_name="annotator",
            name="study",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="annotators", to="studyapp.study"),
        ),
        migrations.CreateModel(
            name="AllocationRound",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("number", models.PositiveIntegerField()),
                ("drawn_at", models.DateTimeField()),
                ("answers", models.PositiveIntegerField(help_text="valid answers on regular presentations when the round was drawn")),
                ("target", models.FloatField(help_text="expected number of groups drawn (the sum of the probabilities)")),
                ("drawn", models.PositiveIntegerField(help_text="groups drawn")),
                ("contenders", models.JSONField(blank=True, default=list, help_text="entries of the best set the round steered by")),
                (
                    "decided",
                    models.BooleanField(
                        default=False, help_text="the best set had at most 3 entries at this look (level corrected for looks)"
                    ),
                ),
                (
                    "decided_answers",
                    models.PositiveIntegerField(blank=True, help_text="valid answers when the decided signal first came on", null=True),
                ),
                (
                    "study",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="allocation_rounds", to="studyapp.study"),
                ),
            ],
            options={
                "ordering": ["study", "number"],
                "constraints": [models.UniqueConstraint(fields=("study", "number"), name="allocationround_unique")],
            },
        ),
        migrations.CreateModel(
            name="StudyMember",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("role", models.CharField(choices=[("owner", "owner"), ("member", "member")], default="member", max_length=10)),
                (
                    "platform_ids",
                    models.BooleanField(
                        default=False, help_text="may see and download raw platform ids (Prolific PIDs, MTurk worker ids), e.g. to pay"
                    ),
                ),
                ("study", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="members", to="studyapp.study")),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="study_memberships", to=settings.AUTH_USER_MODEL
                    ),
                ),
            ],
            options={
                "verbose_name": "team member",
                "ordering": ["study", "role", "user__username"],
                "constraints": [
                    models.UniqueConstraint(fields=("study", "user"), name="studymember_unique_user"),
                    models.UniqueConstraint(condition=models.Q(("role", "owner")), fields=("study",), name="studymember_one_owner"),
                    models.CheckConstraint(condition=models.Q(("role__in", ["owner", "member"])), name="studymember_role_valid"),
                ],
            },
        ),
        migrations.CreateModel(
            name="StudyRun",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("run", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="study_runs", to="studyapp.run")),
                ("study", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="study_runs", to="studyapp.study")),
            ],
            options={
                "ordering": ["study", "run__name"],
                "constraints": [models.UniqueConstraint(fields=("study", "run"), name="studyrun_unique")],
            },
        ),
        migrations.CreateModel(
            name="StudyTopic",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("position", models.PositiveIntegerField(default=0)),
                ("study", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="study_topics", to="studyapp.study")),
            ],
            options={
                "ordering": ["study", "position"],
            },
        ),
        migrations.CreateModel(
            name="StudySubtopic",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("weight", models.FloatField()),
                ("position", models.PositiveSmallIntegerField(default=0, help_text="0 = heaviest")),
                (
                    "study_topic",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="kept_subtopics", to="studyapp.studytopic"),
                ),
                (
                    "subtopic",
                    models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="study_subtopics", to="studyapp.subtopic"),
                ),
            ],
            options={
                "ordering": ["study_topic", "position"],
                "constraints": [
                    models.UniqueConstraint(fields=("study_topic", "subtopic"), name="studysubtopic_unique"),
                    models.CheckConstraint(condition=models.Q(("weight__gte", 0), ("weight__lte", 1)), name="studysubtopic_weight_range"),
                ],
            },
        ),
        migrations.AddField(
            model_name="presentation",
            name="subtopic",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name="presentations", to="studyapp.subtopic"
            ),
        ),
        migrations.CreateModel(
            name="Topic",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("topic_id", models.CharField(max_length=64)),
                ("query", models.TextField(blank=True)),
                ("description", models.TextField(blank=True)),
                ("position", models.PositiveIntegerField(default=0)),
                (
                    "collection",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="topics", to="studyapp.collection"),
                ),
            ],
            options={
                "ordering": ["collection", "position"],
                "constraints": [models.UniqueConstraint(fields=("collection", "topic_id"), name="topic_unique_id")],
            },
        ),
        migrations.AddField(
            model_name="subtopic",
            name="topic",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="subtopics", to="studyapp.topic"),
        ),
        migrations.AddField(
            model_name="studytopic",
            name="topic",
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="study_topics", to="studyapp.topic"),
        ),
        migrations.CreateModel(
            name="RankedItem",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("rank", models.PositiveIntegerField()),
                (
                    "document",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="ranked_items", to="studyapp.document"),
                ),
                ("run", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="items", to="studyapp.run")),
                ("topic", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="ranked_items", to="studyapp.topic")),
            ],
            options={
                "ordering": ["run", "topic", "rank"],
                "constraints": [
                    models.UniqueConstraint(fields=("run", "topic", "rank"), name="rankeditem_unique_rank"),
                    models.UniqueConstraint(fields=("run", "topic", "document"), name="rankeditem_unique_document"),
                    models.CheckConstraint(condition=models.Q(("rank__gte", 1)), name="rankeditem_rank_positive"),
                ],
            },
        ),
        migrations.AddField(
            model_name="presentation",
            name="topic",
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="presentations", to="studyapp.topic"),
        ),
        migrations.CreateModel(
            name="Judgment",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("grade", models.PositiveSmallIntegerField()),
                (
                    "document",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="judgments", to="studyapp.document"),
                ),
                (
                    "subtopic",
                    models.ForeignKey(
                        blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name="judgments", to="studyapp.subtopic"
                    ),
                ),
                ("topic", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="judgments", to="studyapp.topic")),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("subtopic__isnull", False)),
                        fields=("subtopic", "document"),
                        name="judgment_unique_subtopic_doc",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("subtopic__isnull", True)), fields=("topic", "document"), name="judgment_unique_topic_doc"
                    ),
                    models.CheckConstraint(condition=models.Q(("grade__gte", 0)), name="judgment_grade_nonnegative"),
                    models.CheckConstraint(
                        condition=models.Q(("subtopic__isnull", False), ("grade", 0), _connector="OR"), name="judgment_no_intent_is_grade_0"
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="AllocationGroup",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("drawn_round", models.IntegerField(default=-1, help_text="the round that drew it (-1: not drawn yet)")),
                ("probability", models.FloatField(default=0.0, help_text="its selection probability in the last round that considered it")),
                (
                    "full",
                    models.BooleanField(default=True, help_text="drawn to get k answers per presentation (else one: the first layer only)"),
                ),
                ("full_probability", models.FloatField(default=1.0, help_text="the chance a drawn group was made full (the second phase)")),
                (
                    "priority",
                    models.FloatField(
                        default=0.0, help_text="dispute weight at the last recomputation (0: every contender orders it alike)"
                    ),
                ),
                ("disputed_by", models.TextField(blank=True, help_text="contenders ordering it against the others' majority")),
                ("run_a", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to="studyapp.run")),
                ("run_b", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to="studyapp.run")),
                (
                    "study",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="allocation_groups", to="studyapp.study"),
                ),
                ("topic", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to="studyapp.topic")),
            ],
            options={
                "ordering": ["study", "topic", "run_a", "run_b"],
                "indexes": [models.Index(fields=["study", "drawn_round"], name="allocationgroup_drawn")],
                "constraints": [
                    models.UniqueConstraint(fields=("study", "topic", "run_a", "run_b"), name="allocationgroup_unique"),
                    models.CheckConstraint(
                        condition=models.Q(("probability__gte", 0), ("probability__lte", 1)), name="allocationgroup_probability"
                    ),
                    models.CheckConstraint(condition=models.Q(("drawn_round__gte", -1)), name="allocationgroup_round"),
                    models.CheckConstraint(
                        condition=models.Q(("full_probability__gt", 0), ("full_probability__lte", 1)),
                        name="allocationgroup_full_probability",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="WithdrawnParticipant",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("key", models.CharField(help_text="HMAC-SHA256 of the platform and platform id (no id is kept)", max_length=64)),
                ("withdrawn_at", models.DateTimeField()),
                ("study", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="withdrawn", to="studyapp.study")),
            ],
            options={
                "verbose_name": "withdrawn participant",
                "ordering": ["study", "withdrawn_at", "id"],
                "constraints": [models.UniqueConstraint(fields=("study", "key"), name="withdrawn_once_per_study")],
            },
        ),
        migrations.CreateModel(
            name="Consent",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("version", models.CharField(max_length=50)),
                ("text_sha256", models.CharField(help_text="SHA-256 of the consent text as shown", max_length=64)),
                ("accepted_at", models.DateTimeField()),
                (
                    "annotator",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="consents", to="studyapp.annotator"),
                ),
            ],
            options={
                "ordering": ["annotator", "accepted_at"],
                "constraints": [models.UniqueConstraint(fields=("annotator", "version"), name="consent_unique_version")],
            },
        ),
        migrations.AddConstraint(
            model_name="annotator",
            constraint=models.UniqueConstraint(
                condition=models.Q(("external_id", ""), _negated=True),
                fields=("study", "platform", "external_id"),
                name="annotator_unique_external_id",
            ),
        ),
        migrations.AddConstraint(
            model_name="annotator",
            constraint=models.UniqueConstraint(
                condition=models.Q(("arrival_key", ""), _negated=True), fields=("study", "arrival_key"), name="annotator_unique_arrival_key"
            ),
        ),
        migrations.AddConstraint(
            model_name="annotator",
            constraint=models.CheckConstraint(
                condition=models.Q(("status__in", ["new", "active", "finished", "refused", "excluded", "screened"])),
                name="annotator_status_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="annotator",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("practice_value__isnull", True), models.Q(("practice_value__gte", -4), ("practice_value__lte", 4)), _connector="OR"
                ),
                name="annotator_practice_value_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="annotator",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("created_at__gte", datetime.datetime(2000, 1, 1, 0, 0, tzinfo=datetime.UTC)),
                    ("created_at__lt", datetime.datetime(2100, 1, 1, 0, 0, tzinfo=datetime.UTC)),
                ),
                name="annotator_created_at_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="annotator",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("last_seen_at__isnull", True),
                    models.Q(
                        ("last_seen_at__gte", datetime.datetime(2000, 1, 1, 0, 0, tzinfo=datetime.UTC)),
                        ("last_seen_at__lt", datetime.datetime(2100, 1, 1, 0, 0, tzinfo=datetime.UTC)),
                    ),
                    _connector="OR",
                ),
                name="annotator_last_seen_at_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="annotator",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("finished_at__isnull", True),
                    models.Q(
                        ("finished_at__gte", datetime.datetime(2000, 1, 1, 0, 0, tzinfo=datetime.UTC)),
                        ("finished_at__lt", datetime.datetime(2100, 1, 1, 0, 0, tzinfo=datetime.UTC)),
                    ),
                    _connector="OR",
                ),
                name="annotator_finished_at_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="subtopic",
            constraint=models.UniqueConstraint(fields=("topic", "number"), name="subtopic_unique_number"),
        ),
        migrations.AddConstraint(
            model_name="subtopic",
            constraint=models.CheckConstraint(
                condition=models.Q(("weight__isnull", True), ("weight__gte", 0), _connector="OR"), name="subtopic_weight_nonnegative"
            ),
        ),
        migrations.AddConstraint(
            model_name="subtopic",
            constraint=models.CheckConstraint(condition=models.Q(("type__in", ["inf", "nav"])), name="subtopic_type_valid"),
        ),
        migrations.AddConstraint(
            model_name="studytopic",
            constraint=models.UniqueConstraint(fields=("study", "topic"), name="studytopic_unique"),
        ),
        migrations.AddIndex(
            model_name="presentation",
            index=models.Index(fields=["study", "kind"], name="presentation_study_kind"),
        ),
        migrations.AddConstraint(
            model_name="presentation",
            constraint=models.CheckConstraint(condition=models.Q(("level__in", ["topic", "subtopic"])), name="presentation_level_valid"),
        ),
        migrations.AddConstraint(
            model_name="presentation",
            constraint=models.CheckConstraint(
                condition=models.Q(("kind__in", ["pair", "identical", "degraded"])), name="presentation_kind_valid"
            ),
        ),
        migrations.AddConstraint(
            model_name="presentation",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("level", "topic"), ("subtopic__isnull", True)),
                    models.Q(("level", "subtopic"), ("subtopic__isnull", False)),
                    _connector="OR",
                ),
                name="presentation_subtopic_matches_level",
            ),
        ),
        migrations.AddConstraint(
            model_name="presentation",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("kind", "pair"), models.Q(("run_a", models.F("run_b")), _negated=True), ("expected_sign__isnull", True)),
                    models.Q(models.Q(("kind", "pair"), _negated=True), ("run_a", models.F("run_b")), ("expected_sign__in", [-1, 0, 1])),
                    _connector="OR",
                ),
                name="presentation_runs_match_kind",
            ),
        ),
        migrations.AddConstraint(
            model_name="presentation",
            constraint=models.UniqueConstraint(
                condition=models.Q(("level", "topic")),
                fields=("study", "kind", "topic", "run_a", "run_b"),
                name="presentation_unique_topic_level",
            ),
        ),
        migrations.AddConstraint(
            model_name="presentation",
            constraint=models.UniqueConstraint(
                condition=models.Q(("level", "subtopic")),
                fields=("study", "kind", "subtopic", "run_a", "run_b"),
                name="presentation_unique_subtopic_level",
            ),
        ),
    ]
