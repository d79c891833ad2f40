"""Participant pages in the study's language: complete catalogues, every text in them, compiled, and used.

The catalogue checks need gettext's tools (``msgfmt``, ``msgcmp``; ``.ci/run`` installs gettext): in CI
their absence fails, elsewhere it skips with the reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import SimpleTestCase, override_settings

from studyapp.models import Annotator, Study
from studyapp.services.participation import flow
from tests.studyapp.annotator_base import RIGHT_ANSWERS, AnnotatorTestCase
from tests.studyapp.base import make_toy_study
from tests.studyapp.catalogue import CATALOGUE_DIRS, LOCALE, ROOT, english_left, mo_path, visible_text

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def gettext_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        message = f"gettext's {name} is not installed (apt-get install gettext)"
        if IN_CI:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return path


def po_path(language: str) -> Path:
    return LOCALE / CATALOGUE_DIRS[language] / "LC_MESSAGES" / "django.po"


class CatalogueTestCase(SimpleTestCase):
    def test_the_languages_are_the_study_languages_and_each_has_a_catalogue(self) -> None:
        self.assertEqual([code for code, _ in settings.LANGUAGES], Study.Language.values)
        self.assertEqual(set(CATALOGUE_DIRS), set(Study.Language.values) - {"en"})
        for language in CATALOGUE_DIRS:
            self.assertTrue(po_path(language).is_file(), po_path(language))

    def test_every_message_is_translated_and_none_is_fuzzy(self) -> None:
        msgfmt = gettext_tool("msgfmt")
        for language in CATALOGUE_DIRS:
            with self.subTest(language=language):
                done = subprocess.run(
                    [msgfmt, "--check", "--statistics", "-o", os.devnull, str(po_path(language))], capture_output=True, text=True
                )
                self.assertEqual(done.returncode, 0, done.stderr)
                stats = done.stderr.strip().splitlines()[-1]
                self.assertRegex(stats, r"^\d+ translated messages\.$", f"{po_path(language)}: {stats} (translate them, drop #, fuzzy)")

    def test_the_catalogues_hold_exactly_the_texts_of_the_code(self) -> None:
        """makemessages on a copy of the sources: no text missing from a catalogue, none left over (run `make messages`)."""
        msgcmp = gettext_tool("msgcmp")
        gettext_tool("xgettext")
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp)
            if (ROOT / "templates").is_dir():
                shutil.copytree(ROOT / "templates", copy / "templates")
            shutil.copytree(ROOT / "studyapp", copy / "studyapp", ignore=shutil.ignore_patterns("__pycache__", "migrations"))
            (copy / "locale").mkdir()
            cwd = os.getcwd()
            os.chdir(copy)
            try:
                with override_settings(LOCALE_PATHS=[copy / "locale"]):
                    call_command("makemessages", locale=["ja"], keep_pot=True, verbosity=0)
            finally:
                os.chdir(cwd)
            pot = copy / "locale" / "django.pot"
            self.assertTrue(pot.is_file())
            for language in CATALOGUE_DIRS:
                with self.subTest(language=language):
                    missing = subprocess.run(
                        [msgcmp, "--use-untranslated", str(po_path(language)), str(pot)], capture_output=True, text=True
                    )
                    self.assertEqual(missing.returncode, 0, f"texts missing from {po_path(language)}:\n{missing.stderr}")
                    stale = subprocess.run([msgcmp, "--use-untranslated", str(pot), str(po_path(language))], capture_output=True, text=True)
                    self.assertEqual(stale.returncode, 0, f"texts in {po_path(language)} that the code no longer has:\n{stale.stderr}")
                    self.assertNotIn("\n#~ ", po_path(language).read_text(encoding="utf-8"), "obsolete entries left in the catalogue")

    def test_the_compiled_catalogues_are_up_to_date(self) -> None:
        msgfmt = gettext_tool("msgfmt")
        for language in CATALOGUE_DIRS:
            with self.subTest(language=language), tempfile.TemporaryDirectory() as tmp:
                fresh = Path(tmp) / "django.mo"
                subprocess.run([msgfmt, "--check", "-o", str(fresh), str(po_path(language))], check=True)
                compiled = mo_path(language)
                self.assertTrue(compiled.is_file(), f"{compiled} is missing: run `make compiled-messages`")
                self.assertEqual(
                    compiled.read_bytes(), fresh.read_bytes(), f"{compiled} is older than its .po: run `make compiled-messages`"
                )


class TranslatedPagesTestCase(AnnotatorTestCase):
    """Every participant page of a Chinese and a Japanese study: the page's lang, and no English text of the catalogue."""

    def assert_translated(self, response, language: str) -> str:
        self.assertIn(response.status_code, (200, 400, 403, 404, 409, 429), response.status_code)
        html = response.content.decode()
        self.assertIn(f'<html lang="{language}">', html)
        self.assertEqual(response["Content-Language"], language)
        text = visible_text(html)
        self.assertEqual(english_left(text, language), [], text[:2000])
        return text

    def walk(self, language: str) -> list[str]:
        """Every page a participant can meet, in order; returns their visible texts."""
        study = make_toy_study(f"Study {language}", language=language, check_share=0.34, straightline_limit=5, side_bias_limit=0.9,
                               median_seconds_min=2, min_viewport_width=800)  # fmt: skip
        self.study, self.slug = study, study.slug
        client = self.fresh_client()
        texts = [self.assert_translated(client.get(self.entry(assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId="h")), language)]
        client.get(self.entry(PROLIFIC_PID="p1", STUDY_ID="s", SESSION_ID="x1"))
        pages = [self.url("study_consent")]
        for url in pages:
            texts.append(self.assert_translated(client.get(url), language))
        texts.append(self.assert_translated(client.post(self.url("study_consent"), {"version": study.consent_version}), language))
        client.post(self.url("study_consent"), {"agree": "on", "version": study.consent_version})
        texts.append(self.assert_translated(client.get(self.url("study_instructions")), language))
        client.post(self.url("study_instructions"))
        texts.append(self.assert_translated(client.get(self.url("study_practice")), language))
        texts.append(self.assert_translated(client.post(self.url("study_practice"), {}), language))  # no choice: the error
        client.post(self.url("study_practice"), {"value": 1})  # weak feedback
        texts.append(self.assert_translated(client.get(self.url("study_practice")), language))
        texts.append(self.assert_translated(client.get(self.url("study_comprehension")), language))
        wrong = {**RIGHT_ANSWERS, "compare": "speed", "same": "never"}
        texts.append(self.assert_translated(client.post(self.url("study_comprehension"), wrong), language))  # two wrong, one attempt left
        client.post(self.url("study_comprehension"), RIGHT_ANSWERS)
        assignment = self.serve(client)
        texts.append(self.assert_translated(client.get(self.url("study_item", assignment.pk)), language))
        texts.append(self.assert_translated(client.post(self.url("study_answer", assignment.pk), {"value": 9}), language))  # invalid
        self.answer_everything(client, value=0)
        texts.append(self.assert_translated(client.get(self.url("study_done")), language))
        return texts

    def test_a_chinese_and_a_japanese_study_speak_their_language_on_every_page(self) -> None:
        for language, polite in (("zh-hans", "您"), ("ja", "ください")):
            with self.subTest(language=language):
                texts = self.walk(language)
                self.assertTrue(any(polite in t for t in texts))

    def test_every_message_page_is_translated(self) -> None:
        for language in ("zh-hans", "ja"):
            study = make_toy_study(f"Messages {language}", language=language, excluded_exit="screenout")
            self.study, self.slug = study, study.slug
            client = self.fresh_client()
            with self.subTest(language=language, page="bad link"):
                self.assert_translated(client.get(self.entry(PROLIFIC_PID="")), language)
            with self.subTest(language=language, page="id required"):
                Study.objects.filter(pk=study.pk).update(require_platform_id=True)
                self.assert_translated(client.get(self.entry()), language)
            for status in ("paused", "closed"):
                with self.subTest(language=language, page=status):
                    Study.objects.filter(pk=study.pk).update(status=status, require_platform_id=False)
                    self.assert_translated(client.get(self.entry(PROLIFIC_PID=f"p-{status}")), language)
            Study.objects.filter(pk=study.pk).update(status="open")
            with self.subTest(language=language, page="expired"):
                self.assert_translated(client.get(self.url("study_instructions")), language)
            with self.subTest(language=language, page="declined"):
                client.get(self.entry(PROLIFIC_PID="p-decline"))
                self.assert_translated(client.post(self.url("study_consent"), {"decline": "1"}), language)
            with self.subTest(language=language, page="screened"):
                other = self.fresh_client()
                other.get(self.entry(PROLIFIC_PID="p-screen", STUDY_ID="s", SESSION_ID="x2"))
                other.post(self.url("study_consent"), {"agree": "on", "version": study.consent_version})
                other.post(self.url("study_instructions"))
                other.post(self.url("study_practice"), {"value": -3})
                other.post(self.url("study_comprehension"), {**RIGHT_ANSWERS, "compare": "speed"})
                self.assert_translated(other.post(self.url("study_comprehension"), {**RIGHT_ANSWERS, "compare": "speed"}), language)
            with self.subTest(language=language, page="excluded"):
                Study.objects.filter(pk=study.pk).update(fast_limit=0)
                other = self.fresh_client()
                other.get(self.entry(PROLIFIC_PID="p-fast", STUDY_ID="s", SESSION_ID="x3"))
                other.post(self.url("study_consent"), {"agree": "on", "version": study.consent_version})
                annotator = Annotator.objects.get(study=study, external_id="p-fast")
                flow.read_instructions(annotator)
                flow.answer_practice(annotator, -3)
                flow.check_comprehension(annotator, RIGHT_ANSWERS)
                self.answer(other, self.serve(other))
                text = self.assert_translated(other.get(self.url("study_next_item"), follow=True), language)
                self.assertIn("TOYFULL", text)  # excluded_exit "screenout": the screen-out code
                Study.objects.filter(pk=study.pk).update(fast_limit=30)
            with self.subTest(language=language, page="not found"):
                self.assert_translated(other.get(self.url("study_item", 999999)), language)
            with self.subTest(language=language, page="taken"):
                self.assert_translated(
                    self.fresh_client().get(self.entry(PROLIFIC_PID="p-fast", STUDY_ID="s", SESSION_ID="other")), language
                )
            with self.subTest(language=language, page="withdrawn before"):
                leaving = self.fresh_client()
                leaving.get(self.entry(PROLIFIC_PID="p-gone", STUDY_ID="s", SESSION_ID="x4"))
                leaving.post(self.url("study_consent"), {"agree": "on", "version": study.consent_version})
                leaving.post(self.url("study_withdraw"))
                self.assert_translated(leaving.get(self.entry(PROLIFIC_PID="p-gone", STUDY_ID="s", SESSION_ID="x4")), language)

    def test_an_unknown_study_answers_in_the_browser_language(self) -> None:
        response = self.client.get("/s/no-such-study/", HTTP_ACCEPT_LANGUAGE="ja,en;q=0.5")
        self.assertEqual(response.status_code, 404)
        self.assertIn('<html lang="ja">', response.content.decode())
        self.assertIn("研究が見つかりません", response.content.decode())
        english = self.client.get("/s/no-such-study/")
        self.assertIn('<html lang="en">', english.content.decode())

    def test_english_studies_stay_english_and_staff_pages_too(self) -> None:
        response = self.client.get(self.url("study_next_item"), follow=True)
        self.assertIn('<html lang="en">', response.content.decode())
        self.assertContains(response, "Which result list is better")
        # The check of the translated pages finds English where there is some (it cannot pass on an untranslated page).
        self.assertGreater(len(english_left(visible_text(response.content.decode()), "ja")), 5)
        self.assertEqual(re.findall(r'<html lang="(\w+)"', self.client.get("/").content.decode()), ["en"])
