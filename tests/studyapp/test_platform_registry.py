"""The platform registry (``studyapp.services.platforms``): the registered platforms, the registry's
rules, and a dummy platform registered in a test picked up everywhere a platform matters: the link's
parameters, identity and resume, the completion page, the screen-out link, the CSP and the config."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

from django.test import SimpleTestCase

from studyapp.forms import ArrivalForm
from studyapp.middleware import policy
from studyapp.models import Annotator, Study
from studyapp.services import platforms
from studyapp.services.design.study_config import parse_config, platform_study
from studyapp.services.participation import allocation, flow
from studyapp.services.platforms import Completion, Platform
from tests.studyapp.annotator_base import AnnotatorTestCase
from tests.studyapp.base import TOY_CONFIG


class Panel(Platform):
    """A made-up panel provider: its own parameters, a submit form with the code, a screen-out redirect."""

    params, id_param, session_param, free_params = ("member", "visit", "back"), "member", "visit", ("back",)
    key, name, label, id_label = "panel", "PanelCo", "PanelCo research panel", "member number"
    submit_hosts, recruiting_hosts = ("https://panel.example",), ("panel.example",)

    def check(self, cleaned: dict[str, str], raw: Mapping[str, str]) -> dict[str, str]:
        problems = super().check(cleaned, raw)
        if cleaned.get("back") and not cleaned["back"].startswith(self.submit_hosts):
            problems["back"] = "not a PanelCo address"
        return problems

    def completion(self, annotator: Annotator) -> Completion:
        code = annotator.study.completion_code
        fields = (("visit", annotator.external_ids.get("visit", "")), ("code", code))
        return Completion(self.key, self.name, code, submit_action=annotator.external_ids.get("back", ""), submit_fields=fields)

    def screenout_link(self, study: Study) -> str:
        return f"https://panel.example/full?code={study.screenout_code}" if study.screenout_code else ""


class WithPanel:
    def setUp(self) -> None:
        super().setUp()
        platforms.register(Panel())
        self.addCleanup(platforms.unregister, "panel")


def arrival(**params: str):
    form = ArrivalForm(params)
    return form.arrival() if form.is_valid() else form


class RegistryTestCase(SimpleTestCase):
    def test_the_registered_platforms(self) -> None:
        self.assertEqual([(p.key, p.name) for p in platforms.REGISTRY.values()], [("", ""), ("prolific", "Prolific"), ("mturk", "MTurk")])
        self.assertEqual(platforms.names_text(), "Prolific or MTurk")
        self.assertEqual(platforms.form_action_hosts(), ["https://www.mturk.com", "https://workersandbox.mturk.com"])
        self.assertEqual(platforms.by_key("gone"), platforms.ANONYMOUS)  # a key no platform has any more: the code only

    def test_a_platform_must_not_clash_with_another(self) -> None:
        for attributes, problem in [
            ({"key": "prolific"}, "registered twice"),
            ({"params": ("member", "visit", "workerId")}, "link parameter workerId belongs to another platform"),
            ({"id_param": "nope"}, "id_param 'nope' is not one of its params"),
            ({"key": "Panel"}, "must be lower case"),
            ({"key": "averyverylongkey"}, "at most 10 characters"),
        ]:
            with self.subTest(problem), self.assertRaisesRegex(ValueError, problem):
                platforms.register(type("Bad", (Panel,), attributes)())
        self.assertNotIn("panel", platforms.REGISTRY)

    def test_the_builtin_links(self) -> None:
        self.assertEqual(
            arrival(PROLIFIC_PID="p1", SESSION_ID="s1"), platforms.Arrival("prolific", "p1", {"PROLIFIC_PID": "p1", "SESSION_ID": "s1"})
        )
        self.assertEqual(arrival(assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId="h"), platforms.Arrival("mturk", preview=True))
        self.assertEqual(arrival(), platforms.Arrival())
        self.assertIn("no MTurk worker id (workerId is empty)", arrival(assignmentId="a1").problem())
        self.assertIn("turkSubmitTo", arrival(workerId="w", turkSubmitTo="https://evil.example").errors)


class NoPlatformCaseInGenericCodeTestCase(SimpleTestCase):
    """Only ``services/platforms`` knows the platforms: the review (paying, sending, drafts, rules) and its commands ask
    the adapter (``Platform``'s declarations, the client and the payment intent), never compare a platform's key or
    test a client's type (issue 34: ``if draft.platform == "mturk"``, ``isinstance(batches, dict)  # Prolific``)."""

    def test_the_review_names_no_platform(self) -> None:
        root = Path(__file__).resolve().parents[2] / "studyapp"
        files = [*sorted((root / "services" / "review").glob("*.py")), *sorted((root / "management" / "commands").glob("platform_*.py"))]
        keys = {key for key in platforms.REGISTRY if key}
        found = []
        for path in files:
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Compare):
                    operands = [node.left, *node.comparators]
                    named = [o.value for o in operands if isinstance(o, ast.Constant) and o.value in keys]
                    if named:
                        found.append(f"{path.name}:{node.lineno} compares with {named}")
                probe = isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("isinstance", "getattr", "hasattr")
                if probe and node.args and any(w in ast.unparse(node.args[0]) for w in ("client", "batch", "platform")):
                    found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}: ask the adapter instead")
        self.assertGreater(len(files), 8)
        self.assertEqual(found, [])


class DummyPlatformTestCase(WithPanel, AnnotatorTestCase):
    def test_its_link_names_the_participant(self) -> None:
        self.assertEqual(arrival(member="m-7", visit="v1"), platforms.Arrival("panel", "m-7", {"member": "m-7", "visit": "v1"}))
        broken = arrival(visit="v1")
        self.assertEqual(broken.problem(), "The link has no PanelCo member number (member is empty), so we cannot tell who you are.")
        self.assertIn("unexpected characters", arrival(member="<script>").errors["member"])
        self.assertIn("not a PanelCo address", arrival(member="m", back="https://evil.example").errors["back"])

    def test_identity_and_resume_follow_its_session_parameter(self) -> None:
        ids = {"member": "m-8", "visit": "v8"}
        annotator = allocation.register(self.study, platform="panel", external_id="m-8", external_ids=ids)
        self.assertEqual(flow.find(self.study, platforms.Arrival("panel", "m-8")), annotator)
        self.assertTrue(flow.may_resume(annotator, platforms.Arrival("panel", "m-8", ids)))
        self.assertFalse(flow.may_resume(annotator, platforms.Arrival("panel", "m-8", {"member": "m-8", "visit": "other"})))
        self.assertFalse(flow.may_resume(annotator, platforms.Arrival("panel", "m-8", {"member": "m-8"})))
        with self.assertRaisesRegex(ValueError, "unknown platform 'nowhere'"):
            allocation.register(self.study, platform="nowhere", external_id="x")

    def test_a_finished_participant_submits_to_the_panel_only(self) -> None:
        client = self.finish(member="m-9", visit="v9", back="https://panel.example/submit")
        self.assertEqual(Annotator.objects.get(external_id="m-9").platform, "panel")
        response = client.get(self.url("study_done"))
        self.assertContains(response, 'action="https://panel.example/submit"')
        self.assertContains(response, 'name="visit" value="v9"')
        self.assertContains(response, f'name="code" value="{self.study.completion_code}"')
        self.assertContains(response, "Submit the task to PanelCo")
        self.assertContains(response, 'data-platform="panel"')
        self.assertIn("https://panel.example", response["Content-Security-Policy"])

    def test_the_rest_of_the_platform_follows_the_registry(self) -> None:
        self.assertIn("form-action 'self' https://www.mturk.com https://workersandbox.mturk.com https://panel.example;", policy())
        self.assertTrue(platform_study("https://www.panel.example/done?c=1"))
        self.assertTrue(parse_config({**TOY_CONFIG, "redirect_url": "https://panel.example/done?c={code}"}).require_platform_id)
        names = [p.name for p in platforms.REGISTRY.values() if p.key]  # every registered platform, the dummy last
        self.assertEqual(platforms.names_text(), f"{', '.join(names[:-1])} or PanelCo")
        self.assertIn(("panel", "PanelCo research panel"), platforms.choices())
        Study.objects.filter(pk=self.study.pk).update(screenout_code="FULL1")
        self.study.refresh_from_db()
        self.assertEqual(platforms.by_key("panel").screenout_link(self.study), "https://panel.example/full?code=FULL1")
        with self.assertRaisesRegex(Exception, "PanelCo"):
            Study.objects.filter(pk=self.study.pk).update(require_platform_id=True)
            self.study.refresh_from_db()
            flow.check_platform_id(self.study, platforms.Arrival())
