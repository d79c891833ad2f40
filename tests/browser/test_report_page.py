"""The study report in Chromium: staff reach it from the dashboard, every section renders, the figure
loads, no Content-Security-Policy violation; anonymous visitors get the staff sign-in.

The screenshot of docs/screenshots/report.png is always written to ``test-artifacts/report.png``;
``STUDYAPP_UPDATE_SCREENSHOTS=1`` copies it to docs/ (as the other screenshots).
"""

from __future__ import annotations

import os
import shutil

from tests.browser.conftest import ROOT, require_playwright

require_playwright()

from playwright.sync_api import expect  # noqa: E402

from tests.browser.annotator import Participant  # noqa: E402
from tests.browser.test_content_security_policy import watch_violations  # noqa: E402
from tests.browser.test_staff_dashboard import finished_study, sign_in  # noqa: E402

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
        page.set_default_timeout(60_000)  # the first visit computes the report (B = 1000)
        page.goto(f"{server}/staff/{study.slug}/")
        link = page.get_by_role("link", name="study report")
        expect(link).to_have_attribute("href", f"/staff/{study.slug}/report/")
        link.click()
        expect(page.get_by_role("heading", name="Which metric agrees with people?")).to_be_visible(timeout=60_000)
        for title in SECTIONS:
            expect(page.get_by_role("heading", name=title)).to_be_visible()
        expect(page.locator("#metrics-topic tbody tr")).to_have_count(31)  # every registered metric
        expect(page.locator("table.heatmap").first).to_contain_text("N=")
        bars = page.locator("img[alt^='MUP, MUP_b, tau, tau_b']").first
        bars.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=bars.element_handle(), timeout=60_000)
        expect(page.locator("pre.commands")).to_contain_text("python -m evaluation meta agreement")
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=artifacts / "report.png")
        if os.environ.get("STUDYAPP_UPDATE_SCREENSHOTS") == "1":
            (ROOT / "docs" / "screenshots").mkdir(exist_ok=True)
            shutil.copyfile(artifacts / "report.png", ROOT / "docs" / "screenshots" / "report.png")
        assert staff.errors == [], f"script errors: {staff.errors}"
        assert staff.external == []
    finally:
        staff.close()
    assert violations == [], "\n".join(violations)
