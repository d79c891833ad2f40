"""The staff dashboard in Chromium: a finished demo-like study, figures and tables, the live refresh, no CSP
violation, no axe-core violation.

Also the screenshot of docs/screenshots/dashboard.png: always written to ``test-artifacts/dashboard.png``;
``STUDYAPP_UPDATE_SCREENSHOTS=1`` copies it to docs/ (as the item page's screenshot).
"""

from __future__ import annotations

import math
import os
import random
import shutil
from datetime import UTC, datetime

from tests.browser.conftest import ROOT, require_playwright

require_playwright()

from playwright.sync_api import expect  # noqa: E402

from studyapp.models import Annotator, Assignment  # noqa: E402
from studyapp.services.analysis.status import study_status  # noqa: E402
from studyapp.services.participation import allocation  # noqa: E402
from studyapp.views import staff as staff_views  # noqa: E402
from tests.browser.accessibility import axe_violations  # noqa: E402
from tests.browser.annotator import Participant  # noqa: E402
from tests.browser.test_content_security_policy import watch_violations  # noqa: E402
from tests.studyapp.filled import answer_everything, exclude, fill_until_full  # noqa: E402

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
# How good the simulated users find each run: the canonical answer leans towards the better run, with noise.
QUALITY = {"demo-diversity": 1.6, "demo-mixed": 0.9, "demo-relevance": 0.5, "demo-weak": -1.2}


def simulated_user(item: Assignment, rng: random.Random) -> int:
    """The answer as shown: canonical = (quality of run_b - quality of run_a) + noise, re-oriented to the sides."""
    p = item.presentation
    canonical = max(-4, min(4, round(QUALITY[p.run_b.name] - QUALITY[p.run_a.name] + rng.gauss(0, 1.4))))
    return canonical if item.a_on_left else -canonical


def careful(rng: random.Random) -> float:
    return min(240.0, rng.lognormvariate(math.log(24), 0.45))


def hasty(rng: random.Random) -> float:
    return rng.uniform(2.0, 6.0)


def finished_study(make_study):
    """Two hasty annotators excluded for speed, then careful ones until every presentation has k valid answers."""
    study = make_study(
        runs=list(QUALITY), topics=["101", "102", "103", "104"], annotators_per_presentation=3, items_per_annotator=16, fast_limit=8
    )
    rng = random.Random(2026)
    at = START
    for n in (1, 2):
        annotator = allocation.register(study, platform="prolific", external_id=f"hasty-{n}", now=at)
        allocation.admit(annotator, now=at, rng=rng)
        at = answer_everything(annotator, rng, at, hasty, simulated_user)
        exclude(annotator, "more than 8 decisions under 10 s (16 of 16)")
    fill_until_full(study, rng, at, seconds=careful, choose=simulated_user)
    return study


def sign_in(staff: Participant, server: str) -> None:
    page = staff.page
    page.goto(f"{server}/admin/login/?next=/staff/")
    page.get_by_label("Username").fill("staff")
    page.get_by_label("Password").fill("browser-tests")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Studies")).to_be_visible()


def test_dashboard_of_a_finished_study(browser, server, make_study, artifacts, monkeypatch) -> None:
    study = finished_study(make_study)
    status = study_status(study)
    assert status["complete"]["total"] == status["presentations"]["topic"] + status["presentations"]["subtopic"]
    assert status["annotators"]["excluded"] == 2
    monkeypatch.setattr(staff_views, "REFRESH_SECONDS", 1)
    staff = Participant(browser, server, viewport={"width": 1280, "height": 900})
    violations = watch_violations(staff)
    try:
        sign_in(staff, server)
        page = staff.page
        page.get_by_role("link", name=study.name).click()
        expect(page.get_by_role("heading", name=study.name)).to_be_visible()
        live = page.locator("#live")
        expect(live.locator("svg.histogram")).to_be_visible()
        expect(live.locator("svg.histogram line.threshold")).to_have_count(1)
        expect(live.locator("svg.completion")).to_be_visible()
        expect(live.locator("svg.sides")).to_be_visible()
        expect(live).to_contain_text(f"{status['slots']['needed']} of {status['slots']['needed']}")
        expect(page.locator("table.agreement tbody tr")).to_have_count(2)
        expect(page.locator("tr.annotator-excluded")).to_have_count(2)
        # the live preview: the MUP ranking per level, the separation sentence, the report's link
        expect(live.locator("table.preview-ranking")).to_have_count(2)
        expect(live.locator("table.preview-ranking").first.locator("tbody tr")).to_have_count(5)
        expect(live.locator("p.separation")).to_contain_text("Assuming")  # the separation estimate says what it assumes
        expect(live.get_by_role("link", name="the full report")).to_have_attribute("href", f"/staff/{study.slug}/report/")
        expect(live.locator("section.preview")).to_contain_text("No best set yet: 4 topics with answers")  # 4 are too few for a claim
        assert axe_violations(page) == []
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=artifacts / "dashboard.png", full_page=True)
        if os.environ.get("STUDYAPP_UPDATE_SCREENSHOTS") == "1":
            (ROOT / "docs" / "screenshots").mkdir(exist_ok=True)
            shutil.copyfile(artifacts / "dashboard.png", ROOT / "docs" / "screenshots" / "dashboard.png")
        # the figures refresh without a reload: a third annotator excluded shows up in the cards
        exclude(Annotator.objects.filter(study=study, status=Annotator.Status.FINISHED).first(), "by staff: test")
        expect(live).to_contain_text("3 excluded", timeout=15_000)
        expect(page.locator("tr.annotator-excluded")).to_have_count(2)  # the annotator table is not part of the refresh
        # search by platform id
        page.get_by_label("Platform id contains").fill("hasty")
        page.get_by_role("button", name="Search").click()
        expect(page.locator("table.annotator-table tbody tr")).to_have_count(2)
        # a download
        with page.expect_download() as download:
            page.get_by_role("link", name="CSV", exact=True).click()
        assert download.value.suggested_filename == f"{study.slug}-preferences.csv"
        assert staff.errors == [], f"script errors: {staff.errors}"
        assert staff.external == []
    finally:
        staff.close()
    assert violations == [], "\n".join(violations)
