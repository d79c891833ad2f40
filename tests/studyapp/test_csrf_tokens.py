"""CSRF strings made in a few calls (studyapp/csrf_tokens.py): the same tokens as Django's for the same mask,
uniform random masks, and pages whose forms post with them."""

from __future__ import annotations

import re
import secrets
import warnings
from collections import Counter
from unittest import mock

from django.middleware import csrf

from studyapp import csrf_tokens
from tests.studyapp.annotator_base import AnnotatorTestCase


def _secret() -> str:
    return "".join(secrets.choice(csrf_tokens.ALLOWED) for _ in range(csrf_tokens.LENGTH))


class CsrfStringTests(AnnotatorTestCase):
    def test_installed_in_djangos_place(self) -> None:
        self.assertEqual(csrf_tokens.django_problem(), "")
        self.assertIs(csrf._get_new_csrf_string, csrf_tokens.new_csrf_string)
        self.assertIs(csrf._mask_cipher_secret, csrf_tokens.mask_cipher_secret)
        self.assertIs(csrf._unmask_cipher_token, csrf_tokens.unmask_cipher_token)
        self.assertIsNot(csrf_tokens.DJANGO_MASK, csrf_tokens.mask_cipher_secret)

    def test_the_same_token_as_djangos_for_the_same_mask(self) -> None:
        for _ in range(200):
            secret, mask = _secret(), _secret()
            with mock.patch.object(csrf, "_get_new_csrf_string", lambda m=mask: m):  # what Django's own draws
                expected = csrf_tokens.DJANGO_MASK(secret)
            with mock.patch.object(csrf_tokens, "new_csrf_string", lambda m=mask: m):
                got = csrf_tokens.mask_cipher_secret(secret)
            self.assertEqual(got, expected)
            self.assertEqual(csrf_tokens.unmask_cipher_token(got), secret)
            self.assertEqual(csrf_tokens.DJANGO_UNMASK(got), secret)
            self.assertEqual(csrf_tokens.unmask_cipher_token(mask + secret), csrf_tokens.DJANGO_UNMASK(mask + secret))
        with self.assertRaises(ValueError):
            csrf_tokens.DJANGO_MASK("-" * 32)
        with self.assertRaises(ValueError):
            csrf_tokens.mask_cipher_secret("-" * 32)
        for bad in ("-" * 64, "a" * 63 + "-"):
            for unmask in (csrf_tokens.DJANGO_UNMASK, csrf_tokens.unmask_cipher_token):
                with self.assertRaises(ValueError):
                    unmask(bad)
        for short in ("a" * 40, "Zz9" * 5):  # Django checks the length before; the same answer anyway
            self.assertEqual(csrf_tokens.unmask_cipher_token(short), csrf_tokens.DJANGO_UNMASK(short))
        self.assertEqual(csrf_tokens.unmask_cipher_token(""), csrf_tokens.DJANGO_UNMASK(""))  # nothing in, nothing out

    def test_strings_are_uniform_over_the_allowed_characters(self) -> None:
        drawn = [csrf_tokens.new_csrf_string() for _ in range(4000)]
        self.assertEqual({len(s) for s in drawn}, {32})
        self.assertEqual(len(set(drawn)), len(drawn))
        counts = Counter("".join(drawn))
        self.assertEqual(set(counts), set(csrf_tokens.ALLOWED))
        expected = 4000 * 32 / 62  # 2,065 per character, standard deviation about 45
        self.assertLess(max(abs(c - expected) for c in counts.values()), 0.15 * expected)
        first = Counter(s[0] for s in drawn)  # every position uniform too (4000 / 62 = 65 each)
        self.assertLess(max(first.values()), 130)

    def test_a_changed_django_keeps_its_own(self) -> None:
        with (
            mock.patch.object(csrf, "_get_new_csrf_string", lambda: "x"),
            mock.patch.object(csrf, "CSRF_SECRET_LENGTH", 33),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            self.assertIn("secret length", csrf_tokens.django_problem())
            self.assertFalse(csrf_tokens.install())
            self.assertEqual(csrf._get_new_csrf_string(), "x")  # left as it was
        self.assertIn("Django's own CSRF strings are used", str(caught[0].message))
        self.assertTrue(csrf_tokens.install())  # already in place

    def test_a_form_posts_with_the_token_of_its_page(self) -> None:
        client = self.fresh_client(enforce_csrf_checks=True)
        client.get(self.entry(PROLIFIC_PID="carol", SESSION_ID="s-carol"))
        page = client.get(self.url("study_consent")).content.decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([A-Za-z0-9]{64})"', page).group(1)
        self.assertEqual(csrf._unmask_cipher_token(token), client.cookies["csrftoken"].value)
        response = client.post(self.url("study_consent"), {"agree": "on", "version": "1", "csrfmiddlewaretoken": token})
        self.assertEqual(response.status_code, 302)
        self.assertTrue(response["Location"].endswith("/instructions/"))
