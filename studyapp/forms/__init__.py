"""Every input of the annotator pages (and the staff sign-in) goes through one of these forms (views never read raw parameters);
the study form of the admin and the staff pages is ``studyapp.forms.study``."""

from __future__ import annotations

import logging
import math
from decimal import Decimal, InvalidOperation

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError
from django.utils.translation import gettext, gettext_lazy

from studyapp.models.annotation import PREFERENCE_MAX, PREFERENCE_MIN
from studyapp.services import platforms
from studyapp.services.access import throttle
from studyapp.services.participation.answers import CLIENT_MS_MAX
from studyapp.services.participation.onboarding import COMPREHENSION
from studyapp.services.platforms import Arrival

logger = logging.getLogger("studyapp.security")


class ArrivalForm(forms.Form):
    """The platform parameters of the study link: those of one registered platform (``services.platforms``), or none (anonymous)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for platform in platforms.REGISTRY.values():
            for param in platform.params:
                self.fields[param] = forms.CharField(required=False, max_length=platform.max_length.get(param, 100))

    def clean(self):
        data = super().clean()
        for platform in platforms.REGISTRY.values():
            for param, problem in platform.check(data, self.data).items():
                self.add_error(param, problem)
        return data

    def problem(self) -> str:
        """What is wrong with the link, in words a participant understands (for the "not valid" page)."""
        for platform in platforms.REGISTRY.values():
            if platform.id_param in self.errors and not self.data.get(platform.id_param):
                return platform.missing_id_text()
        return gettext("The study link has parameters we cannot read.")

    def arrival(self) -> Arrival:
        """Who arrives: a platform's preview, else the first platform whose participant id the link carries, else anonymous."""
        for platform in platforms.REGISTRY.values():
            if platform.is_preview(self.cleaned_data):
                return Arrival(platform.key, preview=True)
        for platform in platforms.REGISTRY.values():
            arrival = platform.arrival(self.cleaned_data)
            if arrival is not None:
                return arrival
        return Arrival()


class ConsentForm(forms.Form):
    agree = forms.BooleanField(required=True, label=gettext_lazy("I have read the information above and agree to take part."))
    version = forms.CharField(max_length=50, widget=forms.HiddenInput)


class PracticeForm(forms.Form):
    value = forms.IntegerField(min_value=PREFERENCE_MIN, max_value=PREFERENCE_MAX)


class TimingField(forms.Field):
    """A browser timing in milliseconds: any non-negative number (``1e+23`` included, as JavaScript
    writes large ones), rounded and clamped to the column's largest value, so a huge timing never
    makes the answer a 400 that the page would send again and again."""

    def __init__(self, **kwargs) -> None:
        super().__init__(required=False, **kwargs)

    def to_python(self, value: str | None) -> int | None:
        text = (value or "").strip()
        if not text:
            return None
        try:
            number = Decimal(text)
        except InvalidOperation:
            raise ValidationError("must be a number of milliseconds", code="invalid") from None
        if not number.is_finite() or number < 0:
            raise ValidationError("must be a non-negative number of milliseconds", code="invalid")
        return math.floor(min(number, Decimal(CLIENT_MS_MAX)) + Decimal("0.5"))


class AnswerForm(forms.Form):
    """One answer: the value as shown, the client's request id (idempotency) and the browser's timings."""

    value = forms.IntegerField(min_value=PREFERENCE_MIN, max_value=PREFERENCE_MAX)
    request_id = forms.RegexField(regex=r"^[A-Za-z0-9_-]{8,64}$")
    client_ms = TimingField()
    visible_ms = TimingField()
    first_interaction_ms = TimingField()


class HeartbeatForm(forms.Form):
    """A heartbeat of an open page: the assignment on screen (item pages only)."""

    item = forms.IntegerField(required=False, min_value=1)


class ComprehensionForm(forms.Form):
    """The comprehension questions; every one must be answered (an incomplete form uses no attempt)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for q in COMPREHENSION:
            self.fields[q.key] = forms.ChoiceField(label=q.text, choices=q.options, widget=forms.RadioSelect)


class StaffLoginForm(AdminAuthenticationForm):
    """The staff sign-in of the admin, throttled: after repeated failures for a user name (or from one
    address) every attempt is refused for a while, the right password included."""

    def clean(self):
        username = self.data.get("username") or ""
        address = throttle.client_address(self.request.META) if self.request is not None else "unknown"
        wait = throttle.login_attempt(username, address)  # counted before the password is checked
        if wait:
            logger.warning("staff sign-in refused for %r from %s: too many failures", username, address)
            raise ValidationError(f"Too many failed sign-ins. Please wait {throttle.minutes(wait)} and try again.", code="throttled")
        cleaned = super().clean()
        throttle.login_succeeded(username, address)
        return cleaned


class AnnotatorSearchForm(forms.Form):
    """The staff dashboard's annotator search: part of a platform id (Prolific PID, MTurk worker id)."""

    q = forms.CharField(required=False, max_length=100, strip=True, label="Platform id contains")

    def __init__(self, *args, platform_ids: bool = True, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if not platform_ids:  # members without the id permission search the internal codes
            self.fields["q"].label = "Code contains"


class QualityReasonForm(forms.Form):
    """Why staff exclude or reinstate annotators by hand (stored in the quality log)."""

    reason = forms.CharField(
        max_length=1000, widget=forms.Textarea(attrs={"rows": 3, "cols": 80}), help_text="stored in the quality log with your user name"
    )


class ReviewDecisionForm(forms.Form):
    """Staff's decision on one submission under review (the platform's rules are checked by services.review.decisions)."""

    pseudonym = forms.CharField(max_length=20)
    action = forms.ChoiceField(choices=[("approve", "approve"), ("reject", "reject"), ("skip", "no action")])
    category = forms.CharField(required=False, max_length=30)
    message = forms.CharField(required=False, max_length=5000)
    bonus = forms.DecimalField(required=False, min_value=0, max_digits=8, decimal_places=2)


class ReviewApplyForm(forms.Form):
    """Sending the decisions to the platforms: a deliberate step."""

    confirm = forms.BooleanField(required=True, label="I checked the decisions above; send them to the platform now")
