"""``manage.py create_study``: the design it writes (counts, canonical pairs, kept subtopics, check
items) and every rejected configuration, each leaving the database unchanged."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tempfile
from pathlib import Path

from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import TestCase

from studyapp.models import Presentation, Study, StudySubtopic
from studyapp.services.design.check_items import degrade
from studyapp.services.design.study_design import study_slug
from tests.studyapp.base import TOY_CONFIG, import_toy, write
from tests.studyapp.test_import_collection import snapshot


class CreateStudyTestCase(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.collection = import_toy()

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="studyapp-config-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def create(
        self, config, *, name: str = "Toy study", collection: str = "toy", options: tuple[str, ...] = ("--allow-bare-documents",)
    ) -> str:
        """Run the command; the toy collection has display data for three documents only, so it allows bare ones unless ``options`` say otherwise."""
        path = write(self.tmp, "study.json", config if isinstance(config, str) else json.dumps(config))
        out = io.StringIO()
        call_command("create_study", "--collection", collection, "--name", name, "--config", str(path), *options, stdout=out)
        return out.getvalue()

    def assert_rejected(self, config, *reasons: str, **kwargs) -> None:
        before = snapshot()
        with self.assertRaises(CommandError) as ctx:
            self.create(config, **kwargs)
        for reason in reasons:
            self.assertIn(reason, str(ctx.exception))
        self.assertEqual(snapshot(), before)

    # ------------------------------------------------------------------ the design
    def test_plan_prints_the_planning_table(self) -> None:
        out = self.create(TOY_CONFIG, options=("--allow-bare-documents", "--plan", "--reward", "1"))
        self.assertIn("Plan for 'Toy study': ", out)
        self.assertIn("participants answers/pair best set size", out)
        self.assertNotIn("Before recruiting", out)

    def test_it_creates_every_pair_topic_and_level(self) -> None:
        out = self.create(TOY_CONFIG)
        self.assertIn("Presentations: 6 topic-level + 12 subtopic-level = 18; 0 check items; 18 in all.", out)
        self.assertIn("Annotator link: /s/toy-study/ (what to paste into Prolific or MTurk: /staff/toy-study/setup/)", out)
        self.assertIn("give --base-url or set STUDYAPP_BASE_URL", out)  # never a guessed host and port
        self.assertIn("Before recruiting: manage.py plan_study toy-study --reward AMOUNT", out)
        local = self.create(TOY_CONFIG, name="Local", options=("--allow-bare-documents", "--base-url", "http://127.0.0.1:8201"))
        self.assertIn("Annotator link: http://127.0.0.1:8201/s/local/ ", local)
        self.assertIn("Warning: 127.0.0.1 is a local address", local)
        self.assertIn("Warning: The link is not HTTPS", local)
        public = self.create(TOY_CONFIG, name="Public", options=("--allow-bare-documents", "--base-url", "https://study.example.org"))
        self.assertIn("Annotator link: https://study.example.org/s/public/ ", public)
        self.assertNotIn("Warning: The link", public)
        self.assertIn("Warning: The consent text still says '[name and e-mail address of the researchers]'", public)
        mine = {**TOY_CONFIG, "consent_text": "A study. Questions about it: Ada Lovelace, ada@example.org."}
        ready = self.create(mine, name="Ready", options=("--allow-bare-documents", "--base-url", "https://study.example.org"))
        self.assertNotIn("Warning", ready)
        study = Study.objects.get(name="Toy study")
        self.assertEqual(
            (study.slug, study.levels, study.annotators_per_presentation, study.items_per_annotator), ("toy-study", "both", 2, 6)
        )
        pairs = set(Presentation.objects.filter(study=study).values_list("run_a__name", "run_b__name"))
        self.assertEqual(pairs, {("alpha", "bravo"), ("alpha", "charlie"), ("bravo", "charlie")})  # run_a < run_b
        self.assertEqual(Presentation.objects.filter(study=study, level="topic").count(), 6)
        for p in Presentation.objects.filter(study=study, level="subtopic"):
            self.assertIsNotNone(p.subtopic)
            self.assertEqual(p.subtopic.topic_id, p.topic_id)

    def test_it_keeps_the_heaviest_subtopics_with_renormalised_weights(self) -> None:
        self.create(TOY_CONFIG)
        kept = {
            (s.study_topic.topic.topic_id, s.subtopic.number): s.weight
            for s in StudySubtopic.objects.select_related("study_topic__topic", "subtopic")
        }
        self.assertEqual(set(kept), {("1", "1"), ("1", "2"), ("2", "1"), ("2", "2")})
        self.assertAlmostEqual(kept["1", "1"], 0.5 / 0.8)
        self.assertAlmostEqual(kept["1", "2"], 0.3 / 0.8)
        self.assertAlmostEqual(kept["2", "1"], 0.4 / 0.7)
        self.assertAlmostEqual(kept["2", "2"], 0.3 / 0.7)

    def test_one_level_only(self) -> None:
        self.create({**TOY_CONFIG, "levels": ["subtopic"], "items_per_annotator": 4})
        study = Study.objects.get()
        self.assertEqual(study.levels, "subtopic")
        self.assertEqual(Presentation.objects.filter(study=study).count(), 12)

    def test_default_topics_are_those_every_run_covers(self) -> None:
        config = {k: v for k, v in TOY_CONFIG.items() if k != "topics"}
        out = self.create(config)  # charlie has no list for topic 3
        self.assertEqual(list(Study.objects.get().study_topics.values_list("topic__topic_id", flat=True)), ["1", "2"])
        # the collection has 3 topics: the one left out is named with the reason, not only counted
        self.assertIn("2 topics; ", out)
        self.assertIn("Left out 1 topic of the collection: 3 (no ranked list in run charlie).", out)

    def test_topic_rule_takes_the_topics_with_fewest_subtopics_but_at_least_m(self) -> None:
        config = {
            **{k: v for k, v in TOY_CONFIG.items() if k != "topics"},
            "runs": ["alpha", "bravo"],
            "topic_rule": {"count": 1, "min_subtopics": 3},
            "items_per_annotator": 2,
        }
        self.create(config)
        self.assertEqual(list(Study.objects.get().study_topics.values_list("topic__topic_id", flat=True)), ["1"])

    def test_uniform_weights_when_the_collection_gives_none(self) -> None:
        self.create({**TOY_CONFIG, "runs": ["alpha", "bravo"], "topics": ["3"], "items_per_annotator": 2})
        weights = list(StudySubtopic.objects.values_list("weight", flat=True))
        self.assertEqual(weights, [0.5, 0.5])

    def test_check_items_are_identical_and_degraded_pages(self) -> None:
        out = self.create({**TOY_CONFIG, "check_share": 0.2, "items_per_annotator": 10})
        self.assertIn("4 check items", out)
        study = Study.objects.get()
        self.assertEqual(study.check_items_per_annotator, 2)
        identical = Presentation.objects.filter(study=study, kind="identical")
        degraded = Presentation.objects.filter(study=study, kind="degraded")
        self.assertEqual((identical.count(), degraded.count()), (2, 2))
        for p in identical:
            self.assertEqual((p.run_a_id, p.expected_sign), (p.run_b_id, 0))
            self.assertEqual([d.docid for d in p.documents("a")], [d.docid for d in p.documents("b")])
        for p in degraded:
            self.assertEqual((p.run_a_id, p.expected_sign), (p.run_b_id, -1))
            original, worse = p.documents("a"), p.documents("b")
            self.assertEqual(len(original), len(worse))
            self.assertNotEqual(original, worse)
            relevant = {
                j.document_id
                for j in p.topic.judgments.filter(
                    grade__gte=1, subtopic__in=[s.subtopic for s in study.study_topics.get(topic=p.topic).kept_subtopics.all()]
                )
            }
            self.assertNotIn(worse[0].pk, relevant)  # the degraded copy starts with a nonrelevant page

    def test_degrade_pushes_relevant_documents_down(self) -> None:
        relevant = {1, 2}.__contains__
        self.assertEqual(degrade([1, 3, 2, 4, 5], 3, relevant, [9]), [3, 4, 5])
        self.assertEqual(degrade([1, 2], 2, relevant, [9]), [9, 1])
        self.assertIsNone(degrade([3, 4], 2, relevant, [9]))  # nothing relevant to push down
        self.assertIsNone(degrade([1, 2], 2, relevant, []))  # nothing nonrelevant to put first

    # -------------------------------------------------------------- rejected input
    def test_missing_config_file(self) -> None:
        before = snapshot()
        with self.assertRaises(CommandError) as ctx:
            call_command("create_study", "--collection", "toy", "--name", "S", "--config", str(self.tmp / "none.json"))
        self.assertIn("none.json: no such file", str(ctx.exception))
        self.assertEqual(snapshot(), before)

    def test_invalid_json(self) -> None:
        self.assert_rejected('{"runs": ["alpha",\n "bravo"\n', "study.json:3: invalid JSON")

    def test_not_an_object(self) -> None:
        self.assert_rejected("[1, 2]", "must be a JSON object")

    def test_unknown_keys(self) -> None:
        self.assert_rejected({**TOY_CONFIG, "depht": 10}, "unknown key 'depht' (did you mean 'depth'?)")
        self.assert_rejected({**TOY_CONFIG, "zzzz": 1}, "unknown key 'zzzz' (")

    def test_runs_missing_or_too_few_or_repeated(self) -> None:
        self.assert_rejected({"topics": ["1"]}, "runs is required")
        self.assert_rejected({**TOY_CONFIG, "runs": ["alpha"]}, "runs needs at least 2 entries")
        self.assert_rejected({**TOY_CONFIG, "runs": ["alpha", "alpha"]}, "runs lists alpha more than once")
        self.assert_rejected({**TOY_CONFIG, "runs": "alpha,bravo"}, "runs must be a list of names")

    def test_unknown_runs(self) -> None:
        self.assert_rejected(
            {**TOY_CONFIG, "runs": ["alpha", "zulu"]}, "unknown run 'zulu' in collection 'toy' (known: alpha, bravo, charlie)"
        )
        self.assert_rejected({**TOY_CONFIG, "runs": ["alpha", "brav"]}, "unknown run 'brav' in collection 'toy' (did you mean 'bravo'?)")

    def test_unknown_topics(self) -> None:
        self.assert_rejected({**TOY_CONFIG, "topics": ["1", "42"]}, "unknown topic '42' in collection 'toy'")

    def test_topic_without_a_list_in_some_run(self) -> None:
        self.assert_rejected({**TOY_CONFIG, "topics": ["1", "3"]}, "topic 3 has no ranked list in run charlie")

    def test_topics_and_topic_rule_together(self) -> None:
        self.assert_rejected({**TOY_CONFIG, "topic_rule": {"count": 1}}, "either topics or topic_rule, not both")

    def test_bad_topic_rules(self) -> None:
        base = {k: v for k, v in TOY_CONFIG.items() if k != "topics"}
        self.assert_rejected(
            {**base, "topic_rule": {"count": 5, "min_subtopics": 3}}, "asks for 5 topics but only 2 have at least 3 subtopics"
        )
        self.assert_rejected({**base, "topic_rule": {"count": 0}}, "topic_rule.count must be between 1 and")
        self.assert_rejected({**base, "topic_rule": {"n": 2}}, "topic_rule must look like")
        self.assert_rejected({**base, "topic_rule": 3}, "topic_rule must look like")

    def test_bad_numbers(self) -> None:
        cases = [
            ("depth", 0, "depth must be between 1 and 100, got 0"),
            ("depth", "10", 'depth must be an integer, got "10"'),
            ("subtopics_per_topic", True, "subtopics_per_topic must be an integer, got true"),
            ("annotators_per_presentation", 0, "annotators_per_presentation must be between 1"),
            ("items_per_annotator", -1, "items_per_annotator must be between 1"),
            ("fast_threshold_seconds", 0, "fast_threshold_seconds must be in (0, 3600]"),
            ("fast_limit", -2, "fast_limit must be between 0"),
            ("lease_minutes", 0, "lease_minutes must be between 1"),
            ("check_share", 0.9, "check_share must be in [0, 0.5]"),
            ("check_share", "a lot", "check_share must be a number"),
        ]
        for key, value, reason in cases:
            with self.subTest(key=key, value=value):
                self.assert_rejected({**TOY_CONFIG, key: value}, reason)

    def test_bad_levels(self) -> None:
        for levels in (["page"], [], "topic", ["topic", "topic"]):
            with self.subTest(levels=levels):
                self.assert_rejected({**TOY_CONFIG, "levels": levels}, "levels must be")

    def test_bad_texts_codes_and_urls(self) -> None:
        self.assert_rejected({**TOY_CONFIG, "completion_code": "has space"}, "completion_code must be 1-100 letters")
        self.assert_rejected({**TOY_CONFIG, "screenout_code": "x/y"}, "screenout_code must be 1-100 letters")
        self.assert_rejected({**TOY_CONFIG, "redirect_url": "ftp://x"}, "redirect_url must be an http(s):// URL")
        self.assert_rejected(
            {**TOY_CONFIG, "completion_code": "", "redirect_url": "https://p.example/?cc={code}"}, "contains {code} but no completion_code"
        )
        self.assert_rejected(
            {**TOY_CONFIG, "redirect_url": "https://app.prolific.com/submissions/complete?cc=FIXED"},
            "redirect_url must contain {code}, which becomes the completion code (or, for participants refused",
        )
        self.create({**TOY_CONFIG, "redirect_url": "https://p.example/?cc={code}"})  # with TOYDONE as the code
        self.assertEqual(Study.objects.get().completion_redirect(), "https://p.example/?cc=TOYDONE")
        self.assert_rejected({**TOY_CONFIG, "consent_text": 5}, "consent_text must be a string")
        self.assert_rejected({**TOY_CONFIG, "same_pair_both_levels": "no"}, "same_pair_both_levels must be true or false")

    def test_required_texts_may_not_be_empty_or_blank(self) -> None:
        # An empty consent_version made every consent POST fail validation: nobody could start.
        for key in ("consent_version", "consent_text", "instructions"):
            for value in ("", "   ", "\n\t"):
                with self.subTest(key=key, value=value):
                    self.assert_rejected({**TOY_CONFIG, key: value}, f"{key} must not be empty")
        self.assert_rejected({**TOY_CONFIG, "consent_version": "v" * 51}, "consent_version must be at most 50 characters")
        self.assert_rejected({**TOY_CONFIG, "consent_version": 2}, "consent_version must be a string, got 2")

    def test_texts_are_stored_stripped(self) -> None:
        self.create({**TOY_CONFIG, "consent_version": "  v2 ", "instructions": " Read. "})
        study = Study.objects.get(name="Toy study")
        self.assertEqual((study.consent_version, study.instructions), ("v2", "Read."))

    def test_quota_larger_than_one_annotator_can_see(self) -> None:
        # 3 pairs x 2 topics, and per (topic, pair) either the topic level or 2 subtopics: at most 12
        self.assert_rejected({**TOY_CONFIG, "items_per_annotator": 13}, "asks for 13 regular items but one annotator can see at most 12")
        self.create({**TOY_CONFIG, "items_per_annotator": 13, "same_pair_both_levels": True})  # 18 when both levels are allowed

    def test_the_summary_counts_annotators_as_admission_does(self) -> None:
        self.assertIn("6 annotators are needed.", self.create(TOY_CONFIG))
        out = self.create({**TOY_CONFIG, "items_per_annotator": 9}, name="Tail")
        self.assertIn("3 annotators are needed; 9 answer slots then fit no full quota and stay open (see study_status).", out)

    def test_too_many_check_items(self) -> None:
        self.assert_rejected(
            {**TOY_CONFIG, "items_per_annotator": 12, "check_share": 0.5}, "6 check items per annotator are needed but only 4"
        )

    def test_check_share_leaving_no_regular_items(self) -> None:
        self.assert_rejected({**TOY_CONFIG, "items_per_annotator": 1, "check_share": 0.5}, "leaves no regular items")

    def test_names(self) -> None:
        self.assert_rejected(TOY_CONFIG, "no collection named 'nope' (known: toy)", collection="nope")
        self.assert_rejected(TOY_CONFIG, "no collection named 'toi' (did you mean 'toy'?)", collection="toi")
        self.assert_rejected(TOY_CONFIG, "non-empty name", name=" ")
        self.create(TOY_CONFIG)
        self.assert_rejected(TOY_CONFIG, "a study named 'Toy study' exists already")
        self.assert_rejected(TOY_CONFIG, "already uses the URL slug 'toy-study'", name="toy study")

    def test_names_without_latin_letters_get_a_slug(self) -> None:
        """A Chinese or Japanese name (or only punctuation): ``study-`` and 8 hex digits of the name's hash."""
        digest = hashlib.sha256("多样性偏好研究".encode()).hexdigest()[:8]
        self.assertEqual(study_slug("多样性偏好研究"), f"study-{digest}")
        self.assertEqual(study_slug(" 多样性偏好研究 "), f"study-{digest}")  # the stripped name
        self.assertNotEqual(study_slug("検索結果の比較"), study_slug("多样性偏好研究"))
        self.assertRegex(study_slug("???"), r"^study-[0-9a-f]{8}$")
        self.assertEqual(study_slug("NTCIR 中文 study"), "ntcir-study")  # Latin letters: Django's slug
        out = self.create({**TOY_CONFIG, "language": "zh-hans"}, name="多样性偏好研究")
        study = Study.objects.get(name="多样性偏好研究")
        self.assertEqual((study.slug, study.language), (f"study-{digest}", "zh-hans"))
        self.assertIn(f"/s/study-{digest}/", out)
        self.assertEqual(self.client.get(f"/s/study-{digest}/").status_code, 302)  # the link works
        self.assert_rejected({**TOY_CONFIG, "language": "ja"}, "a study named '多样性偏好研究' exists already", name="多样性偏好研究")

    def test_language_and_participant_settings_are_checked(self) -> None:
        self.assert_rejected({**TOY_CONFIG, "language": "fr"}, "language must be one of en, zh-hans, ja")
        self.assert_rejected({**TOY_CONFIG, "min_viewport_width": 100}, "min_viewport_width must be between 240 and 3840")
        self.assert_rejected(
            {**TOY_CONFIG, "excluded_exit": "screenout", "screenout_code": ""}, 'excluded_exit "screenout" needs a screenout_code'
        )
        self.assert_rejected({**TOY_CONFIG, "excluded_exit": "pay"}, "excluded_exit must be one of return, screenout")
        self.create({**TOY_CONFIG, "language": "ja", "min_viewport_width": 900, "excluded_exit": "screenout", "screenout_code": "OUT1"})
        study = Study.objects.get()
        self.assertEqual((study.language, study.min_viewport_width, study.excluded_exit), ("ja", 900, "screenout"))

    def test_default_texts_are_stored_in_the_study_language(self) -> None:
        self.create({**TOY_CONFIG, "language": "zh-hans"}, name="Chinese")
        self.create({**TOY_CONFIG, "language": "ja"}, name="Japanese")
        self.create(TOY_CONFIG, name="English")
        texts = {s.language: (s.consent_text, s.instructions) for s in Study.objects.all()}
        self.assertTrue(texts["en"][0].startswith("This is a research study"))
        self.assertTrue(texts["zh-hans"][0].startswith("这是一项"), texts["zh-hans"][0])
        self.assertIn("您", texts["zh-hans"][1])
        self.assertTrue(texts["ja"][0].startswith("これは"), texts["ja"][0])
        self.assertIn("ください", texts["ja"][1])

    def test_several_problems_are_reported_together(self) -> None:
        self.assert_rejected(
            {**TOY_CONFIG, "depth": 0, "levels": ["x"], "extra": 1}, "unknown key 'extra'", "depth must be", "levels must be"
        )
        # a misspelt key and a misspelt run in one go (issue 33: the run used to come only after the key was fixed)
        self.assert_rejected(
            {**TOY_CONFIG, "runs": ["alpha", "charly"], "anotators_per_presentation": 2},
            "unknown key 'anotators_per_presentation' (did you mean 'annotators_per_presentation'?)",
            "unknown run 'charly' in collection 'toy' (did you mean 'charlie'?)",
        )


class BareDocumentsTest(CreateStudyTestCase):
    """create_study counts the documents the study would show without display data and refuses too many (docs/studyapp.md)."""

    WITH_DATA = {"t1-d1", "t1-d2", "t2-d1"}  # tests/studyapp/base.py DOCS_JSONL

    def expected(self, runs: list[str], topics: list[str], depth: int) -> tuple[int, int]:
        """(shown, bare) counted from the ranked lists in Python."""
        from studyapp.models import RankedItem

        rows = RankedItem.objects.filter(run__name__in=runs, topic__topic_id__in=topics, rank__lte=depth, run__collection=self.collection)
        shown = set(rows.values_list("document__docid", flat=True))
        return len(shown), len(shown - self.WITH_DATA)

    def test_refused_with_the_number_the_share_and_the_fix_nothing_written(self) -> None:
        shown, bare = self.expected(TOY_CONFIG["runs"], TOY_CONFIG["topics"], 10)
        self.assertGreater(bare / shown, 0.2)
        self.assert_rejected(
            TOY_CONFIG,
            f"{bare} of the {shown} documents the study would show ({bare / shown:.0%}, more than the allowed 20%)",
            "manage.py import_documents toy SOURCE...",
            "--allow-bare-documents",
            options=(),
        )
        self.assertFalse(Study.objects.exists())

    def test_the_override_creates_it_and_says_how_many_are_bare(self) -> None:
        shown, bare = self.expected(TOY_CONFIG["runs"], TOY_CONFIG["topics"], 10)
        out = self.create(TOY_CONFIG)
        self.assertIn(f"{bare} of the {shown} documents ranked within depth 10 ({bare / shown:.0%}) have no display data", out)
        self.assertIn("manage.py import_documents toy SOURCE...", out)
        self.assertEqual(Study.objects.count(), 1)

    def test_a_higher_share_allows_it_and_the_count_follows_runs_topics_and_depth(self) -> None:
        config = {**TOY_CONFIG, "runs": ["alpha", "bravo"], "topics": ["1"], "depth": 2, "items_per_annotator": 2}
        shown, bare = self.expected(["alpha", "bravo"], ["1"], 2)
        out = self.create(config, options=("--max-bare-share", "1"))
        self.assertIn(f"{bare} of the {shown} documents ranked within depth 2", out)
        self.assertLess(shown, self.expected(TOY_CONFIG["runs"], TOY_CONFIG["topics"], 10)[0])

    def test_all_with_display_data_is_said_and_never_refused(self) -> None:
        from studyapp.models import Document

        Document.objects.filter(collection=self.collection, title="").update(title="A title")
        shown, _ = self.expected(TOY_CONFIG["runs"], TOY_CONFIG["topics"], 10)
        out = self.create(TOY_CONFIG, options=("--max-bare-share", "0"))
        self.assertIn(f"All {shown} documents ranked within depth 10 have display data.", out)

    def test_text_alone_is_display_data(self) -> None:
        from studyapp.models import Document

        Document.objects.filter(collection=self.collection).update(text="Main content of the page.")
        self.assertIn("have display data", self.create(TOY_CONFIG, options=("--max-bare-share", "0")))

    def test_bad_share(self) -> None:
        for value in ("1.5", "-0.1"):
            with self.assertRaises(CommandError) as ctx:
                self.create(TOY_CONFIG, options=("--max-bare-share", value))
            self.assertIn("--max-bare-share must be between 0 and 1", str(ctx.exception))
        self.assertFalse(Study.objects.exists())

    def test_import_collection_warns(self) -> None:
        from tests.studyapp.base import toy_files

        f = toy_files()
        out = io.StringIO()
        args = ["--qrels", f["qrels"], "--intents", f["intents"], "--topics", f["topics"], "--docs", f["docs"]]
        runs = [x for name in ("alpha", "bravo", "charlie") for x in ("--run", f[name])]
        call_command("import_collection", "--name", "toy2", *map(str, args + runs), stdout=out)
        from studyapp.models import RankedItem

        rows = RankedItem.objects.filter(run__collection__name="toy2", rank__lte=10)
        shown = set(rows.values_list("document__docid", flat=True))
        bare = len(shown - self.WITH_DATA)
        self.assertIn(f"warning: {bare} of the {len(shown)} documents ranked within depth 10", out.getvalue())
        self.assertIn("manage.py import_documents toy2 SOURCE...", out.getvalue())
