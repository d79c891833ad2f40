"""The registered platforms, by key; everything that serves every platform reads them from here."""

from __future__ import annotations

from django.utils.translation import gettext, pgettext

from studyapp.services.platforms.base import Platform

REGISTRY: dict[str, Platform] = {}


def register(platform: Platform) -> Platform:
    """Add ``platform``; its key and link parameters must be new (one parameter, one platform)."""
    if platform.key in REGISTRY:
        raise ValueError(f"platform {platform.key!r} registered twice")
    if len(platform.key) > 10 or platform.key != platform.key.strip().lower():
        raise ValueError(f"platform key {platform.key!r} must be lower case, at most 10 characters (Annotator.platform)")
    if platform.id_param and platform.id_param not in platform.params:
        raise ValueError(f"platform {platform.key!r}: id_param {platform.id_param!r} is not one of its params")
    if platform.session_param and platform.session_param not in platform.params:
        raise ValueError(f"platform {platform.key!r}: session_param {platform.session_param!r} is not one of its params")
    taken = set(link_params()) & set(platform.params)
    if taken:
        # imported here, not at start: docs/contributing.md#lazy-evaluation-imports
        from evaluation.wording import named

        raise ValueError(
            f"platform {platform.key!r}: link {named('parameter', sorted(taken))} {'belongs' if len(taken) == 1 else 'belong'} to another platform"
        )
    if platform.key and not (platform.name and platform.id_param):
        raise ValueError(f"platform {platform.key!r} needs a name and an id_param")
    REGISTRY[platform.key] = platform
    return platform


def unregister(key: str) -> None:
    """Remove a platform (tests registering their own)."""
    del REGISTRY[key]


def by_key(key: str) -> Platform:
    """The platform an annotator's ``platform`` names; an unknown key (a platform removed since) is anonymous."""
    return REGISTRY.get(key) or REGISTRY[""]


def choices() -> list[tuple[str, str]]:
    """``(key, label)`` of every platform, for staff forms and filters."""
    return [(p.key, p.label) for p in REGISTRY.values()]


def link_params() -> list[str]:
    """Every parameter a study link may carry, in registration order."""
    return [param for p in REGISTRY.values() for param in p.params]


def form_action_hosts() -> list[str]:
    """Where completion forms may post besides this site (the CSP's ``form-action``)."""
    return [host for p in REGISTRY.values() for host in p.submit_hosts]


def recruiting_hosts() -> list[str]:
    """Hosts of a ``redirect_url`` that say a study recruits on a platform."""
    return [host for p in REGISTRY.values() for host in p.recruiting_hosts]


def names_text() -> str:
    """The named platforms for a participant's text: "Prolific or MTurk"."""
    names = [p.name for p in REGISTRY.values() if p.name]
    if len(names) == 1:
        return names[0]
    # In the active language (participant pages speak their study's): "Prolific 或 MTurk".
    return gettext("%(names)s or %(last)s") % {"names": pgettext("list separator", ", ").join(names[:-1]), "last": names[-1]}
