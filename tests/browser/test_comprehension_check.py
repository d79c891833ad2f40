"""The comprehension check in real Chromium: a failed attempt names the wrong answer and keeps the others."""

from __future__ import annotations

from tests.browser.conftest import require_playwright

require_playwright()

from playwright.sync_api import expect  # noqa: E402

from tests.browser.annotator import CHECK_ANSWERS, Participant, annotator_of  # noqa: E402


def test_a_failed_attempt_says_which_answer_was_wrong_and_keeps_the_rest(browser, server, make_study) -> None:
    study = make_study()
    person = Participant(browser, server)
    try:
        person.onboard(study.slug, "quiz", check=[CHECK_ANSWERS[0], "About the same", CHECK_ANSWERS[2]])
        page = person.page
        expect(page.get_by_role("alert").first).to_contain_text("Your answer to question 2 was not right")
        expect(page.get_by_role("alert").first).to_be_focused()  # focus moves to the feedback, not left on the page
        expect(page.get_by_text("Attempt 2 of 2")).to_be_visible()
        expect(page.get_by_label(CHECK_ANSWERS[0], exact=True)).to_be_checked()  # kept
        expect(page.get_by_label(CHECK_ANSWERS[2], exact=True)).to_be_checked()  # kept
        wrong = page.locator("fieldset[data-question=answer]")
        expect(wrong).to_contain_text("This answer was not right")
        for radio in wrong.get_by_role("radio").all():
            expect(radio).not_to_be_checked()  # to be chosen again
        page.get_by_label("Left much better", exact=True).check()
        page.get_by_role("button", name="Check my answers").click()
        page.wait_for_url("**/item/*/")
        expect(page.locator("#progress-label")).to_have_text("Item 1 / 4")
    finally:
        person.close()
    assert annotator_of(study, "quiz").comprehension_attempts == 2
