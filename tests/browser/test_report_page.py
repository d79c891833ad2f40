"""The study report in Chromium: staff reach it from the dashboard, every section renders, the figure
loads, no Content-Security-Policy violation, no axe-core violation; anonymous visitors get the staff
sign-in. The report of the demo's simulated study (what ``make run`` leaves) shows its best set, Fig.
1(c) and both forms of MUP_b.

The screenshots of docs/screenshots/report.png (the simulated demo study's report) are always written
to ``test-artifacts/``; ``STUDYAPP_UPDATE_SCREENSHOTS=1`` copies them to docs/ (as the other screenshots).
"""

from __future__ import annotations

import os
import shutil

from tests.browser.conftest import ROOT, require_playwright

require_playwright()

from playwright.sync_api import expect  # noqa: E402

from studyapp.services.analysis.study_analysis import study_measures  # noqa: E402
from tests.browser.accessibility import axe_violations  # noqa: E402
from tests.browser.annotator import Participant  # noqa: E402
from tests.browser.test_content_security_policy import watch_violations  # noqa: E402
from tests.browser.test_staff_dashboard import finished_study, sign_in  # noqa: E402

STUDIED = study_measures(10)  # every registered metric but Judged (docs/metrics.md#trec_eval-measures)
SECTIONS = ("1. Summary", "2. User preferences", "3. Agreement", "4. tau_b per Delta bin", "5. Intuitiveness", "6. Settings")


def test_report_page(browser, server, make_study, artifacts) -> None:
    study = finished_study(make_study)
    report = f"{server}/staff/{study.slug}/report/"
    anonymous = Participant(browser, server)
    try:
        anonymous.page.goto(report)
        expect(anonymous.page.get_by_label("Username")).to_be_visible()  # the staff sign-in, not the report
    finally:
        anonymous.close()
    staff = Participant(browser, server, viewport={"width": 1280, "height": 900})
    violations = watch_violations(staff)
    try:
        sign_in(staff, server)
        page = staff.page
        page.set_default_timeout(180_000)  # the first visit computes the report (B = 1000; minutes on a busy machine)
        page.goto(f"{server}/staff/{study.slug}/")
        link = page.get_by_role("link", name="study report")
        expect(link).to_have_attribute("href", f"/staff/{study.slug}/report/")
        link.click()
        expect(page.get_by_role("heading", name="Which metric agrees with people?")).to_be_visible(timeout=180_000)
        for title in SECTIONS:
            expect(page.get_by_role("heading", name=title)).to_be_visible()
        expect(page.locator("#metrics-topic tbody tr")).to_have_count(len(STUDIED))  # every registered metric but Judged
        expect(page.locator("table.heatmap").first).to_contain_text("N=")
        bars = page.locator("img[alt^='MUP, MUP_b, tau, tau_b']").first
        bars.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=bars.element_handle(), timeout=60_000)
        expect(page.locator("pre.commands")).to_contain_text("python -m evaluation meta agreement")
        assert axe_violations(page) == []
        page.get_by_text("Fig. 1(a) and (b)").first.click()  # the per-metric grids, folded by default
        assert axe_violations(page) == []
        assert staff.errors == [], f"script errors: {staff.errors}"
        assert staff.external == []
    finally:
        staff.close()
    assert violations == [], "\n".join(violations)


def test_report_of_the_simulated_demo_study(browser, server, artifacts) -> None:
    """Must show (issue 21): the best set, Fig. 1(c), Table 2's marks, both MUP_b forms; the screenshots of docs/."""
    from studyapp.services.rehearsal.demo import load_demo

    study = load_demo(staff_password="browser-tests", simulated=True).simulated
    staff = Participant(browser, server, viewport={"width": 1280, "height": 900})
    violations = watch_violations(staff)
    try:
        sign_in(staff, server)
        page = staff.page
        page.set_default_timeout(180_000)
        page.goto(f"{server}/staff/{study.slug}/report/")
        summary = page.locator("#summary")
        expect(summary).to_contain_text("Best set at topic level")
        expect(summary.locator("ul.best-set li").first).to_contain_text("✓")
        expect(page.locator("#metrics-topic thead")).to_contain_text("MUP_b (τ_b-consistent)")
        expect(page.locator("#metrics-topic thead")).to_contain_text("MUP_b (Formula 3)")
        expect(page.locator("#metrics-topic tbody tr.in-best-set").first).to_contain_text("✓ in")
        expect(page.locator("#subranges-topic caption")).to_contain_text("Fig. 1(c)")
        expect(page.locator("#subranges-topic tbody tr")).to_have_count(len(STUDIED))
        expect(page.locator("table.matrix td.order-agrees").first).to_contain_text("✓")  # Table 2: cells ordered as MUP
        expect(page.locator("table.ordering thead")).to_contain_text("cell-wise (Chen et al.)")
        expect(page.locator("table.ordering thead")).to_contain_text("per-metric τ_b (ours)")
        assert axe_violations(page) == []
        # Wide tables (the intuitiveness matrix: one column per metric) scroll in their own region: the page
        # keeps the window's width from a phone to a wide screen, every fold open.
        opened = page.evaluate("[...document.querySelectorAll('details')].map(d => { const was = d.open; d.open = true; return was; })")
        for width in (320, 768, 1280, 1920):
            page.set_viewport_size({"width": width, "height": 900})
            assert page.evaluate("document.documentElement.scrollWidth") <= width, width
            assert page.evaluate("document.querySelector('table.matrix').parentElement.scrollWidth") > width  # it scrolls
        page.evaluate("states => document.querySelectorAll('details').forEach((d, i) => { d.open = states[i]; })", opened)
        page.set_viewport_size({"width": 1280, "height": 900})
        page.screenshot(path=artifacts / "report.png")
        summary.screenshot(path=artifacts / "report-summary.png")
        page.locator("#subranges-topic").screenshot(path=artifacts / "report-fig1c.png")
        if os.environ.get("STUDYAPP_UPDATE_SCREENSHOTS") == "1":
            (ROOT / "docs" / "screenshots").mkdir(exist_ok=True)
            for name in ("report.png", "report-summary.png", "report-fig1c.png"):
                shutil.copyfile(artifacts / name, ROOT / "docs" / "screenshots" / name)
        assert staff.errors == [], f"script errors: {staff.errors}"
        assert staff.external == []
    finally:
        staff.close()
    assert violations == [], "\n".join(violations)
