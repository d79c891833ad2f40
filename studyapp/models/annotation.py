"""Who judged what: annotators, their assignments (leases) and their preferences.

Invariants that must hold under concurrency are database constraints: one assignment per
(annotator, presentation), one preference per assignment (so one answer per annotator and
presentation), answer values in range and canonical = +-shown.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

from django.db import models
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from studyapp.models.study import Presentation, Study

PREFERENCE_MIN, PREFERENCE_MAX = -4, 4
# Every stored time lies in [EARLIEST, LATEST): a database constraint and the importer's check, so one odd
# row (year 1 or 9999 with an offset, which PostgreSQL stores as 1 BC or 10000) cannot break every page.
EARLIEST, LATEST = datetime(2000, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC)


def time_in_range(field: str, *, nullable: bool = False) -> models.CheckConstraint:
    """``field`` within [EARLIEST, LATEST) (or NULL when ``nullable``)."""
    inside = Q(**{f"{field}__gte": EARLIEST}) & Q(**{f"{field}__lt": LATEST})
    return models.CheckConstraint(
        condition=(Q(**{f"{field}__isnull": True}) | inside) if nullable else inside, name=f"%(class)s_{field}_range"
    )


def new_token() -> str:
    return secrets.token_urlsafe(24)


def new_pseudonym() -> str:
    return "A" + secrets.token_hex(5).upper()


class AnnotatorStatus(models.TextChoices):
    """Where an annotator stands in a study."""

    NEW = "new", "arrived, no items yet"
    ACTIVE = "active", "working"
    FINISHED = "finished", "finished"
    REFUSED = "refused", "refused: study full"
    EXCLUDED = "excluded", "excluded by quality control"
    SCREENED = "screened", "screened out: failed the comprehension check"


class AnnotatorQuerySet(models.QuerySet):
    def working(self, now: datetime) -> AnnotatorQuerySet:
        """Active annotators holding at least one live lease at ``now`` (see :meth:`AssignmentQuerySet.live`)."""
        holding = Assignment.objects.live(now).filter(annotator=OuterRef("pk"))
        return self.filter(status=Annotator.Status.ACTIVE).filter(Exists(holding))


class AssignmentQuerySet(models.QuerySet):
    """The lease states of assignments, named once (the engine, the flow and the status report use them)."""

    def open(self) -> AssignmentQuerySet:
        """Unanswered and not released: still part of the annotator's sequence to answer."""
        return self.filter(preference__isnull=True, released_at__isnull=True)

    def live(self, now: datetime) -> AssignmentQuerySet:
        """Open with a lease running past ``now``: the item holds an answer slot for its annotator."""
        return self.open().filter(lease_expires_at__gt=now)

    def expired(self, now: datetime) -> AssignmentQuerySet:
        """Open with a lease that ran out at or before ``now``."""
        return self.open().filter(lease_expires_at__lte=now)

    def taking_slot(self, now: datetime) -> AssignmentQuerySet:
        """Answered or live: what admission counts as taken on a presentation."""
        return self.filter(Q(preference__isnull=False) | Q(released_at__isnull=True, lease_expires_at__gt=now))

    def valid(self) -> AssignmentQuerySet:
        """Leaving out annotators excluded by quality control (they count for nothing)."""
        return self.exclude(annotator__status=Annotator.Status.EXCLUDED)


class Annotator(models.Model):
    """A pseudonymous participant of one study, identified by a secret token (and external ids).

    The token is the per-annotator secret: the browser session holds it, and every annotator page
    looks the annotator up by it. ``platform`` is a key of the platform registry (``services.platforms``
    validates it on arrival, so a new platform needs no migration). The onboarding fields record how far the annotator got before the
    items (``services.participation.flow`` turns them into the next step).
    """

    Status = AnnotatorStatus
    objects = AnnotatorQuerySet.as_manager()

    study = models.ForeignKey(Study, models.CASCADE, related_name="annotators")
    pseudonym = models.CharField(max_length=20, unique=True, default=new_pseudonym)
    token = models.CharField(max_length=64, unique=True, default=new_token, editable=False)
    platform = models.CharField(
        max_length=10,
        blank=True,
        default="",
        help_text="the key of the platform the link came from (services.platforms); empty: the anonymous link",
    )
    external_id = models.CharField(max_length=100, blank=True, help_text="e.g. the Prolific PID or the MTurk worker id")
    external_ids = models.JSONField(default=dict, blank=True, help_text="the platform parameters of the latest arrival (query string)")
    arrival_key = models.CharField(
        max_length=32, blank=True, editable=False, help_text="the random key of the browser's arrival: one arrival, one annotator"
    )
    kept_pseudonym = models.CharField(
        max_length=20,
        blank=True,
        editable=False,
        help_text="the export pseudonym, kept when the platform id was purged (purge_platform_ids)",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.NEW)
    exclusion_reason = models.TextField(blank=True)
    consent_version = models.CharField(max_length=50, blank=True, help_text="the consent version accepted last")
    consented_at = models.DateTimeField(null=True, blank=True)
    instructions_read_at = models.DateTimeField(null=True, blank=True)
    practice_value = models.SmallIntegerField(null=True, blank=True, help_text="the practice answer as shown (-4..4)")
    practice_answered_at = models.DateTimeField(null=True, blank=True)
    comprehension_attempts = models.PositiveSmallIntegerField(default=0)
    comprehension_passed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "platform", "external_id"], condition=~Q(external_id=""), name="annotator_unique_external_id"
            ),
            models.UniqueConstraint(fields=["study", "arrival_key"], condition=~Q(arrival_key=""), name="annotator_unique_arrival_key"),
            models.CheckConstraint(condition=Q(status__in=AnnotatorStatus.values), name="annotator_status_valid"),
            models.CheckConstraint(
                condition=Q(practice_value__isnull=True) | (Q(practice_value__gte=PREFERENCE_MIN) & Q(practice_value__lte=PREFERENCE_MAX)),
                name="annotator_practice_value_range",
            ),
            time_in_range("created_at"),
            time_in_range("last_seen_at", nullable=True),
            time_in_range("finished_at", nullable=True),
        ]

    def __str__(self) -> str:
        return self.pseudonym


class Consent(models.Model):
    """One accepted consent: which version of the study's consent text, when, and a digest of the text shown."""

    annotator = models.ForeignKey(Annotator, models.CASCADE, related_name="consents")
    version = models.CharField(max_length=50)
    text_sha256 = models.CharField(max_length=64, help_text="SHA-256 of the consent text as shown")
    accepted_at = models.DateTimeField()

    class Meta:
        ordering = ["annotator", "accepted_at"]
        constraints = [models.UniqueConstraint(fields=["annotator", "version"], name="consent_unique_version")]

    def __str__(self) -> str:
        return f"{self.annotator}: consent version {self.version}"


class Assignment(models.Model):
    """A presentation leased to an annotator, with the side its run_a is shown on.

    ``served_at`` is when the item was first shown (decision time starts there);
    ``lease_expires_at`` moves forward while the annotator is active; ``released_at`` is set
    when the engine gave the item to others after the lease expired (a late answer is still
    stored and counted).
    """

    annotator = models.ForeignKey(Annotator, models.CASCADE, related_name="assignments")
    presentation = models.ForeignKey(Presentation, models.CASCADE, related_name="assignments")
    position = models.PositiveIntegerField(help_text="order in the annotator's sequence, from 1")
    a_on_left = models.BooleanField(help_text="is run_a (the canonical first run) shown on the left?")
    assigned_at = models.DateTimeField()
    served_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField()
    released_at = models.DateTimeField(null=True, blank=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        ordering = ["annotator", "position"]
        constraints = [
            models.UniqueConstraint(fields=["annotator", "presentation"], name="assignment_unique_presentation"),
            models.UniqueConstraint(fields=["annotator", "position"], name="assignment_unique_position"),
            models.CheckConstraint(condition=Q(position__gte=1), name="assignment_position_positive"),
            time_in_range("assigned_at"),
            time_in_range("served_at", nullable=True),
            time_in_range("lease_expires_at"),
        ]
        indexes = [models.Index(fields=["presentation", "lease_expires_at"], name="assignment_presentation_lease")]

    def __str__(self) -> str:
        return f"{self.annotator} #{self.position}: {self.presentation}"

    @property
    def left_run(self):
        p = self.presentation
        return p.run_a if self.a_on_left else p.run_b

    def left_side(self) -> str:
        """'a' or 'b': which side of the presentation is shown on the left."""
        return "a" if self.a_on_left else "b"

    def lease_live(self, now: datetime) -> bool:
        return self.released_at is None and self.lease_expires_at > now


class Preference(models.Model):
    """An answer on the 9-point scale -4 (left much better) .. +4 (right much better).

    ``value`` is as shown; ``canonical`` is re-oriented to (run_a, run_b): positive means run_b
    preferred. Decision time is kept twice: measured by the server (first served -> answer
    arrived) and by the browser (first shown -> submitted, kept across reloads), plus the browser's
    visible time (Page Visibility API) and time to the first input.
    """

    assignment = models.OneToOneField(Assignment, models.CASCADE, related_name="preference")
    value = models.SmallIntegerField(help_text="as shown: -4 left much better .. +4 right much better")
    canonical = models.SmallIntegerField(help_text="re-oriented: positive = run_b preferred")
    server_seconds = models.FloatField(null=True, blank=True)
    client_ms = models.PositiveIntegerField(null=True, blank=True, help_text="the browser's decision time: first shown -> submitted")
    visible_ms = models.PositiveIntegerField(null=True, blank=True, help_text="of that, how long the page was visible")
    first_interaction_ms = models.PositiveIntegerField(null=True, blank=True, help_text="first shown -> first input on the page")
    request_id = models.CharField(max_length=64, blank=True, help_text="client-generated, makes answering idempotent")
    answered_at = models.DateTimeField()
    late = models.BooleanField(default=False, help_text="arrived after the lease had expired")

    class Meta:
        ordering = ["answered_at"]
        constraints = [
            models.CheckConstraint(condition=Q(value__gte=PREFERENCE_MIN) & Q(value__lte=PREFERENCE_MAX), name="preference_value_range"),
            models.CheckConstraint(
                condition=Q(canonical__gte=PREFERENCE_MIN) & Q(canonical__lte=PREFERENCE_MAX), name="preference_canonical_range"
            ),
            models.CheckConstraint(condition=Q(canonical=F("value")) | Q(canonical=-F("value")), name="preference_canonical_is_reoriented"),
            models.CheckConstraint(
                condition=Q(server_seconds__isnull=True) | Q(server_seconds__gte=0), name="preference_server_seconds_nonnegative"
            ),
            time_in_range("answered_at"),
        ]

    def __str__(self) -> str:
        return f"{self.assignment}: {self.value:+d}"
