from django.contrib import admin
from django.urls import path

from studyapp.views import annotator, items, preview, report, site, staff, withdrawal

handler500 = "studyapp.views.site.server_error"  # 503 with Retry-After when the database does not answer

urlpatterns = [
    path("", site.home, name="home"),
    path("s/<slug:slug>/", annotator.study_entry, name="study_entry"),
    path("s/<slug:slug>/consent/", annotator.consent, name="study_consent"),
    path("s/<slug:slug>/instructions/", annotator.instructions, name="study_instructions"),
    path("s/<slug:slug>/practice/", annotator.practice, name="study_practice"),
    path("s/<slug:slug>/check/", annotator.comprehension, name="study_comprehension"),
    path("s/<slug:slug>/item/", items.next_item, name="study_next_item"),
    path("s/<slug:slug>/item/<int:pk>/", items.item, name="study_item"),
    path("s/<slug:slug>/item/<int:pk>/answer/", items.answer, name="study_answer"),
    path("s/<slug:slug>/heartbeat/", items.heartbeat, name="study_heartbeat"),
    path("s/<slug:slug>/done/", annotator.done, name="study_done"),
    path("s/<slug:slug>/withdraw/", withdrawal.withdraw, name="study_withdraw"),
    path("staff/", staff.study_list, name="staff_studies"),
    path("staff/studies/new/", staff.study_new, name="staff_study_new"),  # two segments: never a study's slug
    path("staff/<slug:slug>/", staff.study_page, name="staff_study"),
    path("staff/<slug:slug>/live/", staff.study_live, name="staff_study_live"),
    path("staff/<slug:slug>/setup/", staff.study_setup, name="staff_study_setup"),
    path("staff/<slug:slug>/review/", staff.study_review, name="staff_study_review"),
    path("staff/<slug:slug>/preview/", preview.start, name="staff_preview"),
    path("staff/<slug:slug>/preview/consent/", preview.consent, name="staff_preview_consent"),
    path("staff/<slug:slug>/preview/instructions/", preview.instructions, name="staff_preview_instructions"),
    path("staff/<slug:slug>/preview/practice/", preview.practice, name="staff_preview_practice"),
    path("staff/<slug:slug>/preview/check/", preview.comprehension, name="staff_preview_check"),
    path("staff/<slug:slug>/preview/item/", preview.item, name="staff_preview_item"),
    path("staff/<slug:slug>/preview/done/", preview.done, name="staff_preview_done"),
    path("staff/<slug:slug>/payments.csv", staff.study_payments, name="staff_study_payments"),
    path("staff/<slug:slug>/export.<str:fmt>", staff.study_export, name="staff_study_export"),
    path("staff/<slug:slug>/report/", report.page, name="study_report"),
    path("staff/<slug:slug>/report/figures/<slug:stem>.<str:fmt>", report.figure, name="study_report_figure"),
    path("staff/<slug:slug>/report/<str:name>", report.table, name="study_report_file"),
    path("admin/", admin.site.urls),
]
