"""What the report page says (docs/studyapp.md#study-report): the best set and its wording, both forms
of MUP_b, Chen et al. Fig. 1(c), "–" without data, and the accessible markup (table headers, focusable
scrolling regions)."""

from __future__ import annotations

import re

import numpy as np
from django.template.loader import render_to_string

from evaluation.meta.bestset import best_set
from studyapp.services.analysis.report import build_report, render_html
from studyapp.services.analysis.report.page import STATISTIC_LABELS, best_set_summary
from studyapp.services.rehearsal.simulation import Plan, simulate_annotators
from tests.studyapp.base import BaseTestCase

TRUTH = "D#-nDCG@10"


def summary_with(chosen, pairs: int) -> dict:
    """A report summary holding ``chosen`` (a BestSet) at topic level, as build_report makes it."""
    row = chosen.table.iloc[0]
    best = {"measure": row["measure"], "value": row["MUP"], "low": row["MUP"] - 0.1, "high": min(row["MUP"] + 0.1, 1.0), "level": "topic"}
    return {"best": best, "best_set": {**chosen.as_dict(), "level": "topic"}, "pairs": {"topic": pairs}}


def planted(topics: int, seed: int = 0):
    """Pairs of ``topics`` topics whose preferences follow m0; m1 is m0 with a little noise, m2 and m3 with much."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=topics * 10)
    d = np.vstack([truth] + [truth + rng.normal(scale=s, size=truth.size) for s in (0.2, 3.0, 4.0)])
    p = np.clip(np.rint(2 * truth / truth.std() + rng.normal(size=(3, truth.size))), -4, 4).mean(axis=0)
    return best_set(d, p, ["m0", "m1", "m2", "m3"], clusters=np.repeat(np.arange(topics), 10), B=300, rng=1)


def text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


class BestSetWordingTestCase(BaseTestCase):
    def render(self, summary: dict) -> str:
        return text(render_to_string("studyapp/report/_best_set.html", {"summary": summary, "best_set": best_set_summary(summary)}))

    def test_a_claim_names_the_set_and_what_it_rests_on(self) -> None:
        chosen = planted(40)
        self.assertTrue(chosen.claim)
        self.assertNotIn("m3", chosen)
        said = self.render(summary_with(chosen, 400))
        self.assertTrue(
            f"Best set at topic level: {chosen.size} of 4 entries whose MUP is not significantly below another's" in said,
            f"Best set at topic level: {chosen.size} of 4 entries whose MUP is not significantly below another's",
        )
        self.assertTrue(
            "topic sign-flip test over 40 topics, 300 random flips, α = 0.05, corrected for the 3 rivals of each" in said,
            "topic sign-flip test over 40 topics, 300 random flips, α = 0.05, corrected for the 3 rivals of each",
        )
        for measure in chosen.measures:
            self.assertTrue(f"✓ {measure} MUP" in said, f"✓ {measure} MUP")
        self.assertNotIn("m3 MUP", said)
        self.assertTrue("on 400 run pairs" in said, "on 400 run pairs")
        self.assertNotIn("best metric", said.lower())

    def test_a_small_study_is_tested_exactly_and_names_merged_and_undefined_metrics(self) -> None:
        rng = np.random.default_rng(2)
        truth = rng.normal(size=80)
        d = np.vstack([truth, 2 * truth, truth + rng.normal(scale=3.0, size=80), np.zeros(80)])
        p = np.clip(np.rint(2 * truth / truth.std() + rng.normal(size=(3, 80))), -4, 4).mean(axis=0)
        chosen = best_set(d, p, ["m0", "twin", "m2", "flat"], clusters=np.repeat(np.arange(8), 10), B=300, rng=1)
        said = self.render(summary_with(chosen, 80))
        self.assertTrue("exact: every one of the 2^8 flips" in said, said)
        self.assertTrue("✓ m0 = twin MUP" in said, said)
        self.assertTrue("Undefined (tied on every pair or without a user preference, never contenders): flat." in said, said)

    def test_too_few_topics_claim_nothing(self) -> None:
        chosen = planted(3)
        self.assertFalse(chosen.claim)
        said = self.render(summary_with(chosen, 30))
        self.assertTrue(
            "No best set claimed at topic level: 3 topics are too few (at least 5)" in said,
            "No best set claimed at topic level: 3 topics are too few (at least 5)",
        )
        self.assertTrue("none is named the best" in said, "none is named the best")
        self.assertTrue("Highest MUP so far:" in said, "Highest MUP so far:")
        self.assertTrue("an estimate on 30 run pairs only" in said, "an estimate on 30 run pairs only")
        self.assertNotIn("✓", said)

    def test_no_answers(self) -> None:
        self.assertEqual(self.render({"best": None, "best_set": None, "pairs": {}}), "no answers yet")
        self.assertIsNone(best_set_summary({"best": None, "best_set": None, "pairs": {}}))


class ReportPageTestCase(BaseTestCase):
    """One simulated study (2 topics) answered once, its report built and rendered once: the page's tables, the
    dashboard's preview and Table 2's marks all read that finished study (none changes it)."""

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        simulate_annotators(cls.study, Plan(truth=TRUTH, noise=0.5, fast_share=0.0, seed=4))
        cls.report = build_report(cls.study, B=50, seed=5)
        cls.html = render_html(cls.report, standalone=True, figure_url=lambda stem, fmt: f"figures/{stem}.{fmt}")

    def test_both_forms_of_mup_b_are_columns_and_in_the_figure(self) -> None:
        self.assertIn("MUP_b (τ_b-consistent)", STATISTIC_LABELS.values())
        header = re.search(r'<table class="data metrics" id="metrics-topic">.*?</thead>', self.html, re.S).group(0)
        columns = re.findall(r'<th scope="col">([^<]*)</th>', header)
        self.assertEqual(
            columns, ["#", "metric", "MUP", "MUP_b (τ_b-consistent)", "MUP_b (Formula 3)", "τ", "τ_b", "n", "best set", "power"]
        )
        table = self.report.analysis.agreement["topic"].table
        whole = table[table["subset"] == "all"].set_index(["measure", "statistic"])["value"]
        row = re.search(rf"<td>{re.escape(TRUTH)}</td>(.*?)</tr>", self.html, re.S).group(1)
        cells = [text(c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        for k, statistic in enumerate(("MUP", "MUP_b", "MUP_b_published", "tau", "tau_b")):
            value = whole[(TRUTH, statistic)]
            self.assertTrue(cells[k].startswith("–" if np.isnan(value) else f"{value:.3f}"), (statistic, cells[k]))
        self.assertIn("MUP_b in both forms, tau_b-consistent and Formula 3", self.html)  # the figure's alternative text

    def test_figure_1c_per_level(self) -> None:
        for level in ("topic", "weighted", "subtopic"):
            block = re.search(rf'<table class="data subranges" id="subranges-{level}">(.*?)</table>', self.html, re.S).group(1)
            self.assertIn(f"Fig. 1(c): τ_b per preference subrange, all run pairs ({level} level)", block)
            self.assertEqual(len(re.findall(r'<th scope="row">', block)), len(self.report.analysis.measures))
        table = self.report.analysis.agreement["topic"].table
        rows = table[(table["measure"] == TRUTH) & (table["statistic"] == "tau_b")].set_index("subset")
        block = re.search(r'id="subranges-topic">.*?</table>', self.html, re.S).group(0)
        row = re.search(rf"<th scope=\"row\">{re.escape(TRUTH)}</th>(.*?)</tr>", block, re.S).group(1)
        cells = [text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for cell, subrange in zip(cells, ("(0-1]", "(1-2]", "(2-3]", "(3-4]"), strict=True):
            n, value = int(rows.loc[subrange, "n"]), rows.loc[subrange, "value"]
            shown = "–" if n == 0 or np.isnan(value) else f"{value:.2f}"
            self.assertEqual(cell, f"{shown} N={n}", subrange)

    def test_no_claim_with_two_topics(self) -> None:
        self.assertTrue(
            "No best set claimed at topic level: 2 topics are too few" in text(self.html),
            "No best set claimed at topic level: 2 topics are too few",
        )
        self.assertTrue("no claim" in text(self.html), "no claim")
        self.assertNotIn('class="in-best-set"', self.html)

    def test_every_header_has_text_and_scrolling_regions_take_the_focus(self) -> None:
        self.assertEqual(re.findall(r".{80}<th[^>]*>\s*</th>", self.html), [])
        for region in re.findall(r'<div class="scroll"[^>]*>', self.html):
            self.assertIn('tabindex="0"', region)
            self.assertIn("aria-label=", region)

    # The dashboard's preview names a best set only where the topics allow a claim, with n per metric.
    def test_dashboard_preview_without_a_claim(self) -> None:
        from django.contrib.auth import get_user_model
        from django.core.cache import cache
        from django.urls import reverse

        cache.clear()
        self.client.force_login(get_user_model().objects.create_superuser("staff", "staff@example.org", "pw-for-tests"))
        page = text(self.client.get(reverse("staff_study", args=[self.study.slug])).content.decode())
        self.assertIn(
            "No best set yet: 2 topics with answers, too few (at least 5) to test whether one metric agrees better than another", page
        )
        self.assertTrue("# metric MUP 95% interval n best set" in page, "# metric MUP 95% interval n best set")
        self.assertRegex(page, r"1 \S+@10 \d\.\d{3} .*? 6 no claim")  # n = the 6 topic-level run pairs
        self.assertNotIn("Best set so far", page)

    # Table 2 cells ordered as the MUP order are marked with a class, a sign and words; both readings of the order agreement.
    def test_marks_follow_the_flags(self) -> None:
        report, html = self.report, self.html
        analysis = report.analysis
        expected = order_flags(analysis.concordance, analysis.mup().to_dict())
        np.testing.assert_array_equal(analysis.concordance["order_vs_mup"].to_numpy(dtype=float), expected)  # the analysis's flags
        marked = analysis.concordance[analysis.concordance["order_vs_mup"].abs() == 1]
        self.assertFalse(marked.empty)
        gold = marked["gold"].value_counts().index[0]  # the gold standard with the most marked cells
        rows = analysis.concordance[analysis.concordance["gold"] == gold]
        for flag, css, mark, words in ((1, "order-agrees", "✓", "ordered as MUP"), (-1, "order-reversed", "✗", "ordered against MUP")):
            chosen = rows[rows["order_vs_mup"] == flag]
            if chosen.empty:
                continue
            r = chosen.iloc[0]
            cell = f"{r.concordance_2:.3f}/{r.concordance_1:.3f} ({r.disagreements})"  # row measure_2, column measure_1
            self.assertRegex(html, rf'<td class="{css}">{re.escape(cell)} <span class="mark" aria-hidden="true">{mark}</span>'
                             rf'<span class="visually-hidden">, {words}</span></td>')  # fmt: skip
        agree, against = int((rows["order_vs_mup"] == 1).sum()), int((rows["order_vs_mup"] == -1).sum())
        summary = f"Gold standard {gold}: {agree} cell pair{'s' if agree != 1 else ''} ordered as MUP, {against} against"
        self.assertTrue(summary in html, summary)

    def test_both_readings_of_the_order_agreement(self) -> None:
        report, html = self.report, text(self.html)
        ordering = report.analysis.ordering
        self.assertTrue(
            "gold cell-wise (Chen et al.) cells: as MUP / against / all per-metric τ_b (ours) p metrics" in html,
            "gold cell-wise (Chen et al.) cells: as MUP / against / all per-metric τ_b (ours) p metrics",
        )
        r = ordering[ordering["tau_cells"].notna()].iloc[0]
        tau_b = "–" if np.isnan(r.tau_b) else f"{r.tau_b:.3f}"
        self.assertTrue(
            f"{r.gold} {r.tau_cells:.3f} {int(r.agree)} / {int(r.disagree)} / {int(r.cells)} {tau_b}" in html,
            f"{r.gold} {r.tau_cells:.3f} {int(r.agree)} / {int(r.disagree)} / {int(r.cells)} {tau_b}",
        )


def order_flags(concordance, mup) -> list[float]:
    """Oracle of Table 2's marks: +1 when a cell's concordances are ordered as the two MUPs, -1 reversed, 0 a tie, NaN undefined."""
    out = []
    for r in concordance.itertuples():
        a, b = mup.get(r.measure_1, np.nan), mup.get(r.measure_2, np.nan)
        if not all(np.isfinite([a, b, r.concordance_1, r.concordance_2])):
            out.append(np.nan)
            continue
        dc, dm = r.concordance_1 - r.concordance_2, a - b
        out.append(0.0 if abs(dc) <= 1e-12 or abs(dm) <= 1e-12 else float(np.sign(dc) * np.sign(dm)))
    return out
