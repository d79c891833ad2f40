"""The leases of a study's review (services.review.leases): a decision or a job held by an apply that is alive stays
its own; one held by an apply that fell silent (its heartbeat older than ``STUDYAPP_JOB_STALE_SECONDS``) or whose
process on this host has ended is taken over; an apply whose claims were taken over pays nothing. The process kill
itself is in test_payment_faults.py (KilledJobWorkerTests)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from datetime import timedelta
from unittest import mock

from django.test import override_settings
from django.utils import timezone

from studyapp.models import ReviewDecision, ReviewJob
from studyapp.services.review import jobs, leases, paying, sending
from tests.studyapp.test_platform_review import PAY, SETUP, TRANSITION, PlatformReviewTestCase

ELSEWHERE = "another-machine:4242"


def ended_pid() -> int:
    """The pid of a process of this host that has ended (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


class LivenessTests(PlatformReviewTestCase):
    def test_is_gone_only_for_an_ended_process_of_this_host(self) -> None:
        host = socket.gethostname()
        self.assertFalse(leases.is_gone(leases.worker_name()))  # this process
        self.assertFalse(leases.is_gone(f"{host}:{os.getppid()}"))  # alive
        self.assertTrue(leases.is_gone(f"{host}:{ended_pid()}"))
        self.assertFalse(leases.is_gone(ELSEWHERE))  # another host: only its heartbeat can tell
        for garbage in ("", "no-pid", f"{host}:", f"{host}:x1"):
            self.assertFalse(leases.is_gone(garbage), garbage)

    def test_the_heartbeat_beats_until_stopped(self) -> None:
        beats = threading.Semaphore(0)
        with leases.Heartbeat(beats.release, seconds=0.01):
            for _ in range(3):
                self.assertTrue(beats.acquire(timeout=5))
        count = 0
        while beats.acquire(timeout=0.05):
            count += 1
        self.assertLessEqual(count, 1)  # at most the beat under way when it was stopped


class DecisionClaimTests(PlatformReviewTestCase):
    def claim_all(self, by: str, seconds_ago: float) -> None:
        for row in sending.review_rows(self.study):
            sending._materialise(self.study, row)
        when = timezone.now() - timedelta(seconds=seconds_ago)
        ReviewDecision.objects.filter(study=self.study).update(claimed_at=when, claimed_by=by)

    def test_a_live_apply_elsewhere_keeps_its_claims(self) -> None:
        self.claim_all(ELSEWHERE, seconds_ago=10)
        steps = sending.apply(self.study, clients=self.clients())
        self.assertEqual({s.operation for s in steps}, {"claim"})
        self.assertEqual(self.api.requests, [])
        self.assertEqual(set(ReviewDecision.objects.values_list("claimed_by", flat=True)), {ELSEWHERE})

    @override_settings(STUDYAPP_JOB_STALE_SECONDS=30)
    def test_a_silent_apply_elsewhere_is_taken_over_after_the_bound(self) -> None:
        self.claim_all(ELSEWHERE, seconds_ago=31)
        steps = sending.apply(self.study, clients=self.clients())
        self.assertTrue(all(s.ok for s in steps), steps)
        self.assertEqual(len(self.api.calls("POST", TRANSITION)), 9)
        self.assertEqual(len(self.api.paid), 6)
        self.assertFalse(ReviewDecision.objects.filter(claimed_at__isnull=False).exists())

    @override_settings(STUDYAPP_JOB_STALE_SECONDS=600)
    def test_an_ended_apply_of_this_host_is_taken_over_at_once(self) -> None:
        self.claim_all(f"{socket.gethostname()}:{ended_pid()}", seconds_ago=1)
        steps = sending.apply(self.study, clients=self.clients())
        self.assertTrue(all(s.ok for s in steps), steps)
        self.assertEqual(len(self.api.paid), 6)

    def test_an_apply_whose_claims_were_taken_over_pays_nothing(self) -> None:
        """Between the claim and the pay call another apply took the decisions over (this one was silent too long):
        the "pay sent" marker is refused, so the pay call never goes out; the holder pays them once."""
        original = paying.Intent.sending

        def taken_over(intent, tokens, request):
            ReviewDecision.objects.filter(bonus_token__in=tokens).update(claimed_by=ELSEWHERE, claimed_at=timezone.now())
            return original(intent, tokens, request)

        with mock.patch.object(paying.Intent, "sending", taken_over):
            steps = sending.apply(self.study, clients=self.clients())
        self.assertEqual(len([s for s in steps if "taken over by another apply" in s.text]), 6, steps)
        self.assertEqual(self.api.calls("POST", PAY), [])
        self.assertEqual(len(self.api.calls("POST", SETUP)), 1)  # set up (nothing paid), its id kept for the holder
        self.assertFalse(ReviewDecision.objects.filter(bonus_unknown=True).exists())
        self.assertEqual(set(ReviewDecision.objects.filter(bonus__gt=0).values_list("claimed_by", flat=True)), {ELSEWHERE})
        ReviewDecision.objects.update(claimed_at=None, claimed_by="")  # the holder's turn
        sending.apply(self.study, clients=self.clients())
        self.assertEqual(len(self.api.calls("POST", SETUP)), 1)  # the same bulk bonus paid
        self.assertEqual(len(self.api.calls("POST", PAY)), 1)
        self.assertEqual(len(self.api.paid), 6)

    def test_the_heartbeat_refreshes_only_this_applys_claims(self) -> None:
        beats = []
        with mock.patch.object(sending, "Heartbeat", side_effect=lambda beat: beats.append(beat) or leases.Heartbeat(beat, 3600)):
            sending.apply(self.study, clients=self.clients())  # its claims are released at the end: claim again
        self.claim_all(ELSEWHERE, seconds_ago=20)
        mine = ReviewDecision.objects.filter(study=self.study).first()
        old = mine.claimed_at
        ReviewDecision.objects.filter(pk=mine.pk).update(claimed_by=leases.worker_name())
        beats[0]()
        mine.refresh_from_db()
        self.assertGreater(mine.claimed_at, old + timedelta(seconds=15))
        others = ReviewDecision.objects.exclude(pk=mine.pk).values_list("claimed_at", flat=True)
        self.assertEqual(set(others), {old})


class JobClaimTests(PlatformReviewTestCase):
    def running_job(self, worker: str, seconds_ago: float) -> ReviewJob:
        job, _ = jobs.enqueue(self.study)
        beat = timezone.now() - timedelta(seconds=seconds_ago)
        ReviewJob.objects.filter(pk=job.pk).update(status=ReviewJob.Status.RUNNING, worker=worker, heartbeat_at=beat, attempts=1)
        return job

    @override_settings(STUDYAPP_JOB_STALE_SECONDS=30)
    def test_a_job_is_taken_over_when_its_worker_fell_silent_or_ended(self) -> None:
        job = self.running_job(ELSEWHERE, seconds_ago=10)
        self.assertIsNone(jobs.claim("me:1"))  # beating 10 s ago: alive
        ReviewJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=31))
        taken = jobs.claim("me:1")
        self.assertEqual((taken.pk, taken.worker, taken.attempts), (job.pk, "me:1", 2))
        self.assertIn(f"the worker {ELSEWHERE} fell silent; taken over by me:1", taken.log)
        dead = f"{socket.gethostname()}:{ended_pid()}"
        ReviewJob.objects.filter(pk=job.pk).update(worker=dead, heartbeat_at=timezone.now())
        taken = jobs.claim("me:2")  # its process ended a moment ago: at once
        self.assertEqual((taken.worker, taken.attempts), ("me:2", 3))
        self.assertIn(f"the worker {dead} has ended; taken over by me:2", taken.log)

    def test_a_worker_taken_over_writes_nothing_more_to_the_job(self) -> None:
        job = self.running_job("old:1", seconds_ago=0)
        job.refresh_from_db()
        ReviewJob.objects.filter(pk=job.pk).update(worker="new:2")  # taken over while old:1 was still applying
        with mock.patch.object(sending, "apply", side_effect=lambda study, staff, progress: progress(sending.Step("a1", "x", "y"))):
            jobs.run(job)
        job.refresh_from_db()
        self.assertEqual((job.status, job.worker, job.log, job.steps_done), (ReviewJob.Status.RUNNING, "new:2", "", 0))
