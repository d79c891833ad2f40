"""Who may start a study (issue 12, "anyone can fill a study"): studies that require a platform id,
newcomers limited per client, and one annotator per arrival however often its consent is posted.

The attack reproduced: seven scripted clients without a platform id filled a small study in 0.6 s.
"""

from __future__ import annotations

import time
from unittest import mock

from django.conf import settings
from django.test import SimpleTestCase, override_settings

from studyapp.models import Annotator
from studyapp.services.access import throttle
from studyapp.services.design.study_config import parse_config, platform_study
from studyapp.services.participation import allocation
from studyapp.services.participation.sessions import ARRIVALS
from tests.studyapp.annotator_base import AnnotatorTestCase
from tests.studyapp.base import TOY_CONFIG, make_toy_study

PROLIFIC_REDIRECT = "https://app.prolific.com/submissions/complete?cc={code}"
AGREE = {"agree": "on"}


class RequirePlatformIdConfigTestCase(SimpleTestCase):
    def test_platform_studies_require_an_id_by_default(self) -> None:
        def required(**keys) -> bool:
            return parse_config({**TOY_CONFIG, **keys}).require_platform_id

        self.assertFalse(required())  # no platform named: anonymous links work
        self.assertTrue(required(redirect_url=PROLIFIC_REDIRECT))
        self.assertTrue(required(redirect_url="https://www.mturk.com/mturk/externalSubmit?c={code}"))
        self.assertFalse(required(redirect_url="https://survey.example.org/done?c={code}"))
        self.assertFalse(required(redirect_url=PROLIFIC_REDIRECT, require_platform_id=False))  # the config decides
        self.assertTrue(required(require_platform_id=True))
        for url, platform in [
            ("https://app.prolific.co/submissions/complete?cc=X", True),
            ("https://workersandbox.mturk.com/x", True),
            ("https://prolific.com.evil.example/x", False),
            ("https://notprolific.com/x", False),
            ("", False),
        ]:
            with self.subTest(url=url):
                self.assertIs(platform_study(url), platform)

    def test_a_non_boolean_is_refused(self) -> None:
        with self.assertRaisesRegex(Exception, 'require_platform_id must be true or false, got "yes"'):
            parse_config({**TOY_CONFIG, "require_platform_id": "yes"})


class ArrivalGuardsTestCase(AnnotatorTestCase):
    def arrive(self, client, address: str = "203.0.113.7", **params):
        return client.get(self.entry(**params), REMOTE_ADDR=address)

    def agree(self, client):
        return client.post(self.url("study_consent"), {**AGREE, "version": self.study.consent_version})

    # -- a platform id ------------------------------------------------------------------------------

    def test_a_study_requiring_an_id_refuses_an_anonymous_link_with_a_clear_page(self) -> None:
        self.study.require_platform_id = True
        self.study.save()
        client = self.fresh_client()
        response = self.arrive(client)
        self.assertContains(response, "Please open the study from your platform", status_code=403)
        self.assertContains(response, "does not carry your participant id", status_code=403)
        self.assertNotIn(str(self.study.pk), client.session.get(ARRIVALS, {}))
        self.assertRedirects(self.agree(client), self.url("study_entry"), fetch_redirect_response=False)
        self.assertEqual(Annotator.objects.count(), 2)  # alice and bob only
        response = self.arrive(client, PROLIFIC_PID="carol", STUDY_ID="toy", SESSION_ID="s-carol")
        self.assertRedirects(response, self.url("study_consent"), fetch_redirect_response=False)
        self.agree(client)
        self.assertTrue(Annotator.objects.filter(external_id="carol").exists())

    def test_a_pending_anonymous_arrival_is_refused_at_consent_once_the_study_requires_an_id(self) -> None:
        client = self.fresh_client()
        self.arrive(client)  # before staff switched the requirement on
        self.study.require_platform_id = True
        self.study.save()
        self.assertContains(self.agree(client), "Please open the study from your platform", status_code=403)
        self.assertEqual(Annotator.objects.count(), 2)

    def test_seven_scripted_clients_without_an_id_cannot_fill_a_study_requiring_ids(self) -> None:
        study = make_toy_study("Prolific study", redirect_url=PROLIFIC_REDIRECT, completion_code="DONE")
        self.assertTrue(study.require_platform_id)
        self.slug = study.slug
        for n in range(7):
            client = self.fresh_client()
            self.assertEqual(self.arrive(client, address=f"198.51.100.{n}").status_code, 403)
            self.agree(client)
        self.assertFalse(Annotator.objects.filter(study=study).exists())
        self.assertEqual(allocation.capacity(study).newcomers, 6)  # all six places still free

    # -- newcomers per client -----------------------------------------------------------------------

    @override_settings(STUDYAPP_ARRIVALS_PER_CLIENT=3, STUDYAPP_ARRIVALS_WINDOW_SECONDS=600)
    def test_too_many_newcomers_from_one_client_get_a_friendly_429_and_nothing_is_stored(self) -> None:
        for n in range(3):
            client = self.fresh_client()
            self.assertRedirects(self.arrive(client, PROLIFIC_PID=f"p{n}"), self.url("study_consent"), fetch_redirect_response=False)
        client = self.fresh_client()
        response = self.arrive(client, PROLIFIC_PID="p3")
        self.assertContains(response, "Please try again in a few minutes", status_code=429)
        self.assertContains(response, "Please open the link again in 10 minutes. Nothing was recorded.", status_code=429)
        self.assertEqual(int(response["Retry-After"]), 600)
        self.assertNotIn(str(self.study.pk), client.session.get(ARRIVALS, {}))
        self.assertRedirects(self.agree(client), self.url("study_entry"), fetch_redirect_response=False)
        self.assertFalse(Annotator.objects.filter(external_id="p3").exists())
        # another client, a returning participant and the same browser reloading its link are not held up
        other = self.fresh_client()
        self.assertRedirects(self.arrive(other, "192.0.2.1", PROLIFIC_PID="p4"), self.url("study_consent"), fetch_redirect_response=False)
        self.assertRedirects(self.arrive(self.client, PROLIFIC_PID="alice"), self.url("study_next_item"), fetch_redirect_response=False)
        with mock.patch("time.time", return_value=time.time() + 601):  # the window has passed
            self.assertRedirects(self.arrive(client, PROLIFIC_PID="p3"), self.url("study_consent"), fetch_redirect_response=False)

    @override_settings(STUDYAPP_ARRIVALS_PER_CLIENT=2)
    def test_reloading_the_link_before_consent_is_one_arrival(self) -> None:
        client = self.fresh_client()
        for _ in range(5):
            self.assertEqual(self.arrive(client).status_code, 302)
        key = client.session[ARRIVALS][str(self.study.pk)]["key"]
        self.assertEqual(self.arrive(self.fresh_client()).status_code, 302)
        self.assertEqual(self.arrive(self.fresh_client()).status_code, 429)
        self.assertEqual(client.session[ARRIVALS][str(self.study.pk)]["key"], key)

    def test_the_default_limit_lets_a_busy_network_through_but_not_a_flood(self) -> None:
        # One client (one address) arriving as fast as it can on an anonymous link, with the default settings.
        study = make_toy_study("Open study", items_per_annotator=1, annotators_per_presentation=3)
        self.slug = study.slug
        per_client = settings.STUDYAPP_ARRIVALS_PER_CLIENT
        room = allocation.capacity(study).newcomers
        self.assertGreater(room, per_client)
        admitted = refused = 0
        for _ in range(per_client + 3):
            client = self.fresh_client()
            response = self.arrive(client)
            if response.status_code == 429:
                refused += 1
                continue
            self.assertEqual(self.agree(client).status_code, 302)
            admitted += 1
        self.assertEqual((admitted, refused), (per_client, 3))
        self.assertEqual(Annotator.objects.filter(study=study).count(), per_client)
        self.assertTrue(allocation.can_admit(study))  # the study is not full: people from elsewhere get in

    @override_settings(STUDYAPP_ARRIVALS_PER_CLIENT=0)
    def test_a_limit_of_zero_turns_the_check_off(self) -> None:
        for _ in range(25):  # past the default of 20
            self.assertEqual(self.arrive(self.fresh_client()).status_code, 302)

    # -- one arrival, one annotator -----------------------------------------------------------------

    def test_a_copied_pending_cookie_posted_again_and_again_makes_one_annotator(self) -> None:
        client = self.fresh_client()
        self.arrive(client)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        for _ in range(5):
            replay = self.fresh_client()
            replay.cookies[settings.SESSION_COOKIE_NAME] = cookie
            self.assertEqual(self.agree(replay).status_code, 302)
        self.assertEqual(Annotator.objects.filter(external_id="").count(), 1)
        self.assertEqual(Annotator.objects.get(external_id="").arrival_key, client.session[ARRIVALS][str(self.study.pk)]["key"])

    def test_each_new_arrival_gets_its_own_key(self) -> None:
        keys = set()
        for _ in range(3):
            client = self.fresh_client()
            self.arrive(client)
            keys.add(client.session[ARRIVALS][str(self.study.pk)]["key"])
            self.agree(client)
        self.assertEqual(len(keys), 3)
        self.assertEqual(Annotator.objects.filter(external_id="").count(), 3)


class ClientNetworkTestCase(SimpleTestCase):
    def test_ipv6_clients_are_counted_per_64_network(self) -> None:
        self.assertEqual(throttle.client_network("203.0.113.9"), "203.0.113.9")
        self.assertEqual(throttle.client_network("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64")
        self.assertEqual(throttle.client_network("2001:db8:1:2:ffff::9"), throttle.client_network("2001:db8:1:2::1"))
        self.assertNotEqual(throttle.client_network("2001:db8:1:3::1"), throttle.client_network("2001:db8:1:2::1"))
        self.assertEqual(throttle.client_network("::ffff:198.51.100.4"), "198.51.100.4")
        self.assertEqual(throttle.client_network("unknown"), "unknown")
