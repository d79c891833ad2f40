"""Apply as a job: the review page enqueues it, a worker process (``manage.py run_jobs``) runs it, so no request
waits for the platform (a pay call may take 20 s x 3 tries plus a Retry-After: longer than any proxy's or
worker's timeout).

A job is a :class:`~studyapp.models.ReviewJob` row: :func:`enqueue` adds one per study (a second Apply while one
is queued or running joins it), :func:`claim` hands the oldest to a worker (``SELECT ... FOR UPDATE SKIP
LOCKED`` on PostgreSQL, so several workers never take the same one), and :func:`run` carries it out through
the same :func:`.sending.apply` as ``platform_review --apply``, writing each step and a heartbeat to the row
(the page shows them). A worker that dies (killed, machine lost) stops its heartbeat; after
``STUDYAPP_JOB_STALE_SECONDS`` (30 s), or at once when it was a process of the same host that has ended
(:mod:`.leases`), another worker takes the job over and applies again: nothing sent is sent twice (a payment
whose answer was lost is "outcome unknown" and asked about first: :mod:`.paying`).
"""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import F, Q, TextField, Value
from django.db.models.functions import Concat
from django.utils import timezone

from studyapp.exceptions import StudyError
from studyapp.models import ReviewJob, Study
from studyapp.services.platforms.review_api import ApiError
from studyapp.services.review import leases, sending

ACTIVE = (ReviewJob.Status.QUEUED, ReviewJob.Status.RUNNING)


def enqueue(study: Study, staff=None) -> tuple[ReviewJob, bool]:
    """The study's queued or running job, else a new one; ``(job, created)``."""
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()  # one enqueue per study at a time
        job = ReviewJob.objects.filter(study=study, status__in=ACTIVE).first()
        if job is not None:
            return job, False
        return ReviewJob.objects.create(study=study, staff=staff, created_at=timezone.now()), True


def latest(study: Study) -> ReviewJob | None:
    return ReviewJob.objects.filter(study=study).select_related("staff").first()


def claim(worker: str, stale_seconds: float | None = None) -> ReviewJob | None:
    """The oldest queued job, or a running one whose worker fell silent or ended (:func:`.leases.lost`), now this
    ``worker``'s (None: nothing to do)."""
    now = timezone.now()
    running = ReviewJob.objects.filter(status=ReviewJob.Status.RUNNING)
    holders = running.values_list("worker", flat=True)
    lost = Q(status=ReviewJob.Status.RUNNING) & leases.lost("heartbeat_at", "worker", holders, now, stale_seconds)
    with transaction.atomic():
        jobs = ReviewJob.objects.filter(Q(status=ReviewJob.Status.QUEUED) | lost).order_by("created_at", "id")
        locking = {"skip_locked": True} if connection.features.has_select_for_update_skip_locked else {}
        job = jobs.select_for_update(**locking).first()
        if job is None:
            return None
        if job.status == ReviewJob.Status.RUNNING:
            why = "has ended" if leases.is_gone(job.worker) else "fell silent"
            job.log += f"-- the worker {job.worker} {why}; taken over by {worker}\n"
        job.status, job.worker, job.attempts = ReviewJob.Status.RUNNING, worker, job.attempts + 1
        job.started_at, job.heartbeat_at = job.started_at or now, now
        job.save()
    return job


def run(job: ReviewJob) -> ReviewJob:
    """Apply ``job``'s study, step by step into the row; done, or failed with the reason (never a traceback)."""

    def progress(step: sending.Step) -> None:
        line = f"{step.pseudonym} {step.operation}: {step.text}\n"
        counter = "steps_done" if step.ok else "steps_failed"
        ReviewJob.objects.filter(pk=job.pk, worker=job.worker).update(  # a worker taken over writes nothing more
            log=Concat(F("log"), _text(line)), heartbeat_at=timezone.now(), **{counter: F(counter) + 1}
        )

    status, error = ReviewJob.Status.DONE, ""
    try:
        with leases.Heartbeat(lambda: ReviewJob.objects.filter(pk=job.pk, worker=job.worker).update(heartbeat_at=timezone.now())):
            sending.apply(job.study, staff=job.staff, progress=progress)
    except (StudyError, ApiError) as exc:
        status, error = ReviewJob.Status.FAILED, str(exc)
    finished = {"finished_at": timezone.now(), "heartbeat_at": timezone.now()}
    ReviewJob.objects.filter(pk=job.pk, worker=job.worker).update(status=status, error=error, **finished)
    job.refresh_from_db()
    return job


def _text(line: str) -> Value:
    return Value(line, output_field=TextField())
