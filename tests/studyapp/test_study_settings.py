"""The study settings' one declaration (``studyapp.models.study_settings``): the ``Study`` columns and
their database checks, the JSON configuration, what ``create_study`` writes, the admin's forms, the
docs table and the study's exported configuration all follow it, and a dummy setting declared in a
test is picked up by each (docs/contributing.md#a-study-setting)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any
from unittest import mock

from django.contrib.auth import get_user_model
from django.db import IntegrityError, models, transaction
from django.forms.models import model_to_dict
from django.test import SimpleTestCase
from django.urls import reverse

from studyapp import checks
from studyapp.admin import StudyChangeForm
from studyapp.exceptions import InvalidStudyConfig
from studyapp.models import Study, study_settings
from studyapp.models.study_settings import SETTINGS, StudySetting
from studyapp.services.design import study_config
from studyapp.services.design.study_config import parse_config, setting_problems
from studyapp.services.design.study_design import create_study, setting_columns
from tests.studyapp.base import TOY_CONFIG, BaseTestCase

DOCS = Path(__file__).resolve().parents[2] / "docs" / "studyapp.md"
BOUNDED = [s for s in SETTINGS if s.low is not None]


def outside(setting: StudySetting) -> list[float]:
    """Values just outside the setting's bounds (an open bound itself is outside)."""
    step = 1 if setting.type is int else 0.01
    return [setting.low if setting.low_open else setting.low - step, setting.high if setting.high_open else setting.high + step]


def inside(setting: StudySetting) -> list[float]:
    step = 1 if setting.type is int else 0.01
    return [setting.low + step if setting.low_open else setting.low, setting.high - step if setting.high_open else setting.high]


def docs_rows() -> set[str]:
    return {line for line in DOCS.read_text(encoding="utf-8").splitlines() if line.startswith("| `")}


class DeclarationTestCase(SimpleTestCase):
    def test_every_setting_is_a_study_column_made_from_its_declaration(self) -> None:
        declared = {field.name for field in Study._meta.get_fields()}
        for setting in study_settings.SETTINGS:  # as declared now (a test may add one)
            with self.subTest(setting.name):
                line = f'{setting.name} = setting_column("{setting.name}")'
                self.assertIn(setting.name, declared, f"studyapp/models/study.py: Study lacks the line {line}")
                column = Study._meta.get_field(setting.name)
                self.assertEqual(column.deconstruct()[1:], setting.model_field().deconstruct()[1:], f"write {line}")
        names = {c.name for c in Study._meta.constraints}
        self.assertLessEqual({c.name for c in study_settings.setting_constraints()}, names)

    def test_the_configuration_takes_every_setting_with_its_default(self) -> None:
        self.assertEqual(study_config.keys(), ("runs", "topics", "topic_rule", "levels", *(s.name for s in SETTINGS)))
        config = parse_config({"runs": ["a", "b"]})
        for setting in SETTINGS:
            with self.subTest(setting.name):
                self.assertEqual(getattr(config, setting.name), setting.initial)

    def test_the_parser_accepts_the_bounds_and_refuses_what_is_outside(self) -> None:
        for setting in BOUNDED:
            for value in inside(setting):
                with self.subTest(setting.name, value=value):
                    self.assertEqual(getattr(parse_config({**TOY_CONFIG, setting.name: value}), setting.name), value)
            for value in outside(setting):
                with self.subTest(setting.name, value=value), self.assertRaises(InvalidStudyConfig) as refused:
                    parse_config({**TOY_CONFIG, setting.name: value})
                self.assertEqual(refused.exception.errors, [setting.problem(value)])
                self.assertIn(setting.name, refused.exception.errors[0])

    def test_the_docs_table_has_each_settings_row(self) -> None:
        rows = docs_rows()
        for setting in SETTINGS:
            with self.subTest(setting.name):
                self.assertTrue(setting.docs_row() in rows, f"docs/studyapp.md#create_study lacks the row: {setting.docs_row()}")
        documented = {row.split("`")[1] for row in rows if row.split("|")[1].strip().startswith("`")}
        self.assertLessEqual({s.name for s in SETTINGS}, documented)

    def test_the_docs_table_says_which_settings_are_fixed(self) -> None:
        """A reader could not tell that allocation (or depth, ...) cannot be switched once answers exist."""
        rows: dict[str, str] = {}
        for row in sorted(docs_rows(), key=DOCS.read_text(encoding="utf-8").index):  # the key table comes first
            rows.setdefault(row.split("`")[1], row)
        for setting in SETTINGS:
            with self.subTest(setting.name):
                self.assertEqual("**fixed once the study exists**" in rows[setting.name], setting.frozen)

    def test_the_system_check_finds_every_column(self) -> None:
        self.assertEqual(checks.setting_columns(None), [])

    def test_a_name_is_declared_once(self) -> None:
        with self.assertRaisesMessage(ValueError, "study setting 'depth' declared twice"):
            study_settings.by_name((*SETTINGS, StudySetting("depth", int, 5, "again")))
        self.assertEqual(study_settings.by_name(SETTINGS), study_settings.BY_NAME)

    def test_the_former_disagreements_are_gone(self) -> None:
        by_name = study_settings.BY_NAME
        self.assertEqual((by_name["check_share"].low, by_name["check_share"].high), (0, 0.5))
        self.assertEqual((by_name["depth"].low, by_name["depth"].high), (1, 100))


class DatabaseChecksTestCase(BaseTestCase):
    def test_the_database_refuses_what_the_declaration_refuses(self) -> None:
        for setting in BOUNDED:
            for value in inside(setting):
                with self.subTest(setting.name, value=value):
                    Study.objects.filter(pk=self.study.pk).update(**{setting.name: value})
            for value in outside(setting):
                with self.subTest(setting.name, value=value), self.assertRaises(IntegrityError), transaction.atomic():
                    Study.objects.filter(pk=self.study.pk).update(**{setting.name: value})
            Study.objects.filter(pk=self.study.pk).update(**{setting.name: setting.default})

    def test_the_admin_form_gives_the_declarations_reasons(self) -> None:
        data = {k: ("" if v is None else v) for k, v in model_to_dict(self.study).items()}
        for setting in [s for s in BOUNDED if not s.frozen]:
            value = outside(setting)[1]
            with self.subTest(setting.name):
                form = StudyChangeForm(instance=self.study, data={**data, setting.name: value})
                self.assertFalse(form.is_valid())
                self.assertIn(setting.problem(value), form.errors[setting.name])


def other_value(setting: StudySetting) -> Any:
    """A valid value of ``setting`` that is not its default (for the toy study's design)."""
    special = {
        "redirect_url": "https://app.prolific.com/submissions/complete?cc={code}",
        "items_per_annotator": 5,
        "candidate_metrics": "alpha-nDCG@2,nERR-IA@2",  # at the depth other_value gives (2)
    }
    if setting.name in special:
        return special[setting.name]
    if setting.choices is not None:
        return next(v for v in reversed(setting.choices.values) if v != setting.initial)
    if setting.type is bool:
        return not setting.initial
    if setting.type is str:
        return "X7-other" if setting.pattern is not None or setting.max_length else "another text"
    if setting.type is Decimal:
        return Decimal("1.25")
    low = setting.low if setting.low is not None else 0
    value = low + (1 if setting.type is int else 0.25) if setting.initial != low + 1 else low + 2
    return min(value, 2) if setting.frozen else value  # a frozen setting shapes the toy design: stay small


class CreateStudyTestCase(BaseTestCase):
    def test_create_study_writes_every_setting_given_to_its_column(self) -> None:
        """withdrawal_code and platform_id_retention_days were once checked, kept in the configuration and lost."""
        values = {s.name: other_value(s) for s in SETTINGS}
        values["subtopics_per_topic"] = 2
        study = create_study("toy", "Every setting", parse_config({**TOY_CONFIG, **values})).study
        study.refresh_from_db()
        for setting in SETTINGS:
            with self.subTest(setting.name):
                self.assertNotEqual(values[setting.name], setting.initial)
                self.assertEqual(getattr(study, setting.name), values[setting.name])
        self.assertEqual(
            (study.withdrawal_code, study.platform_id_retention_days), (values["withdrawal_code"], values["platform_id_retention_days"])
        )

    def test_the_admin_cannot_switch_the_allocation_once_the_study_exists(self) -> None:
        """What docs/studyapp.md#create_study says of every fixed setting: shown, not editable, a posted value ignored."""
        client = self.client
        client.force_login(get_user_model().objects.create_superuser("fixed", "f@example.org", "pw-for-tests"))
        url = reverse("admin:studyapp_study_change", args=[self.study.pk])
        page = client.get(url).content.decode()
        for setting in SETTINGS:
            with self.subTest(setting.name):
                self.assertEqual(f'name="{setting.name}"' in page, not setting.frozen)
        data = {k: ("" if v is None else v) for k, v in Study.objects.filter(pk=self.study.pk).values()[0].items()}
        client.post(url, {**data, "allocation": "adaptive"})
        self.study.refresh_from_db()
        self.assertEqual(self.study.allocation, "uniform")

    def test_the_exported_configuration_designs_the_same_study_again(self) -> None:
        exported = study_config.study_config(self.study)
        self.assertEqual(list(exported)[:3], ["runs", "topics", "levels"])
        self.assertEqual(set(exported) - {"runs", "topics", "levels"}, {s.name for s in SETTINGS})
        again = create_study("toy", "Toy again", parse_config(exported)).study
        self.assertEqual(study_config.study_config(again), exported)
        self.assertEqual(again.presentations.count(), self.study.presentations.count())


DUMMY = StudySetting("dummy_limit", int, 5, "a dummy rule's limit", low=1, high=9, doc="only in this test")


def declare_dummy(test: SimpleTestCase) -> None:
    """Follow the recipe for the length of ``test``: one more declaration in ``SETTINGS``."""
    for name, value in (("SETTINGS", (*SETTINGS, DUMMY)), ("BY_NAME", {**study_settings.BY_NAME, DUMMY.name: DUMMY})):
        patcher = mock.patch.object(study_settings, name, value)
        patcher.start()
        test.addCleanup(patcher.stop)


class DummySettingTestCase(SimpleTestCase):
    def setUp(self) -> None:
        declare_dummy(self)

    def test_it_is_a_configuration_key_with_its_default_and_bounds(self) -> None:
        self.assertIn("dummy_limit", study_config.keys())
        self.assertEqual(parse_config(TOY_CONFIG).dummy_limit, 5)
        self.assertEqual(parse_config({**TOY_CONFIG, "dummy_limit": 9}).dummy_limit, 9)
        with self.assertRaisesMessage(InvalidStudyConfig, "dummy_limit must be between 1 and 9, got 10"):
            parse_config({**TOY_CONFIG, "dummy_limit": 10})
        self.assertEqual(setting_problems({"dummy_limit": "x"}), [("dummy_limit", 'dummy_limit must be an integer, got "x"')])

    def test_a_declaration_without_its_column_line_fails_the_declaration_test_and_the_system_check(self) -> None:
        with self.assertRaisesMessage(AssertionError, 'Study lacks the line dummy_limit = setting_column("dummy_limit")'):
            DeclarationTestCase("test_every_setting_is_a_study_column_made_from_its_declaration").debug()
        [error] = checks.setting_columns(None)
        self.assertEqual(error.id, "studyapp.E003")
        self.assertIn('dummy_limit = setting_column("dummy_limit")', error.hint)
        self.assertIn("dummy_limit", str(error.msg))

    def test_it_makes_its_column_check_and_docs_row(self) -> None:
        field = DUMMY.model_field()
        self.assertIsInstance(field, models.PositiveIntegerField)
        self.assertEqual((field.default, field.help_text), (5, "a dummy rule's limit"))
        check = DUMMY.constraint()
        self.assertEqual(check.name, "study_dummy_limit_range")
        self.assertEqual(check.condition, models.Q(dummy_limit__gte=1) & models.Q(dummy_limit__lte=9))
        self.assertEqual(DUMMY.docs_row(), "| `dummy_limit` | 5 | only in this test; allowed: 1-9 |")
        self.assertFalse(DUMMY.docs_row() in docs_rows())  # what the docs test would report missing
        self.assertIn(check.name, {c.name for c in study_settings.setting_constraints()})


def even_up_to_depth(value: int, values) -> str | None:
    """A dummy rule past type and bounds that reads another setting of the configuration."""
    depth = values.get("depth", 10)
    return None if value % 2 == 0 and value <= depth else f"dummy_even must be even and at most the depth {depth}, got {value}"


DUMMY_CHECKED = StudySetting("dummy_even", int, 2, "a dummy with its own rule", low=0, high=100, check=even_up_to_depth)


class DummySettingWithItsOwnRuleTestCase(SimpleTestCase):
    """The recipe's check(value, values): the parser calls it with the configuration's other settings, after the bounds."""

    def setUp(self) -> None:
        for name, value in (
            ("SETTINGS", (*SETTINGS, DUMMY_CHECKED)),
            ("BY_NAME", {**study_settings.BY_NAME, DUMMY_CHECKED.name: DUMMY_CHECKED}),
        ):
            patcher = mock.patch.object(study_settings, name, value)
            patcher.start()
            self.addCleanup(patcher.stop)

    def test_the_parser_applies_the_rule_with_the_other_settings(self) -> None:
        self.assertEqual(parse_config({**TOY_CONFIG, "dummy_even": 4}).dummy_even, 4)
        with self.assertRaisesMessage(InvalidStudyConfig, "dummy_even must be even and at most the depth 10, got 3"):
            parse_config({**TOY_CONFIG, "dummy_even": 3})
        self.assertEqual(
            setting_problems({"dummy_even": 8, "depth": 6}), [("dummy_even", "dummy_even must be even and at most the depth 6, got 8")]
        )
        self.assertEqual(setting_problems({"dummy_even": 200}), [("dummy_even", "dummy_even must be between 0 and 100, got 200")])


class DummySettingInTheStudyTestCase(BaseTestCase):
    """Past the configuration: the dummy reaches create_study's columns, the admin's form and the exported configuration."""

    def setUp(self) -> None:
        super().setUp()
        declare_dummy(self)

    def test_create_study_writes_it_to_its_column(self) -> None:
        columns = setting_columns(parse_config({**TOY_CONFIG, "dummy_limit": 7}))
        self.assertEqual(columns["dummy_limit"], 7)
        self.assertEqual(set(columns), {s.name for s in study_settings.SETTINGS})

    def test_the_admin_create_form_has_its_field(self) -> None:
        self.client.force_login(get_user_model().objects.create_superuser("staff", "staff@example.org", "pw-for-tests"))
        page = self.client.get(reverse("admin:studyapp_study_add")).content.decode()  # the only collection: chosen
        self.assertIn('<input type="number" name="dummy_limit" value="5" min="1" max="9"', page)
        self.assertIn("a dummy rule&#x27;s limit; allowed: 1-9; default: 5 (key dummy_limit)", page)

    def test_the_exported_configuration_has_it(self) -> None:
        self.study.dummy_limit = 7  # the column the migration would add
        exported = study_config.study_config(self.study)
        self.assertEqual(exported["dummy_limit"], 7)
        self.assertEqual(parse_config(exported).dummy_limit, 7)
