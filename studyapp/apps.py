from django.apps import AppConfig
from django.core.management import call_command
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


class StudyappConfig(AppConfig):
    name = "studyapp"
    verbose_name = "Preference studies"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from studyapp import csrf_tokens
        from studyapp.pg_deadline import add_deadline
        from studyapp.pg_timestamps import use_c_loader

        connection_created.connect(use_c_loader, dispatch_uid="studyapp.pg_timestamps")
        connection_created.connect(add_deadline, dispatch_uid="studyapp.pg_deadline")
        post_migrate.connect(create_cache_table, sender=self, dispatch_uid="studyapp.cache_table")
        from django.contrib.auth import get_user_model
        from django.contrib.auth.signals import user_logged_in, user_logged_out
        from django.db.models.signals import pre_save

        user_logged_in.connect(_staff_signed_in, dispatch_uid="studyapp.staff_session_in")
        user_logged_out.connect(_staff_signed_out, dispatch_uid="studyapp.staff_session_out")
        pre_save.connect(_password_changing, sender=get_user_model(), dispatch_uid="studyapp.staff_password")
        import studyapp.checks  # noqa: F401  (registers the system checks)

        csrf_tokens.install()


def create_cache_table(using: str = "default", **kwargs) -> None:
    """``migrate`` also makes the database cache's table (createcachetable; nothing when it exists or the cache is elsewhere)."""
    call_command("createcachetable", database=using, verbosity=0)


def _staff_signed_in(sender, request, user, **kwargs) -> None:
    from studyapp.services.access import staff_sessions

    if request is not None and hasattr(request, "session"):
        staff_sessions.start(request, user)


def _staff_signed_out(sender, request, user, **kwargs) -> None:
    from studyapp.services.access import staff_sessions

    if request is not None:
        staff_sessions.end(request)


def _password_changing(sender, instance, update_fields=None, **kwargs) -> None:
    """A new password ends every server-side session of the user (a stolen session cookie included)."""
    if instance.pk is None or (update_fields is not None and "password" not in update_fields):
        return
    old = sender.objects.filter(pk=instance.pk).values_list("password", flat=True).first()
    if old is not None and old != instance.password:
        from studyapp.services.access import staff_sessions

        staff_sessions.end_all(instance)
