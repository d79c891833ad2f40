"""The staff set-up page (services.review.setup): what to paste into Prolific and MTurk, absolute, and
links that really admit a participant of that platform."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qsl, urlsplit
from xml.etree import ElementTree

from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from studyapp.models import Annotator
from studyapp.services.platforms.base import Platform
from studyapp.services.platforms.registry import register, unregister
from studyapp.services.review.setup import setup_sections
from tests.studyapp.annotator_base import AnnotatorTestCase

XQ = "{http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd}"


class PlatformSetupTestCase(AnnotatorTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.staff = Client()
        self.staff.force_login(get_user_model().objects.create_superuser("boss", password="pw-boss-boss"))

    def page(self, **extra) -> str:
        response = self.staff.get(f"/staff/{self.study.slug}/setup/", **extra)
        self.assertEqual(response.status_code, 200)
        return response.content.decode()

    def fields(self, base: str = "https://study.example.org") -> dict[str, dict[str, str]]:
        return {s.key: {f.label: f.value for f in s.fields} for s in setup_sections(self.study, base)}

    def admitted(self, url: str, platform: str, external_id: str) -> Annotator:
        """Follow ``url`` as a participant would (path and query on this test server) and consent."""
        parts = urlsplit(url)
        client = self.fresh_client()
        response = client.get(parts.path, dict(parse_qsl(parts.query)))
        self.assertIn(response.status_code, (200, 302), url)
        response = client.post(self.url("study_consent"), {"agree": "on", "version": self.study.consent_version})
        self.assertEqual(response.status_code, 302, url)
        return Annotator.objects.get(study=self.study, platform=platform, external_id=external_id)

    def test_prolific_url_has_the_placeholders_and_admits_a_participant(self) -> None:
        prolific = self.fields()["prolific"]
        url = prolific["Study URL"]
        self.assertEqual(
            url,
            f"https://study.example.org/s/{self.study.slug}/"
            "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
        )
        self.assertEqual(prolific["Completion code"], self.study.completion_code)
        filled = url.replace("{{%PROLIFIC_PID%}}", "pp1").replace("{{%STUDY_ID%}}", "st1").replace("{{%SESSION_ID%}}", "se1")
        annotator = self.admitted(filled, "prolific", "pp1")
        self.assertEqual(annotator.external_ids["SESSION_ID"], "se1")

    def test_prolific_completion_url_is_the_study_redirect_or_prolifics_own(self) -> None:
        self.assertEqual(
            self.fields()["prolific"]["Completion URL"], "https://app.prolific.com/submissions/complete?cc=" + self.study.completion_code
        )
        self.study.redirect_url = "https://app.prolific.com/submissions/complete?cc={code}"
        self.study.save(update_fields=["redirect_url"])
        self.assertEqual(self.fields()["prolific"]["Completion URL"], self.study.completion_redirect())

    def test_mturk_external_question_is_valid_xml_and_its_url_admits_a_worker(self) -> None:
        mturk = self.fields("https://study.example.org/?a=<b>")["mturk"]  # a hostile base must stay well-formed XML
        ElementTree.fromstring(mturk["ExternalQuestion (the HIT's Question)"])
        question = ElementTree.fromstring(self.fields()["mturk"]["ExternalQuestion (the HIT's Question)"])
        external = question.find(XQ + "ExternalURL").text
        self.assertEqual(external, f"https://study.example.org/s/{self.study.slug}/")
        self.assertEqual(question.find(XQ + "FrameHeight").text, "0")
        worker = external + "?assignmentId=A1&hitId=H1&workerId=W1&turkSubmitTo=https://workersandbox.mturk.com"
        self.assertEqual(self.admitted(worker, "mturk", "W1").external_ids["assignmentId"], "A1")

    def test_places_and_max_assignments_are_the_annotators_still_needed(self) -> None:
        fields = self.fields()
        needed = fields["prolific"]["Places"]
        self.assertGreater(int(needed), 0)
        self.assertEqual(fields["mturk"]["MaxAssignments"], needed)

    def test_the_page_shows_every_field_with_a_copy_button_and_absolute_links(self) -> None:
        page = self.page(HTTP_HOST="testserver")
        self.assertIn(f"http://testserver/s/{self.study.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}", html.unescape(page))
        values = re.findall(r'class="copy-source"', page)
        buttons = re.findall(r'<button type="button" class="copy" data-copy="([^"]+)"', page)
        self.assertEqual(len(values), len(buttons))
        for target in buttons:
            self.assertIn(f'id="{target}"', page)
        self.assertIn("studyapp/copy.js", page)
        self.assertNotIn("<script>", page)  # no inline script under the CSP

    @override_settings(STUDYAPP_BASE_URL="https://study.example.org/")
    def test_the_configured_base_url_wins_over_the_request(self) -> None:
        page = html.unescape(self.page(HTTP_HOST="testserver"))
        self.assertIn(f"https://study.example.org/s/{self.study.slug}/", page)
        self.assertNotIn("http://testserver/s/", page)
        self.assertNotIn("is not HTTPS", page)  # public and HTTPS: nothing to warn about about the link
        self.assertNotIn("is a local address", page)

    @override_settings(ALLOWED_HOSTS=["127.0.0.1", "study.example.org"])
    def test_a_local_or_plain_http_link_is_flagged(self) -> None:
        page = html.unescape(self.page(HTTP_HOST="127.0.0.1:8201"))
        self.assertIn(f"http://127.0.0.1:8201/s/{self.study.slug}/", page)  # the request's own port, not a default
        self.assertIn("Before recruiting:", page)
        self.assertIn("127.0.0.1 is a local address", page)
        self.assertIn("MTurk refuses an http:// ExternalQuestion URL", page)
        page = html.unescape(self.page(HTTP_HOST="study.example.org"))
        self.assertNotIn("is a local address", page)
        self.assertIn("The link is not HTTPS", page)

    def test_a_new_platform_gets_its_own_section(self) -> None:
        class Lab(Platform):
            key, name, label, params, id_param = "labx", "Lab", "Lab panel", ("LAB_ID",), "LAB_ID"

        register(Lab())
        self.addCleanup(unregister, "labx")
        self.assertEqual(self.fields()["labx"]["Study link"], f"https://study.example.org/s/{self.study.slug}/")
        self.assertIn("Lab panel", self.page())

    def test_only_signed_in_staff_see_it(self) -> None:
        response = Client().get(f"/staff/{self.study.slug}/setup/")
        self.assertEqual(response.status_code, 302)
        self.assertIn("/admin/login/", response.url)
