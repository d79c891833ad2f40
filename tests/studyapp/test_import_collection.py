"""``manage.py import_collection``: a good import, display data, --replace, and every bad input
path, each of which must name file:line: reason and leave the database unchanged."""

from __future__ import annotations

import io
import shutil
import tempfile
from pathlib import Path

from django.apps import apps
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import TestCase

from studyapp.models import Collection, Document, Judgment, RankedItem, Run, Subtopic, Topic
from tests.studyapp.base import make_toy_study, toy_files, write


def snapshot() -> dict[str, int]:
    """Row counts of every studyapp table: equal snapshots mean nothing was written."""
    return {model.__name__: model.objects.count() for model in apps.get_app_config("studyapp").get_models()}


class ImportCollectionTestCase(TestCase):
    def setUp(self) -> None:
        self.files = toy_files()
        self.tmp = Path(tempfile.mkdtemp(prefix="studyapp-bad-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def run_import(self, name: str = "toy", *, qrels=None, intents=None, topics=None, docs=None, runs=None, extra=()) -> str:
        f = self.files
        args = ["import_collection", "--name", name, "--qrels", str(qrels or f["qrels"])]
        for flag, value in (("--intents", intents), ("--topics", topics), ("--docs", docs)):
            if value:
                args += [flag, str(value)]
        for run in runs if runs is not None else [f["alpha"], f["bravo"], f["charlie"]]:
            args += ["--run", str(run)]
        out = io.StringIO()
        call_command(*args, *extra, stdout=out)
        return out.getvalue()

    def assert_refused(self, message: str, **kwargs) -> None:
        """The import fails with ``message`` in the error and writes nothing."""
        before = snapshot()
        with self.assertRaises(CommandError) as ctx:
            self.run_import(**kwargs)
        self.assertIn(message, str(ctx.exception))
        self.assertEqual(snapshot(), before)

    # ------------------------------------------------------------------ good input
    def test_it_imports_topics_subtopics_judgments_documents_and_runs(self) -> None:
        f = self.files
        out = self.run_import(intents=f["intents"], topics=f["topics"], docs=f["docs"])
        self.assertIn("Imported collection 'toy': 3 topics, 9 subtopics", out)
        collection = Collection.objects.get(name="toy")
        self.assertEqual(list(collection.topics.values_list("topic_id", flat=True)), ["1", "2", "3"])
        one = Topic.objects.get(collection=collection, topic_id="1")
        self.assertEqual(one.query, "jaguar")
        self.assertEqual(
            list(one.subtopics.values_list("number", "weight", "type", "text")),
            [("1", 0.5, "inf", "the animal"), ("2", 0.3, "inf", "the car"), ("3", 0.2, "nav", "the team's site")],
        )
        # topic 3 has no weights in the intents file: stored as null (uniform at use)
        self.assertEqual(list(Subtopic.objects.filter(topic__topic_id="3").values_list("weight", flat=True)), [None, None])
        self.assertEqual(Judgment.objects.filter(topic__collection=collection).count(), 8 * 9)
        self.assertEqual(Judgment.objects.get(topic=one, subtopic__number="3", document__docid="t1-d6").grade, 4)
        self.assertEqual(sorted(Run.objects.filter(collection=collection).values_list("name", flat=True)), ["alpha", "bravo", "charlie"])
        bravo = RankedItem.objects.filter(run__name="bravo", topic=one).order_by("rank")
        self.assertEqual([i.document.docid for i in bravo], ["t1-d6", "t1-d3", "t1-d1", "t1-d7", "t1-d8", "t1-d2"])
        # charlie's topic 9 is not in the qrels: ignored with a warning, not stored
        self.assertIn("ignored 1 topic not in the qrels: 9", out)
        self.assertFalse(RankedItem.objects.filter(run__name="charlie", topic__topic_id="9").exists())

    def test_run_takes_several_files_and_a_directory_as_the_evaluation_command_line_does(self) -> None:
        """``--run runs/*.run`` (a shell glob) and ``--run runs/`` as ``diversity-eval score --run`` takes them."""
        f = self.files
        call_command(
            "import_collection",
            "--name",
            "glob",
            "--qrels",
            str(f["qrels"]),
            "--run",
            str(f["alpha"]),
            str(f["bravo"]),
            stdout=io.StringIO(),
        )
        folder = self.tmp / "runs"
        folder.mkdir()
        for name in ("alpha", "bravo", "charlie"):
            shutil.copy(f[name], folder / f"{name}.run")
        call_command("import_collection", "--name", "folder", "--qrels", str(f["qrels"]), "--run", str(folder), stdout=io.StringIO())
        names = {c: sorted(Run.objects.filter(collection__name=c).values_list("name", flat=True)) for c in ("glob", "folder")}
        self.assertEqual(names, {"glob": ["alpha", "bravo"], "folder": ["alpha", "bravo", "charlie"]})
        (self.tmp / "empty").mkdir()
        self.assert_refused("a directory without run files", name="empty", runs=[self.tmp / "empty"])

    def test_ntcir_tab_separated_topics_give_queries_and_subtopic_texts(self) -> None:
        # the toy collection's topics as an NTCIR tab-separated topic file (docs/metrics.md#topic-files), in mixed order
        tsv = "1\tjaguar\n1\t2\tthe car\n1\t1\tthe animal\n1\t3\tthe team's site\tnav\n2\tjava\n3\tapple\n"
        out = self.run_import(intents=self.files["intents"], topics=write(self.tmp, "topics.tsv", tsv))
        self.assertIn("3 topics, 9 subtopics", out)
        one = Topic.objects.get(topic_id="1")
        self.assertEqual((one.query, one.description), ("jaguar", ""))
        self.assertEqual(
            list(one.subtopics.values_list("number", "weight", "type", "text")),
            [("1", 0.5, "inf", "the animal"), ("2", 0.3, "inf", "the car"), ("3", 0.2, "nav", "the team's site")],
        )
        self.assertEqual(Topic.objects.get(topic_id="2").query, "java")

    def test_ntcir_topic_xml_gives_queries(self) -> None:
        xml = "<queries>\n<query><qid>1</qid><content>jaguar</content><description>Which jaguar?</description></query>\n</queries>\n"
        self.run_import(topics=write(self.tmp, "topics.xml", xml))
        one = Topic.objects.get(topic_id="1")
        self.assertEqual((one.query, one.description), ("jaguar", "Which jaguar?"))

    def test_a_bad_ntcir_topic_line_names_file_and_line(self) -> None:
        path = write(self.tmp, "topics.tsv", "1\tjaguar\n1\t1\tthe animal\tweird\n")
        self.assert_refused(f"{path}:2: intent type must be 'inf' or 'nav'", topics=path)

    def test_documents_without_display_data_show_their_docid(self) -> None:
        self.run_import(docs=self.files["docs"])
        with_data = Document.objects.get(docid="t1-d1")
        self.assertEqual(
            (with_data.title, with_data.url, with_data.snippet), ("Jaguar facts", "https://example.org/jaguar", "The big cat.")
        )
        without = Document.objects.get(docid="t1-d7")
        self.assertEqual(without.title, "")
        self.assertEqual(without.display_title, "t1-d7")

    def test_tsv_display_data_is_accepted(self) -> None:
        docs = write(self.tmp, "docs.tsv", "docid\ttitle\turl\nt1-d1\tJaguar\thttps://example.org/j\n")
        self.run_import(docs=docs)
        self.assertEqual(Document.objects.get(docid="t1-d1").title, "Jaguar")

    def test_it_refuses_an_existing_name_without_replace(self) -> None:
        self.run_import()
        self.assert_refused("exists already; use --replace")

    def test_replace_overwrites_the_collection(self) -> None:
        self.run_import()
        self.run_import(runs=[self.files["alpha"]], extra=["--replace"])
        collection = Collection.objects.get(name="toy")
        self.assertEqual(list(collection.runs.values_list("name", flat=True)), ["alpha"])
        self.assertEqual(Collection.objects.count(), 1)

    def test_replace_is_refused_while_a_study_uses_the_collection(self) -> None:
        self.run_import()
        make_toy_study()
        before = snapshot()
        with self.assertRaises(CommandError) as ctx:
            self.run_import(runs=[self.files["alpha"]], extra=["--replace"])
        self.assertIn("is used by studies Toy study", str(ctx.exception))
        self.assertEqual(snapshot(), before)

    def test_a_failed_replace_keeps_the_old_collection(self) -> None:
        self.run_import()
        bad = write(self.tmp, "bad.run", "1 Q0 d1 1\n")
        before = snapshot()
        with self.assertRaises(CommandError):
            self.run_import(runs=[bad], extra=["--replace"])
        self.assertEqual(snapshot(), before)

    # ------------------------------------------------------------------- bad input
    def test_missing_qrels_file(self) -> None:
        self.assert_refused(f"{self.tmp / 'nope.txt'}: no such file", qrels=self.tmp / "nope.txt")

    def test_empty_qrels_file(self) -> None:
        self.assert_refused("file is empty", qrels=write(self.tmp, "q.txt", "\n# nothing\n"))

    def test_qrels_with_wrong_column_count(self) -> None:
        path = write(self.tmp, "q.txt", "1 1 d1 1\n1 1 d2\n")
        self.assert_refused(f"{path}:2: expected 4 columns", qrels=path)

    def test_qrels_with_non_integer_grade(self) -> None:
        path = write(self.tmp, "q.txt", "1 1 d1 high\n")
        self.assert_refused(f"{path}:1: grade must be an integer, got 'high'", qrels=path)

    def test_qrels_with_duplicate_judgment(self) -> None:
        path = write(self.tmp, "q.txt", "1 1 d1 1\n1 1 d1 2\n")
        self.assert_refused(f"{path}:2: duplicate judgment", qrels=path)

    def test_intents_with_probability_out_of_range(self) -> None:
        path = write(self.tmp, "i.tsv", "1\t1\t1.5\n")
        self.assert_refused(f"{path}:1: probability must be in [0, 1]", intents=path)

    def test_intents_summing_above_one(self) -> None:
        path = write(self.tmp, "i.tsv", "1\t1\t0.7\n1\t2\t0.6\n")
        self.assert_refused(f"{path}:2: probabilities of topic 1 sum to 1.3 > 1", intents=path)

    def test_intents_with_bad_type(self) -> None:
        path = write(self.tmp, "i.tsv", "1\t1\t0.5\tnavigational\n")
        self.assert_refused(f"{path}:1: intent type must be 'inf' or 'nav'", intents=path)

    def test_topics_with_invalid_xml(self) -> None:
        path = write(self.tmp, "t.xml", "<topic number='1'>\n<query>x</query>\n<subtopic number='1'>\n</topic>\n")
        self.assert_refused(f"{path}:4: invalid XML", topics=path)

    def test_topics_with_bad_subtopic_type(self) -> None:
        path = write(self.tmp, "t.xml", "<topic number='1'>\n<subtopic number='1' type='maybe'>x</subtopic></topic>\n")
        self.assert_refused(f"{path}:2: subtopic type must be 'inf' or 'nav'", topics=path)

    def test_docs_with_invalid_json(self) -> None:
        path = write(self.tmp, "d.jsonl", '{"docid": "t1-d1"}\n{"docid": \n')
        self.assert_refused(f"{path}:2: invalid JSON", docs=path)

    def test_docs_with_duplicate_docid(self) -> None:
        path = write(self.tmp, "d.jsonl", '{"docid": "t1-d1"}\n{"docid": "t1-d1"}\n')
        self.assert_refused(f"{path}:2: docid t1-d1 listed twice", docs=path)

    def test_docs_with_unsafe_url(self) -> None:
        path = write(self.tmp, "d.tsv", "docid\turl\nt1-d1\tjavascript:alert(1)\n")
        self.assert_refused(f"{path}:2: url must start with http", docs=path)

    def test_run_with_wrong_column_count(self) -> None:
        path = write(self.tmp, "r.run", "1 Q0 t1-d1 1 9 bad\n1 Q0 t1-d2 2 8\n")
        self.assert_refused(f"{path}:2: expected 6 columns", runs=[self.files["alpha"], path])

    def test_run_with_non_numeric_score(self) -> None:
        path = write(self.tmp, "r.run", "1 Q0 t1-d1 1 high bad\n")
        self.assert_refused(f"{path}:1: score must be a number", runs=[path])

    def test_empty_run_file(self) -> None:
        path = write(self.tmp, "r.run", "")
        self.assert_refused(f"{path}: file is empty", runs=[path])

    def test_two_runs_with_the_same_name(self) -> None:
        copy = write(self.tmp, "copy.run", self.files["alpha"].read_text())
        self.assert_refused(f"{copy}:1: run name 'alpha' is also the name of {self.files['alpha']}", runs=[self.files["alpha"], copy])

    def test_run_without_any_topic_of_the_qrels(self) -> None:
        path = write(self.tmp, "r.run", "# a comment\n77 Q0 x 1 1 stray\n78 Q0 x 1 1 stray\n")
        self.assert_refused(f"{path}:2: none of the run's topics is in the qrels", runs=[path])

    def test_run_name_too_long(self) -> None:
        tag = "r" * 101
        path = write(self.tmp, "r.run", f"# {tag}\n1 Q0 t1-d1 1 9 {tag}\n")
        self.assert_refused(f"{path}:2: run name longer than 100 characters", runs=[path])

    def test_docid_longer_than_the_database_allows_names_file_and_line(self) -> None:
        long = "d" * 201
        qrels = self.files["qrels"].read_text()
        cases = {
            "in a run": ("r.run", f"1 Q0 t1-d1 1 9 long\n1 Q0 t1-d2 2 8 long\n1 Q0 {long} 3 7 long\n", 3, "runs"),
            "in the qrels": ("q.txt", f"{qrels}1 1 {long} 1\n", qrels.count("\n") + 1, "qrels"),
            "in the display data": ("d.jsonl", f'{{"docid": "t1-d1"}}\n{{"docid": "{long}", "title": "x"}}\n', 2, "docs"),
        }
        for where, (name, text, line, role) in cases.items():
            with self.subTest(where=where):
                path = write(self.tmp, name, text)
                files = {"runs": [self.files["alpha"], path]} if role == "runs" else {role: path}
                self.assert_refused(f"{path}:{line}: docid longer than 200 characters (201, 1 such docid in all): {long[:60]}...", **files)

    def test_values_past_the_database_limits_name_file_and_line(self) -> None:
        """Refused the same way on SQLite (which would store them) and PostgreSQL (which would fail)."""
        qrels = self.files["qrels"].read_text()
        end = qrels.count("\n") + 1
        cases = [
            ("grade 99999", f"{qrels}1 1 t1-d9 99999\n", "grade 99999 is outside the storable range 0..32767"),
            ("grade 1e23", f"{qrels}1 1 t1-d9 1e23\n", "grade must be an integer, got '1e23'"),
            ("grade 10^23", f"{qrels}1 1 t1-d9 {10**23}\n", f"grade {10**23} is outside the storable range"),
            ("80-character topic id", f"{qrels}{'t' * 80} 1 t1-d9 1\n", "topic id longer than 64 characters (80)"),
            ("40-character subtopic id", f"{qrels}1 {'s' * 40} t1-d9 1\n", "subtopic id longer than 32 characters (40)"),
        ]
        for what, text, message in cases:
            with self.subTest(what):
                path = write(self.tmp, "q.txt", text)
                self.assert_refused(f"{path}:{end}: {message}", qrels=path)

    def test_nul_characters_are_refused_with_their_line(self) -> None:
        run = self.tmp / "r.run"
        run.write_bytes(b"1 Q0 t1-d1 1 9 nul\n1 Q0 t1\x00d2 2 8 nul\n")
        self.assert_refused(f"{run}:2: NUL character (byte 0) in the file", runs=[run])
        for escaped, problem in (("a\\u0000b", "a NUL character"), ("\\ud800", "an unpaired surrogate")):
            with self.subTest(problem):
                docs = write(self.tmp, "d.jsonl", f'{{"docid": "t1-d1"}}\n{{"docid": "t1-d2", "title": "{escaped}"}}\n')
                self.assert_refused(f"{docs}:2: the title of document 't1-d2' contains {problem}", docs=docs)

    def test_malformed_urls_are_refused_with_their_line(self) -> None:
        for url, message in (
            ("http://[::1", "url is not a valid URL"),
            ("http://example.org:99999/", "url is not a valid URL"),
            ("https:///path-only", "url has no host name"),
            ("http://exa mple.org/", "url contains whitespace"),
        ):
            with self.subTest(url):
                docs = write(self.tmp, "d.jsonl", f'{{"docid": "t1-d1"}}\n{{"docid": "t1-d2", "url": "{url}"}}\n')
                self.assert_refused(f"{docs}:2: {message}", docs=docs)

    def test_unicode_line_separators_inside_a_json_string_do_not_split_the_line(self) -> None:
        title = "one\u2028two\u0085three"
        docs = self.tmp / "d.jsonl"
        docs.write_text(f'{{"docid": "t1-d1", "title": "{title}"}}\n{{"docid": "t1-d2"}}\n{{"docid": \n', encoding="utf-8")
        self.assert_refused(f"{docs}:3: invalid JSON", docs=docs)  # line numbers count \n only
        docs.write_text(f'{{"docid": "t1-d1", "title": "{title}"}}\n{{"docid": "t1-d2"}}\n', encoding="utf-8")
        self.run_import(docs=docs)
        self.assertEqual(Document.objects.get(docid="t1-d1").title, title)

    def test_empty_name(self) -> None:
        self.assert_refused("needs a non-empty --name", name="  ")

    def test_too_long_name(self) -> None:
        self.assert_refused("longer than 100 characters", name="x" * 101)

    def test_no_run_is_a_usage_error(self) -> None:
        before = snapshot()
        with self.assertRaises(CommandError) as ctx:
            call_command("import_collection", "--name", "toy", "--qrels", str(self.files["qrels"]))
        self.assertIn("--run", str(ctx.exception))
        self.assertEqual(snapshot(), before)
