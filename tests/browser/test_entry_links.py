"""Study links in real Chromium: a Prolific link whose PROLIFIC_PID is empty is a bad link with a clear
page, never an anonymous participant."""

from __future__ import annotations

from tests.browser.conftest import require_playwright

require_playwright()

from playwright.sync_api import expect  # noqa: E402

from studyapp.models import Annotator  # noqa: E402
from tests.browser.annotator import Participant  # noqa: E402


def test_an_empty_prolific_pid_is_a_bad_link(browser, server, make_study) -> None:
    study = make_study()
    person = Participant(browser, server)
    try:
        response = person.page.goto(f"{server}/s/{study.slug}/?PROLIFIC_PID=&STUDY_ID=e2e&SESSION_ID=s-empty")
        assert response.status == 400
        page = person.page
        expect(page.get_by_role("heading", name="This link is not valid")).to_be_visible()
        expect(page.get_by_text("The link has no Prolific participant id (PROLIFIC_PID is empty)")).to_be_visible()
        expect(page.locator("[data-page=consent]")).to_have_count(0)
    finally:
        person.close()
    assert not Annotator.objects.filter(study=study).exists()
