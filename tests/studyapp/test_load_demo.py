"""``manage.py load_demo`` and the bundled demo collection: idempotent loading, the printed links,
the collection's promised shape, recognisably different runs, and files that match their script."""

from __future__ import annotations

import filecmp
import io
import json
import os
import tempfile
from collections import Counter
from pathlib import Path
from unittest import mock
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import TestCase

from evaluation.io.runs import read_run
from evaluation.loading import load_collection
from studyapp.demo import build_demo
from studyapp.models import Collection, Presentation, Study
from studyapp.services.analysis.status import study_status
from studyapp.services.rehearsal.demo import DEMO_DIR
from tests.studyapp.test_import_collection import snapshot


class LoadDemoTestCase(TestCase):
    def load(self, *args: str, port: str | None = None) -> str:
        """Run the command (with ``PORT`` set to ``port`` in the environment, or unset)."""
        out = io.StringIO()
        environ = {k: v for k, v in os.environ.items() if k != "PORT"} | ({"PORT": port} if port else {})
        with mock.patch.dict(os.environ, environ, clear=True):
            call_command("load_demo", "--no-simulated-study", *args, stdout=out)
        return out.getvalue()

    def test_it_loads_the_demo_and_prints_the_links(self) -> None:
        out = self.load()
        study = Study.objects.get(name="Demo study")
        self.assertIn(
            "Annotator link: http://127.0.0.1:8000/s/demo-study/  (a Prolific participant: http://127.0.0.1:8000/s/demo-study/?PROLIFIC_PID=test1&",
            out,
        )
        self.assertIn("Staff login: http://127.0.0.1:8000/admin/  user 'staff'  password '", out)
        password = out.split("password '")[1].split("'")[0]
        self.assertTrue(self.client.login(username="staff", password=password))
        self.assertEqual(Presentation.objects.filter(study=study, kind="pair").count(), 10 * 12 * 4)
        self.assertEqual(Presentation.objects.filter(study=study).exclude(kind="pair").count(), 24)
        self.assertEqual(Collection.objects.get(name="demo").documents.exclude(title="").count(), 275)

    def test_running_it_again_is_harmless(self) -> None:
        self.load()
        before = snapshot()
        users = get_user_model().objects.count()
        out = self.load()
        self.assertEqual(snapshot(), before)
        self.assertEqual(get_user_model().objects.count(), users)
        self.assertIn("Demo collection: already loaded.", out)
        self.assertIn("password unchanged", out)
        self.assertIn("Annotator link: http://127.0.0.1:8000/s/demo-study/", out)

    def test_the_links_follow_the_port_or_the_base_url(self) -> None:
        self.assertIn("Annotator link: http://127.0.0.1:8123/s/demo-study/ ", self.load(port="8123"))
        out = self.load("--base-url", "https://study.example.org/", port="8123")
        self.assertIn("Annotator link: https://study.example.org/s/demo-study/ ", out)
        self.assertIn("Staff login: https://study.example.org/admin/", out)

    def test_a_base_url_without_a_scheme_is_refused_before_anything_is_loaded(self) -> None:
        with self.assertRaisesMessage(CommandError, "--base-url must start with http:// or https://, got 'localhost:8000'"):
            self.load("--base-url", "localhost:8000")
        self.assertFalse(Collection.objects.exists())

    def test_a_given_staff_password_is_set(self) -> None:
        self.load()
        self.load("--staff-password", "correct horse battery")
        self.assertTrue(self.client.login(username="staff", password="correct horse battery"))


class DemoDataTestCase(TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.collection = load_collection(DEMO_DIR / "qrels.txt", DEMO_DIR / "intents.tsv", DEMO_DIR / "topics.xml")
        cls.runs = {p.stem: read_run(p) for p in sorted((DEMO_DIR / "runs").glob("*.run"))}

    def test_it_has_ambiguous_queries_with_typed_weighted_subtopics(self) -> None:
        topics = self.collection.topics
        self.assertGreaterEqual(len(topics), 12)
        types = Counter()
        for tid, topic in topics.items():
            with self.subTest(topic=tid):
                self.assertTrue(topic.query and topic.description)
                self.assertTrue(3 <= len(topic.intents) <= 5)
                self.assertAlmostEqual(sum(i.weight for i in topic.intents), 1.0)
                self.assertTrue(all(i.text for i in topic.intents))
                types.update(i.type for i in topic.intents)
        self.assertGreater(types["nav"], 0)
        self.assertGreater(types["inf"], types["nav"])

    def test_every_query_has_20_to_30_documents_with_display_data_and_graded_judgments(self) -> None:
        docs = [json.loads(line) for line in (DEMO_DIR / "docs.jsonl").read_text().splitlines()]
        by_topic = Counter(d["docid"].split("-")[0][4:] for d in docs)
        self.assertEqual(set(by_topic), set(self.collection.topics))
        self.assertTrue(all(20 <= n <= 30 for n in by_topic.values()), by_topic)
        self.assertTrue(all(d["title"] and d["url"].startswith("https://") and d["snippet"] for d in docs))
        grades = Counter(g for t in self.collection.judgments.values() for d in t.values() for g in d.values())
        self.assertEqual(set(grades), {0, 1, 2, 3, 4})
        for tid in self.collection.topics:
            self.assertEqual(self.collection.relevant_intents(tid), self.collection.topics[tid].intent_ids)

    def test_every_document_links_to_a_reserved_example_domain(self) -> None:
        docs = [json.loads(line) for line in (DEMO_DIR / "docs.jsonl").read_text().splitlines()]
        hosts = {urlsplit(d["url"]).hostname for d in docs}
        self.assertTrue(all(build_demo.reserved_url(d["url"]) for d in docs), sorted(hosts))
        self.assertTrue(all(h.endswith(".example") for h in hosts), sorted(hosts))

    def test_reserved_domains_follow_rfc_2606(self) -> None:
        for url in (
            "https://example.com/",
            "http://www.example.org/a",
            "https://shop.example/x",
            "https://a.b.example.net",
            "https://x.test",
        ):
            self.assertTrue(build_demo.reserved_url(url), url)
        for url in ("https://www.jaguar.com/", "https://example.com.evil.org/", "https://myexample.com/", "https://example.co.uk/", ""):
            self.assertFalse(build_demo.reserved_url(url), url)

    def test_the_build_refuses_a_real_domain_with_file_and_line(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            content = Path(tmp) / "content.txt"
            content.write_text(
                "T 1 | q | d\nS inf 1.0 | need\nD 3 | A page | https://shop.example/a | s\nD 2 | Real | https://www.jaguar.com/ | s\n"
            )
            with self.assertRaises(SystemExit) as caught:
                build_demo.parse(content)
        self.assertEqual(
            str(caught.exception),
            f"{content}:4: 'https://www.jaguar.com/' is not a reserved example domain (RFC 2606: *.example, example.com)",
        )

    def _mean(self, run: str, cutoff: int, what: str) -> float:
        values = []
        for tid, ranked in self.runs[run].lists.items():
            weights = self.collection.weights(tid)
            top = [self.collection.judgments[tid].get(d, {}) for d in ranked[:cutoff]]
            if what == "coverage":
                values.append(len({i for g in top for i, v in g.items() if v > 0}) / len(weights))
            else:  # expected gain per rank, sum of weight x grade
                values.append(sum(weights[i] * v for g in top for i, v in g.items()) / cutoff)
        return sum(values) / len(values)

    def test_the_five_runs_behave_recognisably_differently(self) -> None:
        self.assertEqual(set(self.runs), {"demo-relevance", "demo-diversity", "demo-mixed", "demo-weak", "demo-random"})
        gain = {r: self._mean(r, 5, "gain") for r in self.runs}
        coverage = {r: self._mean(r, 5, "coverage") for r in self.runs}
        self.assertEqual(max(gain, key=gain.get), "demo-relevance")
        self.assertEqual(max(coverage, key=coverage.get), "demo-diversity")
        self.assertGreater(coverage["demo-diversity"], coverage["demo-relevance"])
        self.assertTrue(
            min(gain["demo-relevance"], gain["demo-diversity"]) <= gain["demo-mixed"] <= max(gain["demo-relevance"], gain["demo-diversity"])
        )
        self.assertEqual(min(gain, key=gain.get), "demo-weak")
        self.assertLess(gain["demo-random"], min(gain["demo-relevance"], gain["demo-diversity"], gain["demo-mixed"]))
        self.assertTrue(all(len(ranked) == 20 for run in self.runs.values() for ranked in run.lists.values()))

    def test_the_committed_files_match_the_build_script(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            build_demo.build(Path(tmp))
            names = ["topics.xml", "intents.tsv", "qrels.txt", "docs.jsonl"] + [f"runs/{r}.run" for r in build_demo.RUNS]
            match, mismatch, errors = filecmp.cmpfiles(DEMO_DIR, tmp, names, shallow=False)
        self.assertEqual((mismatch, errors), ([], []), "rerun python studyapp/demo/build_demo.py and commit the result")


@pytest.mark.slow
class SimulatedDemoStudyTestCase(TestCase):
    def test_a_completed_simulated_study_with_its_report_link(self) -> None:
        out = io.StringIO()
        call_command("load_demo", stdout=out)
        study = Study.objects.get(name="Demo study (simulated)")
        self.assertEqual(study.status, Study.Status.CLOSED)
        # The header states the quota nearly everybody had (simulated.json), not the tail's smaller one.
        self.assertEqual(study.items_per_annotator, json.loads((DEMO_DIR / "simulated.json").read_text())["items_per_annotator"])
        quotas = Counter(a.assignments.count() for a in study.annotators.filter(status="finished"))
        self.assertEqual(quotas.most_common(1)[0][0], study.items_per_annotator, quotas)
        status = study_status(study)
        self.assertEqual(status["slots"]["filled"], status["slots"]["needed"])  # every presentation has its k answers
        self.assertEqual(status["complete"]["total"], status["presentations"]["topic"] + status["presentations"]["subtopic"])
        self.assertIn(f"Study report (staff): http://127.0.0.1:8000/staff/{study.slug}/report/", out.getvalue())
        self.assertIn("Simulated study: Demo study (simulated) (created and answered by simulated annotators).", out.getvalue())
        before = snapshot()
        again = io.StringIO()
        call_command("load_demo", stdout=again)
        self.assertEqual(snapshot(), before)
        self.assertIn("Simulated study: Demo study (simulated) (already there).", again.getvalue())
