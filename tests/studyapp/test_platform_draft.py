"""Opening a study on a platform (``manage.py platform_draft``, services.review.drafts): the set-up page's
values in the call, a dry run by default, MTurk's CreateHIT through botocore's Stubber (sandbox by default)."""

from __future__ import annotations

import io
import json
import os
from decimal import Decimal
from unittest import mock

from botocore.stub import ANY, Stubber
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from studyapp.models import PlatformCall
from studyapp.services.platforms.base import DraftOptions
from studyapp.services.platforms.mturk import MTurk, external_question
from studyapp.services.platforms.mturk_api import MTurkReviewClient, build_client
from studyapp.services.review import drafts
from studyapp.services.review.setup import annotators_needed, setup_sections, study_link
from tests.studyapp.base import BaseTestCase
from tests.studyapp.prolific_server import FakeProlific
from tests.studyapp.test_mturk_api import AWS_ENV

BASE = "https://study.example.org"
TOKEN = "draft-test-token-91c4"
OPTIONS = DraftOptions(reward=Decimal("2.5"), minutes=15)
HIT = {"HIT": {"HITId": "3HITNEW", "HITGroupId": "3GROUP", "HITStatus": "Assignable"}, "ResponseMetadata": {"HTTPStatusCode": 200}}


@override_settings(STUDYAPP_BASE_URL=BASE)
class DraftTestCase(BaseTestCase):
    def setUp(self) -> None:
        super().setUp()
        patcher = mock.patch.dict(os.environ, AWS_ENV)
        patcher.start()
        self.addCleanup(patcher.stop)

    def setup_values(self, key: str) -> dict[str, str]:
        return {s.key: {f.label: f.value for f in s.fields} for s in setup_sections(self.study, BASE)}[key]

    def run_command(self, *args: str) -> str:
        out = io.StringIO()
        call_command("platform_draft", self.study.slug, *args, stdout=out)
        return out.getvalue()

    def stubbed(self, sandbox: bool = True) -> tuple[MTurkReviewClient, Stubber]:
        boto = build_client(sandbox=sandbox)
        stub = Stubber(boto)
        stub.activate()
        self.addCleanup(stub.deactivate)
        return MTurkReviewClient(boto, sleep=lambda s: None), stub


class PlanTest(DraftTestCase):
    def test_prolific_draft_uses_the_setup_values(self) -> None:
        draft = drafts.plan(self.study, "prolific", BASE, OPTIONS)
        setup = self.setup_values("prolific")
        self.assertEqual(draft.operation, "POST /api/v1/studies/")
        self.assertEqual(draft.body["external_study_url"], setup["Study URL"])
        self.assertIn("{{%PROLIFIC_PID%}}", draft.body["external_study_url"])
        self.assertIn("{{%SESSION_ID%}}", draft.body["external_study_url"])
        self.assertEqual(draft.body["total_available_places"], int(setup["Places"]))
        self.assertEqual(draft.body["total_available_places"], annotators_needed(self.study))
        self.assertEqual(
            draft.body["completion_codes"],
            [{"code": self.study.completion_code, "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}],
        )
        self.assertEqual(draft.body["prolific_id_option"], "url_parameters")
        self.assertEqual((draft.body["reward"], draft.body["estimated_completion_time"]), (250, 15))
        self.assertEqual(draft.body["name"], self.study.name)
        self.assertIn(self.study.slug, draft.body["internal_name"])
        self.assertTrue(draft.body["description"])

    def test_mturk_hit_uses_the_setup_values(self) -> None:
        options = DraftOptions(reward=Decimal("0.755"), minutes=20, title="Which results are better?", lifetime_days=3)
        draft = drafts.plan(self.study, "mturk", BASE, options)
        setup = self.setup_values("mturk")
        self.assertEqual(draft.operation, "CreateHIT")
        self.assertEqual(draft.body["Question"], setup["ExternalQuestion (the HIT's Question)"])
        self.assertEqual(draft.body["Question"], external_question(study_link(self.study, BASE)))
        self.assertEqual(draft.body["MaxAssignments"], int(setup["MaxAssignments"]))
        self.assertEqual(draft.body["Reward"], "0.76")
        self.assertEqual(draft.body["Title"], "Which results are better?")
        self.assertEqual(draft.body["AssignmentDurationInSeconds"], 3 * 20 * 60)
        self.assertEqual(draft.body["LifetimeInSeconds"], 3 * 86400)
        self.assertIn("no drafts", draft.note)

    def test_bad_input(self) -> None:
        cases = (
            ("anonymous", "", OPTIONS, "cannot open a study"),
            ("panel", "", OPTIONS, "cannot open a study"),
            ("mturk", "", DraftOptions(reward=Decimal(0), minutes=5), "positive amount"),
            ("mturk", "", DraftOptions(reward=Decimal(1), minutes=0), "1 to 1440 minutes"),
            ("mturk", "", DraftOptions(reward=Decimal(1), minutes=5, lifetime_days=0), "at least one day"),
            ("mturk", "", DraftOptions(reward=Decimal(1), minutes=5, title="t" * 129), "the title has 129 characters"),
            ("mturk", "", DraftOptions(reward=Decimal(1), minutes=5, description="d" * 2001), "at most 2000"),
            ("mturk", "", DraftOptions(reward=Decimal(1), minutes=5, keywords="k" * 1001), "at most 1000"),
            ("mturk", "", DraftOptions(reward=Decimal(1), minutes=5, lifetime_days=366), "at most 365 days"),
        )
        for key, _, options, problem in cases:
            with self.subTest(key=key, options=options), self.assertRaisesMessage(ValueError, problem):
                drafts.plan(self.study, key, BASE, options)

    def test_a_full_study_has_no_places_to_open(self) -> None:
        with (
            mock.patch.object(drafts, "annotators_needed", return_value=0),
            self.assertRaisesMessage(ValueError, "needs no more annotators"),
        ):
            drafts.plan(self.study, "prolific", BASE, OPTIONS)


class CommandTest(DraftTestCase):
    def test_dry_run_by_default_sends_nothing(self) -> None:
        with mock.patch.object(MTurk, "draft_client", side_effect=AssertionError("no client in a dry run")):
            out = self.run_command("--platform", "mturk", "--reward", "1.20", "--minutes", "10")
        self.assertIn("CreateHIT in the requester sandbox", out)
        self.assertIn('"Reward": "1.20"', out)
        self.assertIn("MTurk has no drafts", out)
        self.assertIn("Dry run: nothing sent", out)
        out = self.run_command("--platform", "prolific", "--reward", "1.20", "--minutes", "10")
        body = json.loads(out[out.index("{") : out.rindex("}") + 1])
        self.assertEqual(body["reward"], 120)

    def test_bad_input_is_a_one_line_error(self) -> None:
        for args, problem in (
            (("--platform", "mturk", "--reward", "abc", "--minutes", "10"), "not an amount: 'abc'"),
            (("--platform", "mturk", "--reward", "NaN", "--minutes", "10"), "not an amount"),
            (("--platform", "nowhere", "--reward", "1", "--minutes", "10"), "choose from: prolific, mturk"),
        ):
            with self.subTest(args=args), self.assertRaisesMessage(CommandError, problem):
                self.run_command(*args)
        with self.assertRaisesMessage(CommandError, "no study named"):
            call_command("platform_draft", "no-such-study", "--platform", "mturk", "--reward", "1", "--minutes", "5")
        with self.settings(STUDYAPP_BASE_URL=""):
            with self.assertRaisesMessage(CommandError, "STUDYAPP_BASE_URL"):
                self.run_command("--platform", "mturk", "--reward", "1", "--minutes", "5")

    def test_apply_creates_the_hit_in_the_sandbox(self) -> None:
        client, stub = self.stubbed()
        draft = drafts.plan(self.study, "mturk", BASE, OPTIONS)
        stub.add_response("create_hit", HIT, {**draft.body, "UniqueRequestToken": ANY})
        with mock.patch.object(MTurk, "draft_client", return_value=client) as built:
            out = self.run_command("--platform", "mturk", "--reward", "2.5", "--minutes", "15", "--apply")
        stub.assert_no_pending_responses()
        built.assert_called_once_with(False)
        self.assertIn("HIT 3HITNEW created in the sandbox", out)
        self.assertIn("https://workersandbox.mturk.com/projects/3GROUP/tasks", out)
        [call] = PlatformCall.objects.filter(study=self.study)
        self.assertEqual((call.platform, call.operation, call.ok, call.status), ("mturk", "create_draft", True, 200))
        self.assertEqual((call.request["operation"], call.request["sandbox"]), ("CreateHIT", True))
        self.assertNotIn(AWS_ENV["AWS_SECRET_ACCESS_KEY"], f"{call.request} {call.response}")

    def test_production_only_when_asked(self) -> None:
        self.assertIn("sandbox", MTurk().draft_client(False).client.meta.endpoint_url)
        self.assertNotIn("sandbox", MTurk().draft_client(True).client.meta.endpoint_url)

    def test_retry_after_a_5xx_keeps_the_token_and_counts_an_existing_hit(self) -> None:
        client, stub = self.stubbed()
        draft = drafts.plan(self.study, "mturk", BASE, OPTIONS)
        stub.add_client_error("create_hit", "ServiceFault", "Try again.", 500, expected_params={**draft.body, "UniqueRequestToken": ANY})
        stub.add_client_error(
            "create_hit",
            "RequestError",
            "The HIT already exists.",
            400,
            expected_params={**draft.body, "UniqueRequestToken": ANY},
            modeled_fields={"Message": "The HIT already exists.", "TurkErrorCode": "AWS.MechanicalTurk.HitAlreadyExists"},
        )
        created, records = drafts.create(self.study, draft, client=client)
        stub.assert_no_pending_responses()
        tokens = {r.request["body"]["UniqueRequestToken"] for r in records}
        self.assertEqual(len(tokens), 1)
        self.assertEqual([r.ok for r in records], [False, True])
        self.assertIn("created by an earlier attempt", created)

    def test_refused_hit_is_a_clear_error(self) -> None:
        client, stub = self.stubbed()
        stub.add_client_error("create_hit", "RequestError", "Your account has insufficient funds.", 400)
        with mock.patch.object(MTurk, "draft_client", return_value=client):
            with self.assertRaisesMessage(CommandError, "CreateHIT failed: 400 RequestError: Your account has insufficient funds."):
                self.run_command("--platform", "mturk", "--reward", "2.5", "--minutes", "15", "--apply")


class ProlificDraftTest(DraftTestCase):
    """The draft study sent to a local server playing Prolific's API (tests/studyapp/prolific_server.py)."""

    def setUp(self) -> None:
        super().setUp()
        self.api = FakeProlific(TOKEN).__enter__()
        self.addCleanup(self.api.__exit__, None, None, None)
        env = mock.patch.dict(os.environ, {"PROLIFIC_API_TOKEN": TOKEN, "PROLIFIC_API_URL": self.api.url})
        env.start()
        self.addCleanup(env.stop)

    def test_apply_creates_an_unpublished_draft_and_records_it(self) -> None:
        out = self.run_command("--platform", "prolific", "--reward", "2.50", "--minutes", "15", "--apply")
        [request] = self.api.requests
        self.assertEqual((request.method, request.path), ("POST", "/api/v1/studies/"))
        self.assertEqual(request.body, drafts.plan(self.study, "prolific", BASE, OPTIONS).body)
        [created] = self.api.studies.values()
        self.assertEqual(created["status"], "UNPUBLISHED")
        self.assertIn(f"draft study {created['id']} created on Prolific", out)
        self.assertEqual(self.api.calls("POST", "publish"), [])
        [call] = PlatformCall.objects.filter(study=self.study)
        self.assertEqual((call.platform, call.operation, call.ok, call.status), ("prolific", "create_draft", True, 201))
        self.assertEqual(call.request["path"], "/api/v1/studies/")
        self.assertNotIn(TOKEN, f"{call.request} {call.response}")

    def test_a_5xx_is_not_repeated_and_is_recorded(self) -> None:
        """Creating a study is not safe to repeat (a second draft): a 500 stops with a clear error, recorded."""
        self.api.fail("POST", r"^/api/v1/studies/$", 500)
        with self.assertRaisesMessage(CommandError, "POST /api/v1/studies/ failed: 500"):
            self.run_command("--platform", "prolific", "--reward", "2.50", "--minutes", "15", "--apply")
        self.assertEqual(len(self.api.requests), 1)
        [call] = PlatformCall.objects.filter(study=self.study)
        self.assertEqual((call.operation, call.ok, call.status), ("create_draft", False, 500))

    def test_missing_token_sends_nothing(self) -> None:
        with mock.patch.dict(os.environ, {"PROLIFIC_API_TOKEN": ""}):
            with self.assertRaisesMessage(CommandError, "PROLIFIC_API_TOKEN is not set"):
                self.run_command("--platform", "prolific", "--reward", "2.50", "--minutes", "15", "--apply")
        self.assertEqual(self.api.requests, [])
        self.assertFalse(PlatformCall.objects.exists())
