"""Django's CSRF strings made in a few Python calls instead of about 400 per page with a form.

Every page with ``{% csrf_token %}`` masks the CSRF secret with a fresh random mask (Django's BREACH
defence): ``django.middleware.csrf._get_new_csrf_string`` draws 32 characters one ``secrets.choice`` at
a time (six Python calls each) and ``_mask_cipher_secret`` adds mask and secret character by character
through generators and ``str.index``. That was 6 % of an item page's CPU. :func:`install` puts in
their place functions with the same results:

* :func:`new_csrf_string`: 32 characters, each uniform over the 62 allowed ones and independent, from
  the operating system's generator (``secrets.token_bytes``): a byte below 248 (= 4 x 62) taken
  modulo 62 is uniform; bytes of 248 and above are dropped, as ``secrets.choice``'s own rejection
  sampling drops draws;
* :func:`mask_cipher_secret`: the same token as Django's for the same mask (a look-up table in the
  place of ``str.index``; a character outside the allowed ones raises ``ValueError`` as before);
* :func:`unmask_cipher_token`: the same secret as Django's ``_unmask_cipher_token`` for every token
  (every POST unmasks the token it carries).

Django's functions are private: :func:`install` checks what it replaces (names, parameters, the
alphabet and length) and, when Django differs, leaves Django's own in place with one warning
(:func:`~studyapp.django_internals.step_aside`).
"""

from __future__ import annotations

import inspect
import secrets
import string

from django.middleware import csrf

from studyapp.django_internals import step_aside

ALLOWED = string.ascii_letters + string.digits
LENGTH = 32
_INDEX = {c: i for i, c in enumerate(ALLOWED)}
_LIMIT = 256 - 256 % len(ALLOWED)  # 248: the bytes whose value modulo 62 is uniform
DJANGO_MASK = csrf._mask_cipher_secret  # Django's own (tests compare)
DJANGO_UNMASK = csrf._unmask_cipher_token


def new_csrf_string() -> str:
    """``LENGTH`` characters drawn uniformly and independently from ``ALLOWED`` (the OS's random generator)."""
    drawn = ""
    while len(drawn) < LENGTH:
        drawn += "".join([ALLOWED[b % len(ALLOWED)] for b in secrets.token_bytes(LENGTH + 16) if b < _LIMIT])
    return drawn[:LENGTH]


def mask_cipher_secret(secret: str) -> str:
    """Django's ``_mask_cipher_secret``: a fresh mask, then each secret character shifted by the mask's (mod 62)."""
    mask = new_csrf_string()
    try:
        cipher = "".join([ALLOWED[(_INDEX[x] + _INDEX[y]) % len(ALLOWED)] for x, y in zip(secret, mask)])
    except KeyError:
        raise ValueError("substring not found") from None  # what str.index raised
    return mask + cipher


def unmask_cipher_token(token: str) -> str:
    """Django's ``_unmask_cipher_token``: the second half of ``token`` shifted back by its first half (the mask)."""
    try:
        pairs = zip([_INDEX[x] for x in token[LENGTH:]], [_INDEX[y] for y in token[:LENGTH]])
    except KeyError:
        raise ValueError("substring not found") from None
    return "".join([ALLOWED[x - y] for x, y in pairs])


def django_problem() -> str:
    """What differs in ``django.middleware.csrf`` from what this module replaces ('' when nothing does)."""
    expected = {"_get_new_csrf_string": [], "_mask_cipher_secret": ["secret"], "_unmask_cipher_token": ["token"]}
    for name, parameters in expected.items():
        function = getattr(csrf, name, None)
        if function is None:
            return f"django.middleware.csrf.{name} is missing"
        if list(inspect.signature(function).parameters) != parameters:
            return f"django.middleware.csrf.{name} takes other parameters"
    if getattr(csrf, "CSRF_ALLOWED_CHARS", None) != ALLOWED or getattr(csrf, "CSRF_SECRET_LENGTH", None) != LENGTH:
        return "django.middleware.csrf's alphabet or secret length changed"
    return ""


def install() -> bool:
    """Put this module's three functions in Django's place (once per process; True when done)."""
    if csrf._get_new_csrf_string is new_csrf_string:
        return True
    if step_aside(django_problem(), "Django's own CSRF strings are used", "studyapp/csrf_tokens.py"):
        return False
    csrf._get_new_csrf_string = new_csrf_string
    csrf._mask_cipher_secret = mask_cipher_secret
    csrf._unmask_cipher_token = unmask_cipher_token
    return True
