"""Django admin for every model, one module per part of the data (imported so each registers its admins).

Imported data and study designs are read-mostly: big foreign keys are raw ids (a select of 15,000
documents would make pages unusable) and design fields are frozen. Studies are added through the study form (``studyapp.forms.study``: one field
per declared setting, or an imported JSON configuration) and the same service as ``create_study``.
"""

from django.contrib import admin

from studyapp.admin import access, allocation, annotators, collections, review, studies  # noqa: F401  (registration)
from studyapp.admin.common import TeamScoped  # noqa: F401  (the access tests find the team-scoped admins by it)
from studyapp.admin.studies import StudyAdmin, StudyChangeForm  # noqa: F401  (tests, docs)
from studyapp.forms import StaffLoginForm

admin.site.login_form = StaffLoginForm  # sign-in throttled after repeated failures
