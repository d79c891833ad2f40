"""``manage.py compile_translations``: the participant pages' catalogues (locale/*/LC_MESSAGES/django.po)
compiled to .mo files, with gettext's msgfmt when it is installed (Django's compilemessages), else
with polib, so ``make run`` needs nothing but Python on a fresh machine."""

from __future__ import annotations

import shutil
from pathlib import Path

import polib
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from evaluation.wording import counted


class Command(BaseCommand):
    help = "Compile the translation catalogues (msgfmt if installed, else polib); skips .mo files newer than their .po."

    def handle(self, *args, **opts) -> None:
        if shutil.which("msgfmt"):
            call_command("compilemessages", verbosity=0, ignore_patterns=[".venv", ".git"])
            return
        compiled = 0
        for folder in settings.LOCALE_PATHS:
            for po in sorted(Path(folder).glob("*/LC_MESSAGES/*.po")):
                mo = po.with_suffix(".mo")
                if mo.exists() and mo.stat().st_mtime >= po.stat().st_mtime:
                    continue
                try:
                    catalogue = polib.pofile(str(po))
                except (OSError, ValueError) as exc:
                    raise CommandError(f"{po}: {exc}") from None
                catalogue.save_as_mofile(str(mo))
                compiled += 1
        self.stdout.write(f"Compiled {counted(compiled, 'catalogue')} with polib (gettext's msgfmt is not installed).")
