"""Progressive enhancement in real Chromium: the plain forms work with JavaScript off, and the script
keeps a choice made before it ran (a slow device or network).

The second case was the cause of the rare "element is not enabled" failure of the browser tests: a
participant (or Playwright, which may act as soon as an element is visible) chose a point before the
deferred script ran, the script then cleared every radio button, and Submit stayed disabled.
"""

from __future__ import annotations

from tests.browser.conftest import require_playwright

require_playwright()

from playwright.sync_api import expect  # noqa: E402

from studyapp.models import Annotator, Preference  # noqa: E402
from tests.browser.annotator import Participant, annotator_of, preferences  # noqa: E402


def test_a_whole_session_without_javascript(browser, server, make_study) -> None:
    study = make_study()
    person = Participant(browser, server, java_script_enabled=False)
    try:
        person.onboard(study.slug, "plain")  # consent, instructions, the practice item and the check: plain forms
        page = person.page
        submit = page.get_by_role("button", name="Submit answer")
        expect(submit).to_be_enabled()
        first = person.assignment_id()
        submit.click()  # nothing chosen: the browser asks for a choice (required), nothing is posted
        assert page.evaluate("() => document.querySelector('input[name=value]').validity.valueMissing")
        assert page.url.endswith(f"/item/{first}/")
        assert not Preference.objects.filter(assignment_id=first).exists()
        expect(page.locator(".hint.keys")).to_be_hidden()  # the keys need the script
        page.locator(".opt-2").click()  # the choice is echoed in words by the stylesheet alone
        expect(page.locator("#choice-echo")).to_have_text("Your answer: Left is better", use_inner_text=True)
        for value in (-3, 0, 4, 1):
            person.answer(value)  # the form posts, the server redirects to the next item
        expect(page.locator("#completion-code")).to_have_text("E2E-DONE")
    finally:
        person.close()
    annotator = annotator_of(study, "plain")
    assert annotator.status == Annotator.Status.FINISHED
    stored = preferences(annotator)
    assert [p.value for p in stored] == [-3, 0, 4, 1]
    assert all(p.client_ms is None and p.server_seconds is not None for p in stored)  # no browser timings without the script


def test_a_choice_made_before_the_script_ran_is_kept(browser, server, make_study) -> None:
    study = make_study()
    person = Participant(browser, server)
    person.delay_script(2500)
    try:
        # The practice item is answered before the script runs (this is what failed now and then).
        person.onboard(study.slug, "early")
        page = person.page
        html = page.locator("html")
        first = person.assignment_id()
        expect(html).not_to_have_class("js")  # the script has not run yet
        page.locator(".opt-3").click()
        expect(html).to_have_class("js", timeout=5_000)  # now it has
        expect(page.get_by_role("radio", name="Left somewhat better", exact=True)).to_be_checked()
        expect(page.get_by_role("button", name="Submit answer")).to_be_enabled()
        person.submit_and_wait(lambda: page.get_by_role("button", name="Submit answer").click())
        assert person.errors == []
    finally:
        person.close()
    assert annotator_of(study, "early").practice_value == -3
    stored = Preference.objects.get(assignment_id=first)
    assert stored.value == -2
    assert stored.client_ms is not None  # sent by the script, with its timings
