"""The quality rule registry (``studyapp.services.quality.rules``): the decision log's choices, the
study settings and the docs table agree with the registered rules, and a dummy rule registered in a
test by the recipe (docs/contributing.md#a-quality-rule) is computed, breached, logged and shown like
the built-in ones, stated in the instructions, named on the exclusion page and in the platform's
rejection, in English, Chinese and Japanese."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from unittest import mock

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext, trans_real

from studyapp.models import Annotator, QualityDecision, Study, study_settings
from studyapp.models.study_settings import SETTINGS, StudySetting
from studyapp.services.analysis import dashboard
from studyapp.services.data.payments import SpeedNorm
from studyapp.services.design.study_config import parse_config
from studyapp.services.platforms import PROLIFIC
from studyapp.services.quality import control, rules
from studyapp.services.quality.rules import QualityRule
from studyapp.services.quality.stated import exclusion_reason, stated_rules
from studyapp.services.review.suggest import suggest
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
                self.assertTrue(rule.docs_row() in rows, f"docs/studyapp.md#quality-control lacks the row: {rule.docs_row()}")

    def test_a_rule_registered_twice_is_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "'fast' registered twice"):
            rules.register(rules.RULES["fast"])

    def test_a_half_declared_rejection_is_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "'zeros': reject_as must be one of speed, checks, effort, other, not 'lazy'"):
            rules.register(dataclasses.replace(ZERO_RULE, reject_as="lazy"))
        with self.assertRaisesRegex(ValueError, "'zeros': a rejection for 'effort' needs its message"):
            rules.register(dataclasses.replace(ZERO_RULE, rejected=None))
        self.assertNotIn("zeros", rules.RULES)

    def test_every_rule_is_stated_where_it_excludes_and_nowhere_else(self) -> None:
        study = Study(fast_limit=30, fast_threshold_seconds=10.0, check_fail_limit=1, check_share=0.0, items_per_annotator=60,
                      straightline_limit=None, side_bias_limit=None, median_seconds_min=None)  # fmt: skip
        self.assertEqual([r.key for r in stated_rules(study)], ["fast"])  # no check items: the check rule is not stated
        everything = Study(fast_limit=1, fast_threshold_seconds=2.5, check_fail_limit=0, check_share=0.2, items_per_annotator=10,
                           straightline_limit=5, side_bias_limit=0.9, median_seconds_min=3.0)  # fmt: skip
        stated = stated_rules(everything)
        self.assertEqual(
            [r.key for r in stated], ["fast", "checks", "straightline", "side_bias", "median_time"]
        )  # a new rule: its limit unset here
        with translation.override("en"):
            self.assertEqual(
                [r.text for r in stated],
                ["gives more than 1 answer in less than 2.5 seconds each;",
                 "answers one of the check items wrongly: some items have a clear answer (for example, the same list on both sides, "
                 "which is “About the same”);",
                 "gives the same answer more than 5 times in a row;",
                 "prefers the same side (left or right) in more than 90% of the answers that prefer a side;",
                 "takes less than 3 seconds for a typical answer (the median of all answers);"],
            )  # fmt: skip
            self.assertEqual(exclusion_reason(everything, "side_bias").reason,
                             "The study ended for you because more than 90% of your answers preferred the same side.")  # fmt: skip
        self.assertIsNone(exclusion_reason(everything, "staff"))


def _zero_share(answers: rules.Answers) -> dict:
    zeros = sum(1 for a in answers.items if a.value == 0)
    return {"zeros": zeros, "share": zeros / len(answers.items) if answers.items else None}


def _zero_breach(study: Study, signal: dict) -> rules.Breach | None:
    limit = study.zero_share_limit
    if limit is None or signal["share"] is None or signal["share"] <= limit:
        return None
    return f"zeros: {signal['zeros']} 'about the same' answers (limit {limit:.0%})", {**signal, "limit": limit}


def _zero_percent(study: Study) -> dict:
    return {"percent": rules.people_number((study.zero_share_limit or 0) * 100)}


ZERO_RULE = QualityRule(
    "zeros", "too many ties", "zero_share_limit", _zero_share, _zero_breach,
    column=lambda study: "ties", cell=lambda s: "–" if s["share"] is None else f"{s['zeros']}",
    counted="answers 'about the same'", excludes_when="their share above `zero_share_limit`",
    stated=lambda study: gettext("answers “About the same” to more than %(percent)s%% of the items;") % _zero_percent(study),
    excluded=lambda study: gettext(
        "The study ended for you because more than %(percent)s%% of your answers were “About the same”."
    ) % _zero_percent(study),
    reject_as="effort",
    rejected=lambda counts: gettext(
        "Your submission was rejected for low effort: %(share)s of your answers were “About the same”, while the study's rules, "
        "shown before the first item, allowed at most %(limit)s."
    ) % {"share": rules.percent(counts.get("share")), "limit": rules.percent(counts.get("limit"))},
)  # fmt: skip
# The recipe's last step: its sentences translated in locale/zh_Hans and locale/ja (here: into the loaded catalogues).
ZERO_TRANSLATIONS = {
    "zh-hans": {
        "answers “About the same” to more than %(percent)s%% of the items;": "对超过 %(percent)s%% 的题目回答“差不多”；",
        "The study ended for you because more than %(percent)s%% of your answers were “About the same”.":
            "由于您超过 %(percent)s%% 的回答是“差不多”，本研究对您已结束。",
        "Your submission was rejected for low effort: %(share)s of your answers were “About the same”, while the study's rules, "
        "shown before the first item, allowed at most %(limit)s.":
            "您的提交因投入不足被拒绝：您的回答中有 %(share)s 是“差不多”，而第一题之前展示的研究规则最多允许 %(limit)s。",
    },
    "ja": {
        "answers “About the same” to more than %(percent)s%% of the items;": "項目の %(percent)s%% を超えて「ほぼ同じ」と回答した場合",
        "The study ended for you because more than %(percent)s%% of your answers were “About the same”.":
            "回答の %(percent)s%% を超えて「ほぼ同じ」だったため、この研究はあなたについて終了しました。",
        "Your submission was rejected for low effort: %(share)s of your answers were “About the same”, while the study's rules, "
        "shown before the first item, allowed at most %(limit)s.":
            "あなたの提出は、取り組みが不十分なため却下されました：回答の %(share)s が「ほぼ同じ」でしたが、最初の問題の前に示した研究のルールでは %(limit)s までしか認められていません。",
    },
}  # fmt: skip


def translate(test, entries: dict[str, dict[str, str]]) -> None:
    """Add ``entries`` ({language: {msgid: msgstr}}) to the loaded catalogues for the length of ``test``."""
    for language, messages in entries.items():
        catalog = trans_real.translation(language)._catalog
        for msgid, msgstr in messages.items():
            catalog[msgid] = msgstr
            test.addCleanup(catalog._catalogs[0].pop, msgid, None)


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
        self.assertFalse(ZERO_RULE.docs_row() in DOCS.read_text(encoding="utf-8").splitlines())
        self.assertNotIn("zeros", QualityDecision.Rule.values)  # a real rule adds its key there, with a migration


class DummyRuleTextsTestCase(BaseTestCase):
    """What participants read of the dummy rule, in each study language: the instructions, the exclusion page, the rejection."""

    EXPECTED = {  # language: (instructions, exclusion page, rejection) with the study's numbers
        "en": ("answers “About the same” to more than 40% of the items;",
               "The study ended for you because more than 40% of your answers were “About the same”.",
               "Your submission was rejected for low effort: 75% of your answers were “About the same”"),
        "zh-hans": ("对超过 40% 的题目回答“差不多”；", "由于您超过 40% 的回答是“差不多”，本研究对您已结束。", "您的提交因投入不足被拒绝：您的回答中有 75% 是“差不多”"),
        "ja": ("項目の 40% を超えて「ほぼ同じ」と回答した場合", "回答の 40% を超えて「ほぼ同じ」だったため、この研究はあなたについて終了しました。",
               "あなたの提出は、取り組みが不十分なため却下されました：回答の 75% が「ほぼ同じ」でした"),
    }  # fmt: skip

    def setUp(self) -> None:
        super().setUp()
        rules.register(ZERO_RULE)
        self.addCleanup(rules.unregister, "zeros")
        translate(self, ZERO_TRANSLATIONS)

    def study_in(self, language: str, limit: float | None = 0.4) -> Study:
        study = Study.objects.get(pk=self.study.pk)
        study.language, study.zero_share_limit = language, limit  # the column its migration would add
        return study

    def test_it_is_stated_named_and_given_as_the_reason_in_every_language(self) -> None:
        self.assertEqual(set(self.EXPECTED), set(Study.Language.values))
        for language, (stated, reason, rejection) in self.EXPECTED.items():
            study = self.study_in(language)
            with self.subTest(language=language), translation.override(language):
                instructions = render_to_string("studyapp/annotator/_rules.html", {"study": study, "rules": stated_rules(study)})
                self.assertIn(f'<li data-rule="zeros">{stated}</li>', instructions.replace("&quot;", '"'))
                page = render_to_string(
                    "studyapp/annotator/_excluded_reason.html", {"rule": "zeros", "reason": exclusion_reason(study, "zeros")}
                )
                self.assertIn(f'<p data-reason="zeros">{reason}</p>', page)
                excluded = QualityDecision(
                    action="exclude", rule="zeros", detail="zeros: 30 of 40", counts={"zeros": {"share": 0.75, "limit": 0.4}}
                )
                decision = suggest(
                    study, Annotator(status="excluded", platform="prolific"), PROLIFIC, None, excluded, SpeedNorm(0, None, None)
                )
                self.assertEqual((decision.action, decision.category), ("reject", PROLIFIC.rejection_reasons["effort"]))
                self.assertTrue(decision.message.startswith(rejection), decision.message)
                self.assertIn("40%", decision.message)

    def test_it_is_not_stated_while_its_limit_is_empty(self) -> None:
        study = self.study_in("en", limit=None)
        self.assertNotIn("zeros", [r.key for r in stated_rules(study)])
        instructions = render_to_string("studyapp/annotator/_rules.html", {"study": study, "rules": stated_rules(study)})
        self.assertNotIn('data-rule="zeros"', instructions)
