"""Each platform's own way out of a study, in real Chromium: an MTurk worker in a study with a Prolific
redirect URL reaches the MTurk submit (and never Prolific); an anonymous participant sees the code."""

from __future__ import annotations

import re
from urllib.parse import parse_qs

from tests.browser.conftest import require_playwright

require_playwright()

from playwright.sync_api import expect  # noqa: E402

from studyapp.models import Annotator  # noqa: E402
from tests.browser.annotator import MTURK_SANDBOX, Participant, preferences  # noqa: E402

MTURK = {"workerId": "W-E2E-1", "assignmentId": "ASG-E2E-1", "hitId": "HIT-E2E", "turkSubmitTo": MTURK_SANDBOX}


def test_an_mturk_worker_reaches_the_mturk_submit_and_never_prolific(browser, server, make_study, settings) -> None:
    settings.STUDYAPP_REDIRECT_SECONDS = 1
    study = make_study()  # its redirect_url is Prolific's
    person = Participant(browser, server)
    try:
        person.onboard(study.slug, query=MTURK)
        for value in (2, -1, 0, 3):
            person.answer(value)
        page = person.page
        expect(page.locator("[data-page=done]")).to_be_visible()
        done_url = page.url
        page.wait_for_timeout(2_500)  # longer than the redirect delay of a Prolific participant
        assert page.url == done_url, "an MTurk worker was sent away from the completion page"
        assert page.locator("meta[http-equiv=refresh]").count() == 0
        submit = page.get_by_role("button", name="Submit the task to MTurk")
        expect(submit).to_be_visible()
        assert page.get_by_role("button").count() == 1
        assert (
            page.locator("main a:not(.withdraw-link)").count() == 0
        )  # the submit is the only action (besides withdrawing): no link to another platform
        person.submit_and_wait(submit.click)
        assert page.url == f"{MTURK_SANDBOX}/mturk/externalSubmit"
        assert len(person.mturk_posts) == 1
        fields = parse_qs(person.mturk_posts[0])
        assert fields == {"assignmentId": ["ASG-E2E-1"], "completionCode": ["E2E-DONE"]}
        assert not any("prolific" in url for url in person.visited)
        assert person.errors == []
    finally:
        person.close()
    worker = Annotator.objects.get(study=study, platform="mturk", external_id="W-E2E-1")
    assert worker.status == Annotator.Status.FINISHED
    assert [p.value for p in preferences(worker)] == [2, -1, 0, 3]


def test_an_anonymous_participant_sees_the_code_and_stays(browser, server, make_study, settings) -> None:
    settings.STUDYAPP_REDIRECT_SECONDS = 1
    study = make_study(require_platform_id=False)  # a Prolific study that also takes an anonymous link
    person = Participant(browser, server)
    try:
        person.onboard(study.slug)
        for value in (0, 1, -1, 2):
            person.answer(value)
        page = person.page
        expect(page.locator("#completion-code")).to_have_text("E2E-DONE")
        expect(page.get_by_text("Please keep this code")).to_be_visible()
        page.get_by_role("button", name="Copy the code").click()  # copies, or selects the code where the clipboard is closed
        expect(page.locator(".code-box .copied")).to_have_text(re.compile(r"^(Copied\.|Selected: press Ctrl\+C to copy\.)$"))
        assert page.evaluate("window.getSelection().toString()") == "E2E-DONE"  # selected either way
        page.wait_for_timeout(2_500)
        assert page.url.endswith(f"/s/{study.slug}/done/")
        assert not any("prolific" in url for url in person.visited)
    finally:
        person.close()
