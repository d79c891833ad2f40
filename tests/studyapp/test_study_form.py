"""The study form of the admin and of /staff/studies/new/ (issue 33, item 7): the collection first, its runs
and topics as check boxes, one field per declared setting, every problem at once next to its field (and in a
summary linking to it), suggestions for misspelt names in an imported JSON configuration, the fields exported
as the JSON ``create_study --config`` takes."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from django.contrib.auth import get_user_model
from django.urls import reverse

from studyapp.models import Collection, Study, study_settings
from studyapp.models.study_settings import SETTINGS
from studyapp.services.design.study_config import parse_config
from studyapp.services.design.study_design import create_study
from tests.studyapp.base import TOY_CONFIG, BaseTestCase
from tests.studyapp.test_study_settings import declare_dummy


class PostedForm(HTMLParser):
    """What a browser posts from the page's POST form: every input, checked box, selected option and text area (lists kept)."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.data: dict[str, list[str]] = {}
        self.names: set[str] = set()
        self._in_form = False
        self._select = self._textarea = None
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if tag == "form":
            self._in_form = a.get("method") == "post"
        if not self._in_form:
            return
        name = a.get("name")
        if name and tag in ("input", "select", "textarea") and a.get("type") != "submit":
            self.names.add(name)
        if tag == "input" and name and a.get("type") not in ("submit", "checkbox", "radio"):
            self.data.setdefault(name, []).append(a.get("value") or "")
        elif tag == "input" and name and "checked" in a:
            self.data.setdefault(name, []).append(a.get("value") or "on")
        elif tag == "select":
            self._select = name
        elif tag == "option" and self._select and "selected" in a:
            self.data.setdefault(self._select, []).append(a.get("value") or "")
        elif tag == "textarea":
            self._textarea = name
            self.data[name] = [""]

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.data[self._textarea][0] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._in_form = False
        elif tag == "select":
            self._select = None
        elif tag == "textarea":
            self.data[self._textarea][0] = self.data[self._textarea][0].removeprefix("\n")
            self._textarea = None


class StudyFormTestCase(BaseTestCase):
    url_name = "staff_study_new"

    def setUp(self) -> None:
        super().setUp()
        self.staff = get_user_model().objects.create_superuser("maker", "maker@example.org", "pw-for-tests")
        self.client.force_login(self.staff)
        self.url = reverse(self.url_name) + f"?collection={self.collection.pk}"

    def form(self) -> PostedForm:
        return PostedForm(self.client.get(self.url).content.decode())

    def post(self, **changes):
        """The page's form as a browser posts it, with ``changes`` (a list for check boxes, None to leave a field out)."""
        data = self.form().data
        for key, value in changes.items():
            if value is None:
                data.pop(key, None)
            else:
                data[key] = value if isinstance(value, list) else [value]
        return self.client.post(self.url, data)

    def field_errors(self, response, field: str) -> str:
        """The error list shown next to ``field`` (empty when none)."""
        page = response.content.decode()
        start = page.find(f'<ul class="errorlist" id="id_{field}_error">')
        return "" if start < 0 else page[start : page.index("</ul>", start)]


class TheFormTestCase(StudyFormTestCase):
    def test_it_has_the_collections_runs_topics_and_one_field_per_setting(self) -> None:
        form = self.form()
        for name in ("collection", "name", "runs", "topic_choice", "topics", "levels", "config", *(s.name for s in SETTINGS)):
            self.assertIn(name, form.names)
        page = self.client.get(self.url).content.decode()
        for run in ("alpha", "bravo", "charlie"):
            self.assertIn(f'<input type="checkbox" name="runs" value="{run}"', page)
        self.assertIn('name="topics" value="1"', page)
        self.assertEqual(form.data["depth"], ["10"])  # the declared default
        self.assertIn("documents shown per result page; allowed: 1-100; default: 10 (key depth)", page)  # help from the declaration
        self.assertIn("(empty: the site default); allowed: 1-3650; default: empty (key platform_id_retention_days)", page)
        self.assertIn("<legend>Design</legend>", page)  # frozen settings apart
        self.assertIn('<fieldset aria-describedby="id_runs_helptext">', page)  # a group of boxes is a fieldset with its help

    def test_the_collection_comes_first(self) -> None:
        Collection.objects.create(name="other")
        page = self.client.get(reverse(self.url_name)).content.decode()
        self.assertIn('<label for="id_choose_collection">Collection</label>', page)
        self.assertNotIn('name="runs"', page)  # no runs until a collection is chosen
        self.assertIn('name="runs" value="alpha"', self.client.get(self.url).content.decode())

    def test_a_study_made_with_the_defaults_and_ticked_runs(self) -> None:
        response = self.post(
            name="Form study", runs=["alpha", "bravo"], topic_choice="list", topics=["1", "2"], language="zh-hans", items_per_annotator="4"
        )
        study = Study.objects.get(name="Form study")
        self.assertRedirects(response, reverse("staff_study", args=[study.slug]), fetch_redirect_response=False)
        self.assertEqual(sorted(study.study_runs.values_list("run__name", flat=True)), ["alpha", "bravo"])
        self.assertEqual((study.depth, study.items_per_annotator, study.levels), (10, 4, "both"))
        self.assertTrue(study.members.filter(user=self.staff, role="owner").exists())
        # The default texts left as shown are stored in the study's language, as create_study does.
        self.assertNotIn("This is a research study", study.consent_text)
        self.assertIn("研究", study.consent_text)
        shown = self.client.get(response.url)  # the summary and the link warnings come with the study's page
        self.assertContains(shown, f"Annotator link: http://testserver/s/{study.slug}/")  # the request's address
        self.assertContains(shown, "The link is not HTTPS")
        self.assertContains(self.client.get(reverse("staff_studies")), f'href="{reverse(self.url_name)}"')

    def test_two_mistakes_both_shown_next_to_their_fields_and_nothing_created(self) -> None:
        response = self.post(name="Bad form", runs=["alpha"], depth="0", completion_code="has space")
        self.assertEqual(response.status_code, 200)
        self.assertIn("tick at least 2 runs", self.field_errors(response, "runs"))
        self.assertIn("depth must be between 1 and 100, got 0", self.field_errors(response, "depth"))
        self.assertIn("completion_code must be 1-100 letters", self.field_errors(response, "completion_code"))
        self.assertContains(response, "Nothing was created: 3 problems")
        self.assertContains(response, '<a href="#id_runs_0">Runs: tick at least 2 runs')  # the summary links to the field
        self.assertContains(response, '<a href="#id_depth">Depth: depth must be between 1 and 100, got 0</a>')
        self.assertContains(response, 'aria-invalid="true" aria-describedby="id_depth_helptext id_depth_error" id="id_depth"')
        self.assertFalse(Study.objects.filter(name="Bad form").exists())

    def test_the_collections_checks_go_to_their_fields_too(self) -> None:
        response = self.post(name="", runs=["alpha", "bravo"], items_per_annotator="500", redirect_url="https://p.example/done")
        self.assertIn("This field is required", self.field_errors(response, "name"))
        self.assertIn(
            "items_per_annotator asks for 500 regular items but one annotator can see at most",
            self.field_errors(response, "items_per_annotator"),
        )
        self.assertIn("redirect_url must contain {code}", self.field_errors(response, "redirect_url"))
        make = self.post(name=self.study.name, runs=["alpha", "bravo"])
        self.assertIn("exists already", self.field_errors(make, "name"))

    def test_a_wrong_type_gets_the_forms_words_and_the_rest_is_still_checked(self) -> None:
        response = self.post(name="Typed", runs=["alpha", "bravo"], depth="ten", fast_threshold_seconds="0", side_bias_limit="2")
        self.assertIn("Enter a whole number", self.field_errors(response, "depth"))
        self.assertIn("fast_threshold_seconds must be in (0, 3600], got 0.0", self.field_errors(response, "fast_threshold_seconds"))
        self.assertIn("side_bias_limit must be in [0.5, 1], got 2.0", self.field_errors(response, "side_bias_limit"))

    def test_allocation_is_uniform_by_default_adaptive_on_request_and_a_bad_value_is_refused(self) -> None:
        self.assertEqual(self.form().data["allocation"], ["uniform"])
        bad = self.post(name="Bad allocation", runs=["alpha", "bravo"], allocation="Adaptive")
        self.assertIn("Select a valid choice", self.field_errors(bad, "allocation"))
        self.assertFalse(Study.objects.filter(name="Bad allocation").exists())
        imported = self.post(name="Imported", config=json.dumps({**TOY_CONFIG, "allocation": "Adaptive"}), **{"import": "1"})
        self.assertIn("allocation must be one of uniform, adaptive, got &quot;Adaptive&quot;", self.field_errors(imported, "allocation"))
        self.post(name="Adaptive form", runs=["alpha", "bravo"], items_per_annotator="4", allocation="adaptive")
        self.assertEqual(Study.objects.get(name="Adaptive form").allocation, "adaptive")
        self.post(name="Uniform form", runs=["alpha", "bravo"], items_per_annotator="4")
        self.assertEqual(Study.objects.get(name="Uniform form").allocation, "uniform")

    def test_topics_by_rule_or_ticked(self) -> None:
        response = self.post(name="Ruled", runs=["alpha", "bravo"], topic_choice="rule", topic_count="")
        self.assertIn("give the number of topics", self.field_errors(response, "topic_count"))
        response = self.post(name="Ruled", runs=["alpha", "bravo"], topic_choice="rule", topic_count="50")
        self.assertIn("topic_rule asks for 50 topics but only", self.field_errors(response, "topic_count"))
        response = self.post(name="Ticked", runs=["alpha", "bravo"], topic_choice="list", topics=None)
        self.assertIn("tick at least 1 topic", self.field_errors(response, "topics"))
        self.post(
            name="Ruled", runs=["alpha", "bravo"], topic_choice="rule", topic_count="1", topic_min_subtopics="2", items_per_annotator="2"
        )
        self.assertEqual(Study.objects.get(name="Ruled").study_topics.count(), 1)

    def test_require_platform_id_left_to_its_default_follows_the_redirect(self) -> None:
        prolific = "https://app.prolific.com/submissions/complete?cc={code}"
        self.post(name="Default id", runs=["alpha", "bravo"], redirect_url=prolific, completion_code="DONE1", items_per_annotator="4")
        self.assertTrue(Study.objects.get(name="Default id").require_platform_id)
        self.post(
            name="No id",
            runs=["alpha", "bravo"],
            redirect_url=prolific,
            completion_code="DONE1",
            require_platform_id="False",
            items_per_annotator="4",
        )
        self.assertFalse(Study.objects.get(name="No id").require_platform_id)


class JsonImportExportTestCase(StudyFormTestCase):
    def test_import_fills_the_fields_and_names_every_misspelling(self) -> None:
        config = {**TOY_CONFIG, "runs": ["alpha", "brav"], "dpth": 3, "items_per_anotator": 4, "fast_limit": -1, "depth": 7}
        response = self.post(name="Imported", config=json.dumps(config), **{"import": "1"})
        self.assertEqual(response.status_code, 200)
        self.assertIn("did you mean &#x27;bravo&#x27;?", self.field_errors(response, "runs"))
        config_errors = self.field_errors(response, "config")
        self.assertIn("unknown key &#x27;dpth&#x27; (did you mean &#x27;depth&#x27;?)", config_errors)
        self.assertIn("did you mean &#x27;items_per_annotator&#x27;?", config_errors)
        self.assertIn("fast_limit must be between 0 and 10000, got -1", self.field_errors(response, "fast_limit"))
        filled = PostedForm(response.content.decode()).data
        self.assertEqual(
            (filled["depth"], filled["runs"], filled["topics"], filled["completion_code"]), (["7"], ["alpha"], ["1", "2"], ["TOYDONE"])
        )
        self.assertFalse(Study.objects.filter(name="Imported").exists())  # importing never creates

    def test_import_of_bad_json_says_where(self) -> None:
        response = self.post(name="Imported", config="{not json", **{"import": "1"})
        self.assertIn("invalid JSON at line 1, column 2", self.field_errors(response, "config"))
        response = self.post(name="Imported", config="[1, 2]", **{"import": "1"})
        self.assertIn("must be a JSON object", self.field_errors(response, "config"))

    def test_export_is_what_create_study_takes_and_import_gives_it_back(self) -> None:
        response = self.post(
            name="Exported", runs=["alpha", "charlie"], depth="7", language="ja", items_per_annotator="4", **{"export": "1"}
        )
        self.assertEqual(response["Content-Disposition"], 'attachment; filename="exported.json"')
        exported = json.loads(response.content)
        self.assertEqual((exported["runs"], exported["depth"], exported["language"]), (["alpha", "charlie"], 7, "ja"))
        self.assertNotIn("consent_text", exported)  # left at the default: stored in the study's language
        study = create_study("toy", "Exported", parse_config(exported)).study
        self.assertEqual((study.depth, study.language), (7, "ja"))
        again = PostedForm(self.post(name="Again", config=json.dumps(exported), **{"import": "1"}).content.decode()).data
        self.assertEqual((again["runs"], again["depth"], again["language"]), (["alpha", "charlie"], ["7"], ["ja"]))

    def test_the_reports_study_json_imports_cleanly(self) -> None:
        from studyapp.services.design.study_config import study_config

        response = self.post(name="Copy", config=json.dumps(study_config(self.study)), **{"import": "1"})
        self.assertNotContains(response, "error-summary")
        self.post(name="Copy", **{k: v for k, v in PostedForm(response.content.decode()).data.items() if k != "name"})
        self.assertEqual(Study.objects.get(name="Copy").presentations.count(), self.study.presentations.count())


class AdminStudyFormTestCase(StudyFormTestCase):
    url_name = "admin:studyapp_study_add"

    def test_the_admin_creates_a_study_with_the_same_form(self) -> None:
        response = self.post(name="Admin study", runs=["alpha", "bravo", "charlie"], topic_choice="list", topics=["1", "2"],
                             levels=["topic"], subtopics_per_topic="2", annotators_per_presentation="2", items_per_annotator="6")  # fmt: skip
        study = Study.objects.get(name="Admin study")
        self.assertRedirects(response, reverse("admin:studyapp_study_change", args=[study.pk]), fetch_redirect_response=False)
        self.assertEqual(study.presentations.filter(kind="pair").count(), 6)
        self.assertContains(self.client.get(response.url), "6 topic-level + 0 subtopic-level = 6")

    def test_the_admin_shows_every_problem(self) -> None:
        response = self.post(name="Bad", runs=["alpha"], depth="0")
        self.assertIn("tick at least 2 runs", self.field_errors(response, "runs"))
        self.assertIn("depth must be between 1 and 100", self.field_errors(response, "depth"))


class DummySettingInTheFormTestCase(StudyFormTestCase):
    """docs/contributing.md#a-study-setting: a declaration more is a field more, with its bounds, and nothing else to edit."""

    def setUp(self) -> None:
        super().setUp()
        declare_dummy(self)

    def test_the_form_has_its_field_checked_by_its_declaration(self) -> None:
        form = self.form()
        self.assertEqual(form.data["dummy_limit"], ["5"])
        page = self.client.get(self.url).content.decode()
        self.assertIn("a dummy rule&#x27;s limit; allowed: 1-9; default: 5 (key dummy_limit)", page)
        response = self.post(name="Dummy", runs=["alpha", "bravo"], dummy_limit="10")
        self.assertIn("dummy_limit must be between 1 and 9, got 10", self.field_errors(response, "dummy_limit"))
        self.assertIn("dummy_limit", study_settings.BY_NAME)
