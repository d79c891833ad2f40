"""What would keep a study from working for its participants, said before recruiting (the set-up page
and ``create_study`` show these warnings):

- the recruitment link: participants open it from their own machines (so not a local address), and
  MTurk shows an ExternalQuestion only over HTTPS (browsers also warn about plain-http forms);
- the consent text: the default one names a contact placeholder the researchers must fill in.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from django.conf import settings
from django.utils import translation

from studyapp.models.study_settings import CONTACT_PLACEHOLDER

LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_local(host: str) -> bool:
    """True for a loopback, unspecified, private or link-local address, ``localhost`` and ``*.local``."""
    host = host.strip("[]").lower()
    if host in LOCAL_NAMES or host.endswith((".localhost", ".local")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified or address.is_private or address.is_link_local


def link_warnings(url: str) -> list[str]:
    """Why participants on a platform could not use ``url`` (empty when it is a public https:// address)."""
    parts = urlsplit(url)
    warnings = []
    if is_local(parts.hostname or ""):
        warnings.append(
            f"{parts.hostname} is a local address: participants on other machines cannot open this link. Serve the study on "
            "a public host name and set STUDYAPP_BASE_URL to it (README: Running a real study)."
        )
    if parts.scheme != "https":
        warnings.append(
            "The link is not HTTPS: MTurk refuses an http:// ExternalQuestion URL, and browsers warn participants about "
            "plain-http forms. Put the study behind a TLS proxy (README: Running a real study)."
        )
    return warnings


def consent_warnings(consent_text: str) -> list[str]:
    """A warning when the consent text still holds the default's contact placeholder (in any language)."""
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            placeholder = str(CONTACT_PLACEHOLDER)
        if placeholder in consent_text:
            return [
                f"The consent text still says {placeholder!r}: put the name and e-mail address participants should write to "
                "there (consent_text in the study's configuration, or the study in the admin) before recruiting."
            ]
    return []
