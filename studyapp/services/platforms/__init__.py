"""Recruitment platforms: one adapter per platform a participant can arrive from.

An adapter (:class:`.base.Platform`) owns everything that differs between platforms: the parameters
of its study link and which of them names the participant (identity) and their session on the
platform (the proof that lets a participant resume in another browser), how a finished or refused
participant goes back (redirect, submit form or code), the hosts its completion form posts to (the
Content-Security-Policy's ``form-action``), the hosts of a ``redirect_url`` that say a study
recruits there, and its name in the participant's texts. :mod:`.registry` holds them; the link's
form, the flow, the completion page, the CSP and the configuration read only the registry. Working with a
platform on one study (set-up page, drafts, review, bonuses) is :mod:`studyapp.services.review`, which
only calls the adapters.

A new platform is one module here with a :class:`.base.Platform` subclass, registered at the end of
this file (docs/contributing.md#a-recruitment-platform).
"""

from studyapp.services.platforms.anonymous import ANONYMOUS
from studyapp.services.platforms.base import Arrival, Completion, Platform
from studyapp.services.platforms.mturk import MTURK
from studyapp.services.platforms.prolific import PROLIFIC
from studyapp.services.platforms.registry import (
    REGISTRY,
    by_key,
    choices,
    form_action_hosts,
    link_params,
    names_text,
    recruiting_hosts,
    register,
    unregister,
)

for _platform in (ANONYMOUS, PROLIFIC, MTURK):
    register(_platform)

__all__ = [
    "ANONYMOUS",
    "MTURK",
    "PROLIFIC",
    "REGISTRY",
    "Arrival",
    "Completion",
    "Platform",
    "by_key",
    "choices",
    "form_action_hosts",
    "link_params",
    "names_text",
    "recruiting_hosts",
    "register",
    "unregister",
]
