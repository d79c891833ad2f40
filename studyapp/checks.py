"""System checks (``manage.py check``, run by ``makemigrations``, ``migrate`` and ``make serve``): of the deployment,
and of the study settings' declaration against the ``Study`` model."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, register

PER_PROCESS = ("django.core.cache.backends.locmem.LocMemCache", "django.core.cache.backends.dummy.DummyCache")


@register(Tags.caches, deploy=False)
def shared_cache(app_configs, **kwargs) -> list[Error]:
    """In production, several workers need one cache: per-process counters would multiply every limit."""
    backend = settings.CACHES["default"]["BACKEND"]
    if settings.PRODUCTION and backend in PER_PROCESS and settings.STUDYAPP_WORKERS > 1:
        return [
            Error(
                f"the cache is per process ({backend.rsplit('.', 1)[-1]}) but WEB_CONCURRENCY={settings.STUDYAPP_WORKERS}: "
                "each worker would count rate limits on its own",
                hint="leave STUDYAPP_CACHE_URL empty (the database cache) or set it to redis://HOST:PORT/DB",
                id="studyapp.E001",
            )
        ]
    return []


@register(Tags.security, deploy=False)
def allowed_hosts(app_configs, **kwargs) -> list[Error]:
    """In production, ``DJANGO_ALLOWED_HOSTS`` names the site: ``*`` would answer any Host header (password-reset
    links and absolute URLs built from a forged host, cache poisoning through the host)."""
    wildcards = [h for h in settings.ALLOWED_HOSTS if h.strip() in ("*", ".")]
    if settings.PRODUCTION and wildcards:
        return [
            Error(
                f"DJANGO_ALLOWED_HOSTS contains {wildcards[0]!r}: with STUDYAPP_PRODUCTION=1 the site must name its host(s)",
                hint="set DJANGO_ALLOWED_HOSTS to the public host name(s), e.g. study.example.org (a leading dot allows subdomains)",
                id="studyapp.E002",
            )
        ]
    return []


@register(Tags.models)
def setting_columns(app_configs, **kwargs) -> list[Error]:
    """Every declared study setting has its ``Study`` column: a declaration whose line in the model was forgotten
    is named before ``makemigrations`` writes a migration without it (docs/contributing.md#a-study-setting)."""
    from studyapp.models import Study
    from studyapp.models.study_settings import SETTINGS

    columns = {field.name for field in Study._meta.get_fields()}
    return [
        Error(
            f"the study setting {setting.name!r} is declared in SETTINGS but Study has no column for it",
            hint=f'add the line  {setting.name} = setting_column("{setting.name}")  to the Study class of studyapp/models/study.py',
            obj=Study,
            id="studyapp.E003",
        )
        for setting in SETTINGS
        if setting.name not in columns
    ]
