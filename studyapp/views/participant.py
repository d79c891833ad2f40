"""What every annotator page shares: resolving the study (:func:`study_page`), the annotator's step
(:func:`annotator_at`), the friendly message pages and the addresses of the steps.

The browser session holds the annotator's secret token per study (the per-annotator secret): an
assignment id of someone else answers 404, exactly like an id that does not exist. Annotator pages
are never cached (``never_cache``), so back/forward asks the server again.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache

from studyapp.models import Annotator, Study
from studyapp.services import platforms
from studyapp.services.participation import flow, sessions
from studyapp.services.participation.completion import screenout_link
from studyapp.services.quality.stated import exclusion_reason, exclusion_rule
from studyapp.views.site import wants_json

STEP_URLS = {
    flow.CONSENT: "study_consent",
    flow.INSTRUCTIONS: "study_instructions",
    flow.PRACTICE: "study_practice",
    flow.COMPREHENSION: "study_comprehension",
    flow.ITEMS: "study_next_item",
    flow.DONE: "study_done",
}

# -- messages and steps ----------------------------------------------------------------------------


def message_page(request: HttpRequest, study: Study | None, kind: str, *, status: int = 200, **extra) -> HttpResponse:
    """A friendly page for every state in which the annotator cannot go on (or has to go back).

    Its title and text are the template ``messages/<kind>.html``; this adds what the page needs to
    know: the screen-out code and Prolific's redirect of a full study, the reason of an exclusion.
    """
    context = {"study": study, "kind": kind, "platform_names": platforms.names_text(), **extra}
    if kind == "full":
        _exit_with_screenout(request, study, context)
    elif kind == "excluded":
        annotator = sessions.session_annotator(request, study)
        rule = exclusion_rule(annotator) if annotator is not None else ""
        context.update(rule=rule, reason=exclusion_reason(study, rule))
        if study.excluded_exit == Study.ExcludedExit.SCREENOUT:
            _exit_with_screenout(request, study, context)
    return render(request, f"studyapp/annotator/messages/{kind}.html", context, status=status)


def _exit_with_screenout(request: HttpRequest, study: Study, context: dict) -> None:
    """The screen-out code, and the platform's own redirect (Prolific's for a Prolific participant; an MTurk worker returns the HIT on MTurk)."""
    context["code"] = study.screenout_code
    platform = sessions.platform_of(request, study.slug) or platforms.ANONYMOUS
    link = screenout_link(study, platform.key)
    if link:
        context.update(link=link, platform_name=platform.name)


def to_step(request: HttpRequest, study: Study, step: str) -> HttpResponse:
    """Where ``step`` is shown: the message of a terminal step, else a redirect to its page."""
    return message_page(request, study, step) if step in flow.TERMINAL else go_to(study, step)


def step_url(study: Study, step: str) -> str:
    """The page of ``step``; terminal steps are told on the entry page."""
    return reverse(STEP_URLS.get(step, "study_entry"), args=[study.slug])


def go_to(study: Study, step: str) -> HttpResponse:
    return redirect(step_url(study, step))


def item_url(study: Study, pk: int) -> str:
    return reverse("study_item", args=[study.slug, pk])


def study_page(view: Callable) -> Callable:
    """Resolve the slug (friendly 404 for an unknown one), speak the study's language and never cache an annotator page.

    The study and the session's annotator in it are read together (one query), once per request.
    """

    @wraps(view)
    @never_cache
    def wrapper(request: HttpRequest, slug: str, *args, **kwargs) -> HttpResponse:
        study, _ = sessions.resolve(request, slug)
        if study is None:
            with translation.override(translation.get_language_from_request(request)):
                if wants_json(request):
                    return JsonResponse({"error": "unknown", "message": gettext("This study does not exist.")}, status=404)
                return message_page(request, None, "unknown", status=404)
        with translation.override(study.language):  # every text of the page in the study's language
            response = view(request, study, *args, **kwargs)
        response.headers.setdefault("Content-Language", study.language)
        return response

    return wrapper


def annotator_at(*steps: str) -> Callable:
    """For views under :func:`study_page`: pass the session's annotator when they stand at one of ``steps``.

    Without a session annotator the page says the session has ended (403); an annotator standing
    elsewhere is taken where they belong. The view is called as ``view(request, study, annotator, ...)``.
    """

    def decorate(view: Callable) -> Callable:
        @wraps(view)
        def wrapper(request: HttpRequest, study: Study, *args, **kwargs) -> HttpResponse:
            annotator = sessions.session_annotator(request, study)
            if annotator is None:
                return message_page(request, study, "expired", status=403)
            step = flow.next_step(annotator)
            if step not in steps:
                return to_step(request, study, step)
            return view(request, study, annotator, *args, **kwargs)

        return wrapper

    return decorate


def render_page(request: HttpRequest, template: str, study: Study, annotator: Annotator | None, **context) -> HttpResponse:
    """Render an annotator page; pages of an active annotator send heartbeats (item pages name their item)."""
    heartbeat = annotator is not None and annotator.status == Annotator.Status.ACTIVE
    status = context.pop("status", 200)
    context = {
        "study": study,
        "annotator": annotator,
        "heartbeat_url": reverse("study_heartbeat", args=[study.slug]) if heartbeat else "",
        "heartbeat_seconds": settings.STUDYAPP_HEARTBEAT_SECONDS,
        **context,
    }
    return render(request, template, context, status=status)
