"""Which annotator a browser session is: the session protocol of the annotator pages.

The browser session holds, per study, the annotator's secret token (:data:`TOKENS`) and, before
consent, the platform parameters of a newcomer (:data:`ARRIVALS`, a pending arrival: nothing is
stored in the database until they consent), with the random key of that arrival. Like Django's
``login()``, binding a new identity to a browser cycles the session key, so an id planted before
(session fixation) is worthless.
"""

from __future__ import annotations

import secrets
from dataclasses import replace

from django.db.models import QuerySet
from django.http import HttpRequest

from studyapp.compiled_queries import compiled
from studyapp.models import Annotator, Study
from studyapp.services.participation import flow
from studyapp.services.platforms.base import Platform
from studyapp.services.platforms.registry import REGISTRY

TOKENS = "studyapp.tokens"  # session: {study id: annotator token}
ARRIVALS = "studyapp.arrivals"  # session: {study id: platform parameters of a newcomer who has not consented yet}


_RESOLVED = "_studyapp_annotators"  # request attribute: {study id: the session's annotator or None}, read once per request
_STUDIES = "_studyapp_studies"  # request attribute: {slug: the study or None}, read once per request


def _resolved(request: HttpRequest) -> dict[int, Annotator | None]:
    if not hasattr(request, _RESOLVED):
        setattr(request, _RESOLVED, {})
    return getattr(request, _RESOLVED)


def _annotators_query(*tokens: str) -> QuerySet[Annotator]:
    return Annotator.objects.select_related("study").filter(token__in=tokens).order_by()


def _study_query(slug: str) -> QuerySet[Study]:
    return Study.objects.filter(slug=slug).order_by()


def resolve(request: HttpRequest, slug: str) -> tuple[Study | None, Annotator | None]:
    """The study of ``slug`` and this session's annotator in it, in one query when the session holds a token.

    The tokens are unique, so the query looks up the session's annotators by token alone (the study
    comes with them) and the slug is compared here. Both queries run on every annotator request, so
    their SQL is compiled once per connection (:mod:`~studyapp.compiled_queries`). Asked again in
    the same request (the framing middleware after the view), it answers from what the request read:
    the study as read, the annotator as :func:`session_annotator` knows it now (after a bind or unbind).
    """
    studies = request.__dict__.setdefault(_STUDIES, {})
    if slug in studies:
        study = studies[slug]
        return study, (session_annotator(request, study) if study is not None else None)
    study, annotator = _read(request, slug)
    studies[slug] = study
    return study, annotator


def _read(request: HttpRequest, slug: str) -> tuple[Study | None, Annotator | None]:
    tokens = request.session.get(TOKENS, {})
    if tokens:
        values = list(tokens.values())
        placeholders = [f"token-{i}" for i in range(len(values))]
        for annotator in compiled(("annotators", len(values)), _annotators_query, placeholders).fetch(values):
            if annotator.study.slug == slug and tokens.get(str(annotator.study_id)) == annotator.token:
                _resolved(request)[annotator.study_id] = annotator
                return annotator.study, annotator
    study = next(iter(compiled("study", _study_query, ["slug"]).fetch([slug])), None)
    if study is not None:
        _resolved(request)[study.pk] = None
    return study, None


def session_annotator(request: HttpRequest, study: Study) -> Annotator | None:
    """The annotator of ``study`` this browser session is bound to, if any (read once per request)."""
    known = _resolved(request)
    if study.pk not in known:
        known[study.pk] = flow.by_token(study, request.session.get(TOKENS, {}).get(str(study.pk), ""))
    return known[study.pk]


def bind(request: HttpRequest, study: Study, annotator: Annotator) -> None:
    """Make this session ``annotator``'s for ``study`` (new key for a new identity); the pending arrival is done."""
    tokens = dict(request.session.get(TOKENS, {}))
    if tokens.get(str(study.pk)) != annotator.token:
        request.session.cycle_key()
        tokens[str(study.pk)] = annotator.token
        request.session[TOKENS] = tokens
    # The caller's object answers later questions in this request (the framing middleware's platform): it
    # is the one the caller changes afterwards, so nothing is read again.
    _resolved(request)[study.pk] = annotator
    arrivals = dict(request.session.get(ARRIVALS, {}))
    if arrivals.pop(str(study.pk), None) is not None:
        request.session[ARRIVALS] = arrivals


def unbind(request: HttpRequest, study: Study) -> None:
    """Forget this session's annotator of ``study`` (another participant uses the same browser)."""
    tokens = dict(request.session.get(TOKENS, {}))
    if tokens.pop(str(study.pk), None) is not None:
        request.session[TOKENS] = tokens
    _resolved(request)[study.pk] = None


def pending(request: HttpRequest, study: Study) -> flow.Arrival | None:
    """The newcomer's arrival waiting for consent in this session, if any."""
    data = request.session.get(ARRIVALS, {}).get(str(study.pk))
    return None if data is None else flow.Arrival.from_session(data)


def set_pending(request: HttpRequest, study: Study, arrival: flow.Arrival) -> flow.Arrival:
    """Remember ``arrival`` until the newcomer consents (nothing is stored in the database before).

    The arrival gets a random key, kept while the same participant reloads the link: consenting
    registers the annotator under it, so one arrival makes one annotator however often (or however
    concurrently) its consent is posted, even with a copied cookie.
    """
    before = pending(request, study)
    key = before.key if arrival.same_participant(before) and before.key else secrets.token_urlsafe(16)
    arrival = replace(arrival, key=key)
    request.session[ARRIVALS] = {**request.session.get(ARRIVALS, {}), str(study.pk): arrival.to_session()}
    return arrival


def platform_of(request: HttpRequest, slug: str, *, from_session: bool = True) -> Platform | None:
    """The platform of this request's participant in study ``slug`` (None: anonymous or unknown): the one whose
    parameters the link carries (a preview's too), else, if ``from_session``, the platform of the session's
    annotator or pending newcomer (read with :func:`resolve`, once per request)."""
    if request.GET:  # most requests carry no parameters at all
        for platform in REGISTRY.values():
            if platform.key and platform.in_link(request.GET):
                return platform
    if not from_session or not hasattr(request, "session"):
        return None
    study, annotator = resolve(request, slug)
    if study is None:
        return None
    key = annotator.platform if annotator is not None else getattr(pending(request, study), "platform", "")
    return REGISTRY.get(key) if key else None
