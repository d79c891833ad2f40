"""``manage.py compile_translations`` without gettext's msgfmt: polib writes catalogues Django reads."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from unittest import mock

from django.core.management import call_command
from django.test import SimpleTestCase, override_settings
from django.utils import translation
from django.utils.translation import trans_real

LOCALE = Path(__file__).resolve().parents[2] / "locale"


class CompileTranslationsTestCase(SimpleTestCase):
    def test_polib_compiles_every_catalogue_when_msgfmt_is_missing(self) -> None:
        tmp = Path(self.enterContext(__import__("tempfile").TemporaryDirectory()))
        shutil.copytree(LOCALE, tmp / "locale", ignore=shutil.ignore_patterns("*.mo"))
        out = io.StringIO()
        with override_settings(LOCALE_PATHS=[tmp / "locale"]), mock.patch("shutil.which", return_value=None):
            call_command("compile_translations", stdout=out)
            self.assertIn("Compiled 2 catalogues with polib", out.getvalue())
            trans_real._translations.clear()
            with translation.override("ja"):
                self.assertNotEqual(translation.gettext("No results."), "No results.")
            call_command("compile_translations", stdout=out)  # up to date: nothing compiled again
            self.assertIn("Compiled 0 catalogues", out.getvalue())
        trans_real._translations.clear()
        self.assertEqual(sorted(p.parent.parent.name for p in (tmp / "locale").glob("*/LC_MESSAGES/django.mo")), ["ja", "zh_Hans"])
