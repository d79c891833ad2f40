from django.apps import AppConfig
from django.db.backends.signals import connection_created


class StudyappConfig(AppConfig):
    name = "studyapp"
    verbose_name = "Preference studies"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from studyapp.pg_timestamps import use_c_loader

        connection_created.connect(use_c_loader, dispatch_uid="studyapp.pg_timestamps")
