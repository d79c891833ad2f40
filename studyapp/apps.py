from django.apps import AppConfig


class StudyappConfig(AppConfig):
    name = "studyapp"
    verbose_name = "Preference studies"
    default_auto_field = "django.db.models.BigAutoField"
