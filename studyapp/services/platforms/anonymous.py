"""The anonymous link (a lab session, a test): no parameters, no platform; the code only."""

from __future__ import annotations

from studyapp.services.platforms.base import Platform


class Anonymous(Platform):
    key = ""
    name = ""
    label = "none (anonymous link)"


ANONYMOUS = Anonymous()
