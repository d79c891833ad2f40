"""The quality rule registry (``studyapp.services.quality.rules``): the decision log's choices, the
study settings and the docs table agree with the registered rules, and a dummy rule registered in a
test is computed, breached, logged and shown like the built-in ones."""

from __future__ import annotations

import random
from pathlib import Path
from unittest import mock

from django.urls import reverse

from studyapp.models import QualityDecision, Study, study_settings
from studyapp.models.study_settings import SETTINGS, StudySetting
from studyapp.services.analysis import dashboard
from studyapp.services.design.study_config import parse_config
from studyapp.services.quality import control, rules
from studyapp.services.quality.rules import QualityRule
from tests.studyapp.base import NOW, TOY_CONFIG, BaseTestCase
from tests.studyapp.filled import fill
from tests.studyapp.test_staff_dashboard import staff_client

DOCS = Path(__file__).resolve().parents[2] / "docs" / "studyapp.md"


class RegistryTestCase(BaseTestCase):
    def test_the_decision_log_lists_every_rule_and_the_two_other_reasons(self) -> None:
        self.assertEqual(QualityDecision.Rule.values, [*rules.RULES, "rules", "staff"])
        for key, rule in rules.RULES.items():
            self.assertEqual(QualityDecision.Rule(key).label, rule.label)

    def test_every_rule_has_a_declared_limit_and_a_docs_row(self) -> None:
        rows = DOCS.read_text(encoding="utf-8").splitlines()
        for rule in rules.RULES.values():
            with self.subTest(rule.key):
                setting = study_settings.BY_NAME[rule.limit]
                self.assertIs(setting.optional, not rule.always_on)  # null switches a rule off, except the one always on
                self.assertIn(rule.docs_row(), rows)

    def test_a_rule_registered_twice_is_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "'fast' registered twice"):
            rules.register(rules.RULES["fast"])


def _zero_share(answers: rules.Answers) -> dict:
    zeros = sum(1 for a in answers.items if a.value == 0)
    return {"zeros": zeros, "share": zeros / len(answers.items) if answers.items else None}


def _zero_breach(study: Study, signal: dict) -> rules.Breach | None:
    limit = study.zero_share_limit
    if limit is None or signal["share"] is None or signal["share"] <= limit:
        return None
    return f"zeros: {signal['zeros']} 'about the same' answers (limit {limit:.0%})", {**signal, "limit": limit}


ZERO_RULE = QualityRule(
    "zeros", "too many ties", "zero_share_limit", _zero_share, _zero_breach,
    column=lambda study: "ties", cell=lambda s: "–" if s["share"] is None else f"{s['zeros']}",
    counted="answers 'about the same'", excludes_when="their share above `zero_share_limit`",
)  # fmt: skip
ZERO_LIMIT = StudySetting("zero_share_limit", float, None, "exclude above this share of ties", low=0, high=1, optional=True)


class DummyRuleTestCase(BaseTestCase):
    def setUp(self) -> None:
        super().setUp()
        rules.register(ZERO_RULE)
        self.addCleanup(rules.unregister, "zeros")
        for name, value in (("SETTINGS", (*SETTINGS, ZERO_LIMIT)), ("BY_NAME", {**study_settings.BY_NAME, ZERO_LIMIT.name: ZERO_LIMIT})):
            patcher = mock.patch.object(study_settings, name, value)
            patcher.start()
            self.addCleanup(patcher.stop)
        column = mock.patch.object(Study, "zero_share_limit", None, create=True)  # what its migration would add
        column.start()
        self.addCleanup(column.stop)
        fill(self.study, ["p-one", "p-two"], random.Random(1), NOW)

    def test_its_limit_is_a_configuration_key(self) -> None:
        self.assertEqual(parse_config({**TOY_CONFIG, "zero_share_limit": 0.25}).zero_share_limit, 0.25)
        with self.assertRaisesMessage(Exception, "zero_share_limit must be in [0, 1], got 2"):
            parse_config({**TOY_CONFIG, "zero_share_limit": 2})

    def test_its_signal_and_breach_reach_the_decisions(self) -> None:
        signals = control.annotator_signals(self.study)
        self.assertTrue(all("zeros" in s.signals for s in signals))
        self.assertEqual([b.rule for s in signals for b in s.breaches], [])  # no limit set: reported only
        self.study.zero_share_limit = -1.0  # every annotator breaks it (any share is above)
        report = control.quality_check(self.study, dry_run=True)  # a real run logs it: its key must be a choice (test above)
        self.assertEqual(len(report.excluded), 2)
        self.assertTrue(all("zeros: " in detail for _, detail in report.excluded))
        self.study.zero_share_limit = None
        self.assertFalse(control._other_limits(self.study))  # the answer's fast path stays on: only the fast rule excludes
        self.study.zero_share_limit = 0.5
        self.assertTrue(control._other_limits(self.study))

    def test_the_dashboard_shows_its_column(self) -> None:
        self.assertEqual(dashboard.rule_columns(self.study)[-1], "ties")
        rows, _ = dashboard.annotator_rows(self.study)
        zeros = {row.annotator.pk: control.annotator_signals(self.study, [row.annotator])[0].signals["zeros"]["zeros"] for row in rows}
        for row in rows:
            self.assertEqual(len(row.rule_cells), len(rules.RULES))
            self.assertEqual(row.rule_cells[-1], str(zeros[row.annotator.pk]))
        html = staff_client().get(reverse("staff_study", args=[self.study.slug])).content.decode()
        self.assertIn('<th class="num">ties</th>', html)

    def test_the_docs_check_would_report_it(self) -> None:
        self.assertNotIn(ZERO_RULE.docs_row(), DOCS.read_text(encoding="utf-8").splitlines())
        self.assertNotIn("zeros", QualityDecision.Rule.values)  # a real rule adds its key there, with a migration
