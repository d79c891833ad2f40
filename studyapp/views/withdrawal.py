"""Withdrawing from a study: the link on every participant page leads here (docs/annotator.md#withdrawing).

GET asks for confirmation; POST erases everything recorded about the session's participant
(services.data.erasure), forgets them in this browser and says what to do on the platform: the
study's ``withdrawal_code`` when it has one, else return the study there.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from studyapp.exceptions import StudyError
from studyapp.models import ErasureLog, Study
from studyapp.services.data.erasure import erase
from studyapp.services.participation import sessions
from studyapp.views.participant import study_page


@study_page
@require_http_methods(["GET", "HEAD", "POST"])
def withdraw(request: HttpRequest, study: Study) -> HttpResponse:
    annotator = sessions.session_annotator(request, study)
    if request.method != "POST":
        return render(request, "studyapp/annotator/withdraw.html", {"study": study, "recorded": annotator is not None})
    erased = False
    if annotator is not None:
        try:
            erase(annotator, source=ErasureLog.Source.WITHDRAWAL)
            erased = True
        except StudyError:  # erased a moment ago (a second tab, a double click): nothing left to do
            erased = True
    sessions.unbind(request, study)
    return render(request, "studyapp/annotator/withdrawn.html", {"study": study, "erased": erased, "code": study.withdrawal_code})
