"""The review page in Chromium (/staff/<slug>/review/): a finished simulated study on Prolific, one decision changed,
the dry run, Apply against the local server playing Prolific's API (tests/studyapp/prolific_server.py), the audit
log; no CSP violation, no axe-core violation.

The screenshot of docs/screenshots/platform-review.png is always written to ``test-artifacts/platform-review.png``;
``STUDYAPP_UPDATE_SCREENSHOTS=1`` copies it to docs/.
"""

from __future__ import annotations

import io
from decimal import Decimal

from tests.browser.conftest import require_playwright, screenshot

require_playwright()

from django.core.management import call_command  # noqa: E402
from playwright.sync_api import expect  # noqa: E402

from studyapp.models import Annotator, PlatformCall  # noqa: E402
from studyapp.services.quality.control import quality_check  # noqa: E402
from studyapp.services.rehearsal.simulation import Plan, simulate_annotators  # noqa: E402
from studyapp.services.review import audit  # noqa: E402
from tests.browser.accessibility import axe_violations  # noqa: E402
from tests.browser.annotator import Participant  # noqa: E402
from tests.browser.test_content_security_policy import watch_violations  # noqa: E402
from tests.browser.test_staff_dashboard import sign_in  # noqa: E402
from tests.studyapp.prolific_server import FakeProlific  # noqa: E402

TOKEN = "browser-test-token"


def reviewed_study(make_study):
    """Eight simulated Prolific participants (three answering at random), then a strict check rule excludes those who failed a check."""
    study = make_study(items_per_annotator=6, check_share=0.34, fast_limit=1000, check_fail_limit=None)
    simulate_annotators(study, Plan(truth="D#-nDCG@10", noise=0.5, fast_share=0.4, n=8, seed=4))
    study.check_fail_limit, study.bonus_amount = 0, Decimal("0.50")
    study.save()
    quality_check(study)
    return study


def test_review_and_apply_on_prolific(browser, server, make_study, artifacts, monkeypatch) -> None:
    study = reviewed_study(make_study)
    annotators = list(Annotator.objects.filter(study=study).order_by("created_at"))
    finished = [a for a in annotators if a.status == Annotator.Status.FINISHED]
    excluded = [a for a in annotators if a.status == Annotator.Status.EXCLUDED]
    assert finished and excluded
    with FakeProlific(TOKEN) as api:
        for a in annotators:
            api.add(a.external_ids["SESSION_ID"], a.external_id, a.external_ids["STUDY_ID"])
        api.fail("POST", r"/pay/$", 503)  # the first pay attempt fails, the client pays on its retry
        monkeypatch.setenv("PROLIFIC_API_TOKEN", TOKEN)
        monkeypatch.setenv("PROLIFIC_API_URL", api.url)
        staff = Participant(browser, server, viewport={"width": 1400, "height": 900})
        violations = watch_violations(staff)
        try:
            sign_in(staff, server)
            page = staff.page
            page.goto(f"{server}/staff/{study.slug}/")
            page.get_by_role("link", name="review: approve, reject and pay bonuses on the platform").click()
            expect(page.get_by_role("heading", name=f"Review {study.name} on the platform")).to_be_visible()
            expect(page.locator("table.review-table tbody tr")).to_have_count(len(annotators))
            expect(page.locator("tr.review-reject")).to_have_count(len(excluded))
            # staff give one finisher a larger bonus
            lucky = finished[0].pseudonym
            page.locator(f"#bonus-{lucky}").fill("1.50")
            page.locator(f"#row-{lucky}").get_by_role("button", name="Save").click()
            expect(page.locator("ul.messages")).to_contain_text(f"{lucky}: decision saved (approve).")
            expect(page.locator(f"#row-{lucky}")).to_contain_text("staff staff")
            # the dry run sends nothing
            page.get_by_role("link", name="Dry run").click()
            expect(page.locator("ol.plan")).to_contain_text("pay a bonus of 1.50")
            assert api.requests == []
            # apply: the box must be ticked
            page.get_by_label("I checked the decisions above").check()
            page.get_by_role("button", name="Apply").click()
            expect(page.locator("ul.messages")).to_contain_text("Apply queued")
            assert api.requests == []  # the request only queued it: the job worker sends
            call_command("run_jobs", "--once", stdout=io.StringIO())
            page.reload()
            expect(page.locator("#apply-job")).to_contain_text("0 failed")
            expect(page.locator("table.audit-table tbody tr.call-failed")).to_have_count(1)  # the 503, then paid
            expect(page.locator("table.audit-table")).to_contain_text("pay_bonus")
            expect(page.locator(f"#row-{lucky}")).to_contain_text("approved on Prolific; bonus 1.50 paid")
            assert axe_violations(page) == []
            screenshot(page, artifacts, "platform-review.png")
            assert violations == []
            assert staff.errors == []
        finally:
            staff.context.close()
    assert sorted(sid for sid, _ in api.paid) == sorted(a.external_ids["SESSION_ID"] for a in finished)
    assert dict(api.paid)[finished[0].external_ids["SESSION_ID"]] == Decimal("1.50")
    assert {r.body["action"] for r in api.calls("POST", "/transition/")} == {"APPROVE", "REJECT"}
    assert PlatformCall.objects.filter(study=study).exclude(response=audit.SENT).count() == len(api.requests)
