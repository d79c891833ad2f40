"""Which annotator a browser session is: the session protocol of the annotator pages.

The browser session holds, per study, the annotator's secret token (:data:`TOKENS`) and, before
consent, the platform parameters of a newcomer (:data:`ARRIVALS`, a pending arrival: nothing is
stored in the database until they consent). Like Django's ``login()``, binding a new identity to a
browser cycles the session key, so an id planted before (session fixation) is worthless.
"""

from __future__ import annotations

from django.http import HttpRequest

from studyapp.models import Annotator, Study
from studyapp.services import flow

TOKENS = "studyapp.tokens"  # session: {study id: annotator token}
ARRIVALS = "studyapp.arrivals"  # session: {study id: platform parameters of a newcomer who has not consented yet}


def session_annotator(request: HttpRequest, study: Study) -> Annotator | None:
    """The annotator of ``study`` this browser session is bound to, if any."""
    return flow.by_token(study, request.session.get(TOKENS, {}).get(str(study.pk), ""))


def bind(request: HttpRequest, study: Study, annotator: Annotator) -> None:
    """Make this session ``annotator``'s for ``study`` (new key for a new identity); the pending arrival is done."""
    tokens = dict(request.session.get(TOKENS, {}))
    if tokens.get(str(study.pk)) != annotator.token:
        request.session.cycle_key()
        tokens[str(study.pk)] = annotator.token
        request.session[TOKENS] = tokens
    arrivals = dict(request.session.get(ARRIVALS, {}))
    if arrivals.pop(str(study.pk), None) is not None:
        request.session[ARRIVALS] = arrivals


def unbind(request: HttpRequest, study: Study) -> None:
    """Forget this session's annotator of ``study`` (another participant uses the same browser)."""
    tokens = dict(request.session.get(TOKENS, {}))
    if tokens.pop(str(study.pk), None) is not None:
        request.session[TOKENS] = tokens


def pending(request: HttpRequest, study: Study) -> flow.Arrival | None:
    """The newcomer's arrival waiting for consent in this session, if any."""
    data = request.session.get(ARRIVALS, {}).get(str(study.pk))
    return None if data is None else flow.Arrival.from_session(data)


def set_pending(request: HttpRequest, study: Study, arrival: flow.Arrival) -> None:
    """Remember ``arrival`` until the newcomer consents (nothing is stored in the database before)."""
    request.session[ARRIVALS] = {**request.session.get(ARRIVALS, {}), str(study.pk): arrival.to_session()}
