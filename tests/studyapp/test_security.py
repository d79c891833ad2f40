"""The perimeter: production settings from the environment (``check --deploy`` clean), a strict
Content-Security-Policy, throttled staff sign-in, password validators, and no demo staff password
in production."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from unittest import mock

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import RequestFactory, SimpleTestCase, TestCase, override_settings
from django.urls import reverse

from studyapp.middleware import POLICY
from studyapp.services.access import throttle
from tests.studyapp.test_settings import DEPLOYMENT_VARIABLES, default_settings

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {"STUDYAPP_PRODUCTION": "1", "DJANGO_ALLOWED_HOSTS": "study.example.org"}
PRODUCTION_VARIABLES = (
    *DEPLOYMENT_VARIABLES,
    "STUDYAPP_PRODUCTION",
    "DJANGO_SSL_REDIRECT",
    "DJANGO_HSTS_SECONDS",
    "DJANGO_HSTS_SUBDOMAINS",
    "DJANGO_HSTS_PRELOAD",
    "DJANGO_PROXY_SSL_HEADER",
    "STUDYAPP_PROXY_HOPS",
)


def check_deploy(**env: str) -> subprocess.CompletedProcess:
    """``manage.py check --deploy --fail-level WARNING`` in a fresh process with ``env`` set."""
    clean = {k: v for k, v in os.environ.items() if k not in PRODUCTION_VARIABLES}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**clean, "DJANGO_SECRET_KEY_FILE": str(Path(tmp) / "key"), **env}
        command = [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"]
        return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


class ProductionSettingsTestCase(SimpleTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="studyapp-security-"))
        self.key = self.tmp / "key"

    def test_production_turns_on_https_only_cookies_hsts_and_the_proxy_header(self) -> None:
        s = default_settings(self.key, **PRODUCTION)
        self.assertIs(s["SECURE_SSL_REDIRECT"], True)
        self.assertIs(s["SESSION_COOKIE_SECURE"], True)
        self.assertIs(s["CSRF_COOKIE_SECURE"], True)
        self.assertEqual(s["SECURE_HSTS_SECONDS"], 31536000)
        self.assertEqual(s["SECURE_PROXY_SSL_HEADER"], ("HTTP_X_FORWARDED_PROTO", "https"))
        self.assertEqual(s["STUDYAPP_PROXY_HOPS"], 1)
        self.assertIs(s["STUDYAPP_DEMO_STAFF"], False)
        local = default_settings(self.key)  # `make run`: plain HTTP on localhost
        self.assertEqual(
            (local["SECURE_SSL_REDIRECT"], local["SESSION_COOKIE_SECURE"], local["SECURE_HSTS_SECONDS"], local["SECURE_PROXY_SSL_HEADER"]),
            (False, False, 0, None),
        )
        self.assertIs(local["STUDYAPP_DEMO_STAFF"], True)
        tuned = default_settings(self.key, **PRODUCTION, DJANGO_HSTS_SECONDS="3600", DJANGO_PROXY_SSL_HEADER="", DJANGO_SSL_REDIRECT="0")
        self.assertEqual(
            (tuned["SECURE_HSTS_SECONDS"], tuned["SECURE_PROXY_SSL_HEADER"], tuned["SECURE_SSL_REDIRECT"]), (3600, None, False)
        )

    def test_production_refuses_debug_and_missing_hosts(self) -> None:
        with self.assertRaisesRegex(ImproperlyConfigured, "DJANGO_DEBUG must be off"):
            default_settings(self.key, **PRODUCTION, DJANGO_DEBUG="1")
        with self.assertRaisesRegex(ImproperlyConfigured, "needs DJANGO_ALLOWED_HOSTS"):
            default_settings(self.key, STUDYAPP_PRODUCTION="1")

    def test_check_deploy_is_clean_with_production_settings(self) -> None:
        result = check_deploy(**PRODUCTION)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("no issues", result.stdout)
        local = check_deploy()  # without them the same check names what is missing
        self.assertNotEqual(local.returncode, 0)
        for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
            self.assertIn(warning, local.stdout + local.stderr)

    def test_production_check_refuses_a_wildcard_host(self) -> None:
        for hosts in ("*", "study.example.org,*"):
            with self.subTest(hosts):
                result = check_deploy(**{**PRODUCTION, "DJANGO_ALLOWED_HOSTS": hosts})
                self.assertNotEqual(result.returncode, 0)
                self.assertIn("studyapp.E002", result.stdout + result.stderr)
                self.assertIn("DJANGO_ALLOWED_HOSTS contains '*'", result.stdout + result.stderr)
        self.assertEqual(check_deploy(**{**PRODUCTION, "DJANGO_ALLOWED_HOSTS": ".example.org"}).returncode, 0)

    def test_password_validators_are_on(self) -> None:
        for weak in ("12345678901", "password123", "short"):
            with self.subTest(weak), self.assertRaises(ValidationError):
                validate_password(weak)
        validate_password("a long and unusual phrase")


class ContentSecurityPolicyTestCase(TestCase):
    def test_every_page_sends_a_strict_policy(self) -> None:
        self.assertNotIn("unsafe", POLICY)
        for directive in ("default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "object-src 'none'"):
            self.assertIn(directive, POLICY)
        for url in ("/", reverse("admin:login"), "/no-such-page/", reverse("study_entry", args=["no-such-study"])):
            with self.subTest(url):
                self.assertEqual(self.client.get(url)["Content-Security-Policy"], POLICY)

    def test_our_templates_hold_no_inline_script_or_style(self) -> None:
        inline = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle=|\son[a-z]+=|javascript:", re.IGNORECASE)
        templates = sorted((ROOT / "studyapp").rglob("templates/**/*.html"))
        self.assertTrue(templates)
        for path in templates:
            with self.subTest(str(path.relative_to(ROOT))):
                self.assertEqual(inline.findall(path.read_text()), [])


LOGIN_FAILURES = 5


# A fast hasher: each sign-in would otherwise spend a second on PBKDF2 (the throttle is what is tested).
@override_settings(
    STUDYAPP_LOGIN_FAILURES=LOGIN_FAILURES,
    STUDYAPP_LOGIN_WINDOW_SECONDS=900,
    PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
)
class StaffLoginThrottleTestCase(TestCase):
    password = "a long staff passphrase"

    def setUp(self) -> None:
        cache.clear()
        self.addCleanup(cache.clear)
        User = get_user_model()
        User.objects.create_superuser("staff", "", self.password)
        User.objects.create_superuser("other", "", self.password)

    def sign_in(self, username: str, password: str, address: str = "192.0.2.1"):
        return self.client.post(
            reverse("admin:login"), {"username": username, "password": password, "next": "/admin/"}, REMOTE_ADDR=address
        )

    def test_repeated_failures_lock_the_user_name_even_for_the_right_password(self) -> None:
        for _ in range(LOGIN_FAILURES):
            self.assertContains(self.sign_in("staff", "wrong"), "Please enter the correct username and password")
        refused = self.sign_in("staff", self.password)
        self.assertContains(refused, "Too many failed sign-ins. Please wait 15 minutes and try again.")
        self.assertNotIn("_auth_user_id", self.client.session)
        self.assertContains(self.sign_in("STAFF", self.password), "Too many failed sign-ins")  # user names compared case-blind
        self.assertRedirects(self.sign_in("other", self.password, address="192.0.2.9"), "/admin/", fetch_redirect_response=False)
        with mock.patch("time.time", return_value=time.time() + 901):  # the window has passed
            self.assertRedirects(self.sign_in("staff", self.password), "/admin/", fetch_redirect_response=False)

    def test_one_address_trying_many_user_names_is_locked_too(self) -> None:
        for n in range(4 * LOGIN_FAILURES):
            self.sign_in(f"guess-{n}", "wrong", address="198.51.100.7")
        self.assertContains(self.sign_in("staff", self.password, address="198.51.100.7"), "Too many failed sign-ins")
        self.assertRedirects(self.sign_in("staff", self.password, address="198.51.100.8"), "/admin/", fetch_redirect_response=False)

    def test_the_lockout_counts_the_name_as_the_form_reads_it(self) -> None:
        for _ in range(LOGIN_FAILURES):
            self.sign_in("staff", "wrong")
        for variant in ("\uff53taff", "ＳＴＡＦＦ", " Staff", "\u017ftaff"):  # fullwidth s, fullwidth capitals, a space, long s
            with self.subTest(variant):
                self.assertContains(self.sign_in(variant, self.password), "Too many failed sign-ins")
        self.assertNotIn("_auth_user_id", self.client.session)
        self.assertEqual(throttle.login_name("\uff4dember"), "member")

    def test_parallel_attempts_get_no_extra_tries(self) -> None:
        """Twelve attempts at once, each taking a while to check its password: exactly the limit go ahead."""
        start, allowed = threading.Barrier(12), []

        def attempt() -> None:
            start.wait()
            if throttle.login_attempt("staff", "192.0.2.50") == 0:
                time.sleep(0.05)  # the password check (a wrong password: nothing is reset)
                allowed.append(1)

        threads = [threading.Thread(target=attempt) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
        self.assertEqual(len(allowed), LOGIN_FAILURES)
        self.assertContains(self.sign_in("staff", self.password), "Too many failed sign-ins")

    def test_a_success_clears_the_user_names_failures(self) -> None:
        for _ in range(LOGIN_FAILURES - 1):
            self.sign_in("staff", "wrong")
        self.assertRedirects(self.sign_in("staff", self.password), "/admin/", fetch_redirect_response=False)
        self.client.logout()
        for _ in range(LOGIN_FAILURES - 1):
            self.sign_in("staff", "wrong")
        self.assertRedirects(self.sign_in("staff", self.password), "/admin/", fetch_redirect_response=False)


class ClientAddressTestCase(SimpleTestCase):
    def test_the_address_behind_the_configured_number_of_proxies(self) -> None:
        request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.5")
        with override_settings(STUDYAPP_PROXY_HOPS=0):  # no proxy: the header is the client's to forge
            self.assertEqual(throttle.client_address(request.META), "10.0.0.2")
        with override_settings(STUDYAPP_PROXY_HOPS=1):  # one proxy: the address it appended, not the forged one
            self.assertEqual(throttle.client_address(request.META), "203.0.113.5")
        with override_settings(STUDYAPP_PROXY_HOPS=2):
            self.assertEqual(throttle.client_address(request.META), "6.6.6.6")
        with override_settings(STUDYAPP_PROXY_HOPS=3):  # fewer entries than proxies: the direct peer
            self.assertEqual(throttle.client_address(request.META), "10.0.0.2")


class DemoStaffTestCase(TestCase):
    def load(self, *args: str) -> str:
        out = io.StringIO()
        call_command("load_demo", "--no-simulated-study", *args, stdout=out)
        return out.getvalue()

    def test_production_creates_no_demo_staff_and_refuses_a_given_password(self) -> None:
        with override_settings(STUDYAPP_DEMO_STAFF=False):
            with self.assertRaisesRegex(CommandError, "production settings refuse a demo staff password"):
                self.load("--staff-password", "a long and unusual phrase")
            out = self.load()
        self.assertIn("Staff login: none created (production settings)", out)
        self.assertFalse(get_user_model().objects.exists())

    def test_a_weak_demo_password_is_refused(self) -> None:
        with self.assertRaisesRegex(CommandError, "the staff password is too weak: .*too common"):
            self.load("--staff-password", "password123")
        self.assertFalse(get_user_model().objects.exists())
