from django.apps import AppConfig
from django.core.management import call_command
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


class StudyappConfig(AppConfig):
    name = "studyapp"
    verbose_name = "Preference studies"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from studyapp.pg_timestamps import use_c_loader

        connection_created.connect(use_c_loader, dispatch_uid="studyapp.pg_timestamps")
        post_migrate.connect(create_cache_table, sender=self, dispatch_uid="studyapp.cache_table")
        import studyapp.checks  # noqa: F401  (registers the system checks)


def create_cache_table(using: str = "default", **kwargs) -> None:
    """``migrate`` also makes the database cache's table (createcachetable; nothing when it exists or the cache is elsewhere)."""
    call_command("createcachetable", database=using, verbosity=0)
