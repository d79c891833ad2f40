from django.contrib import admin
from django.urls import path

from studyapp import views

urlpatterns = [
    path("", views.home, name="home"),
    path("s/<slug:slug>/", views.study_entry, name="study_entry"),
    path("admin/", admin.site.urls),
]
