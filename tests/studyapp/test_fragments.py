"""``{% constant %}`` (studyapp/templatetags/fragments.py): drawn once per language and value of its variables."""

from __future__ import annotations

from django.template import Context, Template
from django.test import SimpleTestCase, override_settings
from django.utils import translation

SOURCE = '{% load fragments i18n %}{% constant width %}{% translate "Withdraw from the study" %} {{ width }} {{ other }}{% endconstant %}'


@override_settings(DEBUG=False)
class ConstantFragmentTests(SimpleTestCase):
    def test_drawn_once_per_language_and_value(self) -> None:
        template = Template(SOURCE)
        self.assertEqual(template.render(Context({"width": 900, "other": "a"})), "Withdraw from the study 900 a")
        self.assertEqual(template.render(Context({"width": 900, "other": "b"})), "Withdraw from the study 900 a")  # kept
        self.assertEqual(template.render(Context({"width": 1000, "other": "b"})), "Withdraw from the study 1000 b")
        with translation.override("ja"):
            japanese = template.render(Context({"width": 900, "other": "c"}))
        self.assertNotIn("Withdraw from the study", japanese)  # the language is part of the key
        self.assertTrue(japanese.endswith(" 900 c"))

    def test_debug_draws_afresh(self) -> None:
        template = Template(SOURCE)
        template.render(Context({"width": 900, "other": "a"}))
        with override_settings(DEBUG=True):
            self.assertEqual(template.render(Context({"width": 900, "other": "b"})), "Withdraw from the study 900 b")

    def test_the_kept_drawings_are_bounded(self) -> None:
        from studyapp.templatetags import fragments

        template = Template(SOURCE)
        for width in range(fragments.KEPT + 5):
            template.render(Context({"width": width}))
        node = next(n for n in template.nodelist if isinstance(n, fragments.ConstantNode))
        self.assertLessEqual(len(node.drawn), fragments.KEPT)
