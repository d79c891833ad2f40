"""The staff dashboard (views/staff.py, services/analysis/dashboard.py, services/analysis/figures.py).

Staff only for every page and download (anonymous: redirected to the login; an annotator's
session or a signed-in non-staff user: refused the same way; staff: 200); renders for an empty,
a running and a finished study; its numbers equal those computed from the database directly.
"""

from __future__ import annotations

import math
import random
import re

from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from evaluation.meta.reliability import direction_agreement, krippendorff_alpha
from studyapp.models import Annotator, Preference, Study, StudyMember
from studyapp.services.analysis import dashboard
from studyapp.services.analysis.status import study_status
from studyapp.services.data.export import export_bytes
from studyapp.services.data.payments import payments_csv
from studyapp.services.participation import allocation
from studyapp.services.quality.control import annotator_signals
from tests.studyapp.annotator_base import AnnotatorTestCase
from tests.studyapp.base import NOW, BaseTestCase, make_toy_study
from tests.studyapp.filled import exclude, fill


def staff_client() -> Client:
    client = Client()
    user = get_user_model().objects.filter(username="boss").first() or get_user_model().objects.create_user(
        "boss", "boss@example.org", "pw-for-tests", is_staff=True
    )
    for study in Study.objects.all():  # on every study's team, allowed to see platform ids (services.access.teams)
        StudyMember.objects.get_or_create(study=study, user=user, defaults={"platform_ids": True})
    client.force_login(user)
    return client


class AccessTests(AnnotatorTestCase):
    """self.client holds alice's annotator session (she is on her items)."""

    def urls(self) -> list[str]:
        slug = self.study.slug
        return [
            reverse("staff_studies"),
            reverse("staff_study", args=[slug]),
            reverse("staff_study_live", args=[slug]),
            *(reverse("staff_study_export", args=[slug, fmt]) for fmt in ("csv", "jsonl", "parquet")),
            reverse("staff_study_payments", args=[slug]),
        ]

    def assert_sent_to_login(self, client: Client, url: str) -> None:
        response = client.get(url)
        self.assertEqual(response.status_code, 302, url)
        self.assertTrue(response["Location"].startswith(reverse("admin:login")), response["Location"])
        self.assertNotIn(b"preferences", response.content)

    def test_anonymous_annotator_and_non_staff_are_refused(self) -> None:
        self.assertEqual(self.client.get(self.url("study_next_item")).status_code, 302)  # alice's session is live
        plain = Client()
        plain.force_login(get_user_model().objects.create_user("plain", "p@example.org", "pw-for-tests"))
        for url in self.urls():
            with self.subTest(url=url):
                self.assert_sent_to_login(Client(), url)
                self.assert_sent_to_login(self.client, url)
                self.assert_sent_to_login(plain, url)

    def test_staff_get_every_page_and_download(self) -> None:
        client = staff_client()
        for url in self.urls():
            with self.subTest(url=url):
                self.assertEqual(client.get(url).status_code, 200)
        self.assertEqual(client.get(reverse("staff_study", args=["no-such-study"])).status_code, 404)
        self.assertEqual(client.get(reverse("staff_study_export", args=[self.study.slug, "xlsx"])).status_code, 404)

    def test_linked_from_the_admin(self) -> None:
        client = Client()
        client.force_login(get_user_model().objects.create_superuser("root", "root@example.org", "pw-for-tests"))
        self.assertContains(client.get(reverse("admin:index")), reverse("staff_studies"))
        self.assertContains(client.get(reverse("admin:studyapp_study_changelist")), reverse("staff_study", args=[self.study.slug]))


class DashboardPagesTests(BaseTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.staff = staff_client()

    def page(self, study, **params) -> str:
        response = self.staff.get(reverse("staff_study", args=[study.slug]), params)
        self.assertEqual(response.status_code, 200)
        return response.content.decode()

    def assert_no_inline_code(self, html: str) -> None:
        self.assertIsNone(re.search(r"<script(?![^>]*\bsrc=)", html), "inline script")
        self.assertNotIn("<style", html)
        self.assertNotIn(" style=", html)
        self.assertNotRegex(html, r" on[a-z]+=")

    def test_empty_study(self) -> None:
        html = self.page(self.study)
        self.assert_no_inline_code(html)
        self.assertIn("0 of 0 answers faster", html)  # the histogram of no answers
        self.assertIn('<svg class="figure histogram"', html)
        self.assertIn("0 annotators", html)
        live = self.staff.get(reverse("staff_study_live", args=[self.study.slug])).content.decode()
        self.assertNotIn("<html", live)
        self.assertIn("Agreement between annotators", live)
        listing = self.staff.get(reverse("staff_studies")).content.decode()
        self.assertIn(self.study.name, listing)

    def test_running_study(self) -> None:
        fill(self.study, ["p-one", "p-two"], random.Random(1), NOW)
        annotator = allocation.register(self.study, platform="prolific", external_id="p-three")
        allocation.admit(annotator, rng=random.Random(2))  # on the real clock: its leases are live now
        html = self.page(self.study)
        status = study_status(self.study)
        self.assertGreater(status["live_leases"], 0)
        self.assertIn(f'<span class="big">{status["live_leases"]}</span> active leases', html)
        self.assertIn(f'<span class="big">{status["slots"]["open"]}</span> answers still needed', html)
        self.assertIn(f'<span class="big">{status["annotators_needed"]}</span> annotators still to recruit', html)
        self.assertIn("Prolific: p-three", html)
        self.assertEqual(status["annotators"]["active_now"], 1)
        self.assertIn("1 annotator working now", html)  # one, not "1 annotators"
        self.assert_no_inline_code(html)

    def test_finished_study_and_search(self) -> None:
        people = fill(self.study, [f"pid-{n}" for n in range(6)], random.Random(3), NOW)
        exclude(people[0], "fast: 31 decisions under 10 s")
        html = self.page(self.study)
        self.assertIn("fast: 31 decisions under 10 s", html)
        self.assertIn("6 annotators.", html)
        searched = self.page(self.study, q="pid-3")
        self.assertIn("1 annotator whose platform id contains “pid-3”", searched)
        self.assertIn("Prolific: pid-3", searched)
        self.assertNotIn("Prolific: pid-4", searched)
        self.assertIn("0 annotators whose platform id contains", self.page(self.study, q="nobody"))
        payments = self.staff.get(reverse("staff_study_payments", args=[self.study.slug]))
        self.assertEqual(payments.content.decode(), payments_csv(self.study))
        self.assertIn("pid-0", payments.content.decode())  # the payments file is for paying: platform ids
        self.assertIn('filename="toy-study-payments.csv"', payments["Content-Disposition"])
        for fmt in ("csv", "jsonl", "parquet"):
            response = self.staff.get(reverse("staff_study_export", args=[self.study.slug, fmt]))
            self.assertEqual(response.content, export_bytes(self.study, fmt)[0])
            self.assertIn(f'filename="toy-study-preferences.{fmt}"', response["Content-Disposition"])


class DashboardNumbersTests(BaseTestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.people = fill(cls.study, [f"pid-{n}" for n in range(5)], random.Random(9), NOW)
        exclude(cls.people[1], "by staff: tests")

    def valid_units(self, level: str) -> list[list[int]]:
        units: dict[int, list[int]] = {}
        answers = Preference.objects.filter(assignment__presentation__study=self.study, assignment__presentation__level=level,
                                            assignment__presentation__kind="pair").exclude(assignment__annotator__status="excluded")  # fmt: skip
        for answer in answers.select_related("assignment"):
            units.setdefault(answer.assignment.presentation_id, []).append(answer.canonical)
        return list(units.values())

    def test_agreement_per_level_from_the_valid_canonical_answers(self) -> None:
        rows = {a.level: a for a in dashboard.agreement(self.study)}
        self.assertEqual(set(rows), {"topic", "subtopic"})
        for level, row in rows.items():
            units = self.valid_units(level)
            self.assertEqual(row.answers, sum(map(len, units)))
            self.assertEqual(row.units, sum(len(u) >= 2 for u in units))
            self.assertGreater(row.units, 0)
            expected = krippendorff_alpha(units, level="interval")
            self.assertAlmostEqual(row.alpha_interval, expected)
            self.assertAlmostEqual(row.alpha_ordinal, krippendorff_alpha(units, level="ordinal"))
            share, pairs = direction_agreement(units)
            self.assertEqual(row.pairs, pairs)
            self.assertAlmostEqual(row.direction, share)

    def test_completion_matches_the_status_report(self) -> None:
        levels, pairs = dashboard.completion(self.study)
        status = study_status(self.study)
        self.assertEqual(
            {c.level: c.complete for c in levels}, {"topic": status["complete"]["topic"], "subtopic": status["complete"]["subtopic"]}
        )
        self.assertEqual(
            {c.level: c.answers for c in levels}, {"topic": status["answers"]["topic"], "subtopic": status["answers"]["subtopic"]}
        )
        self.assertEqual(sum(c.still_needed for c in levels), status["slots"]["needed"] - status["slots"]["filled"])
        self.assertEqual(len(pairs), 3 * 2)  # 3 run pairs x 2 levels
        for level in ("topic", "subtopic"):
            self.assertEqual(sum(c.presentations for c in pairs if c.level == level), status["presentations"][level])
            self.assertEqual(
                sum(c.still_needed for c in pairs if c.level == level), next(c.still_needed for c in levels if c.level == level)
            )

    def test_histogram_counts_every_timed_answer_and_marks_the_threshold(self) -> None:
        first = Preference.objects.filter(assignment__annotator=self.people[0]).order_by("answered_at").first()
        first.server_seconds = 3.0
        first.save()
        second = Preference.objects.filter(assignment__annotator=self.people[2]).order_by("answered_at").first()
        second.server_seconds = 500.0
        second.save()
        h = dashboard.decision_time_histogram(self.study)
        every = list(Preference.objects.filter(assignment__presentation__study=self.study).values_list("server_seconds", flat=True))
        self.assertEqual(h.total, len(every))
        self.assertEqual(sum(h.counts), h.total)
        self.assertEqual(h.fast, sum(s < self.study.fast_threshold_seconds for s in every))
        self.assertEqual(h.fast, 1)
        self.assertEqual(h.counts[1], 1)  # 3 s falls in [2, 4)
        self.assertEqual(h.counts[-1], 1)  # 500 s in the last bin (60 s or more)
        from studyapp.services.analysis.figures import histogram_svg

        svg = histogram_svg(h)
        self.assertIn('class="threshold"', svg)
        self.assertIn(f"fast threshold {self.study.fast_threshold_seconds:g} s: 1 of {h.total} answers faster", svg)

    def test_side_balance_and_annotator_rows(self) -> None:
        sides = dashboard.side_balance(self.study)
        valid = Preference.objects.filter(assignment__presentation__study=self.study).exclude(assignment__annotator__status="excluded")
        self.assertEqual(sides.left, valid.filter(value__lt=0).count())
        self.assertEqual(sides.right, valid.filter(value__gt=0).count())
        self.assertEqual(sides.answers, valid.count())
        self.assertEqual(sides.a_left + sides.a_right, valid.count())
        rows, matching = dashboard.annotator_rows(self.study)
        self.assertEqual(matching, 5)
        signals = {s.annotator_id: s for s in annotator_signals(self.study)}
        for row in rows:
            self.assertEqual(row.signals, signals[row.annotator.pk])
            self.assertEqual(row.signals.decisions, Preference.objects.filter(assignment__annotator=row.annotator).count())
            self.assertEqual(row.items, row.annotator.assignments.count())
        self.assertEqual([r.annotator.external_id for r in dashboard.annotator_rows(self.study, "PID-3")[0]], ["pid-3"])
        excluded = next(r for r in rows if r.annotator.status == Annotator.Status.EXCLUDED)
        self.assertEqual(excluded.annotator.exclusion_reason, "by staff: tests")

    def test_study_list_summaries(self) -> None:
        make_toy_study(name="Untouched")
        summaries = {s.study.name: s for s in dashboard.study_summaries()}
        status = study_status(self.study)
        mine = summaries[self.study.name]
        self.assertEqual((mine.filled, mine.needed), (status["slots"]["filled"], status["slots"]["needed"]))
        self.assertEqual(mine.annotators["excluded"], 1)
        self.assertEqual(mine.annotators["finished"] + mine.annotators["active"], 4)
        untouched = summaries["Untouched"]
        self.assertEqual((untouched.filled, untouched.answers, untouched.progress), (0, 0, 0.0))
        self.assertTrue(math.isclose(mine.progress, status["progress"], abs_tol=1e-4))
