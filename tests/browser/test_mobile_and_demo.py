"""The item page on a narrow touch screen (the demo study's item page at two sizes: ``test_item_layout.py``)."""

from __future__ import annotations

from tests.browser.conftest import require_playwright

require_playwright()

from playwright.sync_api import expect  # noqa: E402

from studyapp.models import Preference  # noqa: E402
from tests.browser.annotator import Participant, annotator_of  # noqa: E402

PHONE = {"viewport": {"width": 375, "height": 740}, "is_mobile": True, "has_touch": True}


def test_a_narrow_touch_screen_stacks_the_lists(browser, server, make_study, artifacts) -> None:
    study = make_study()
    person = Participant(browser, server, **PHONE)
    try:
        person.onboard(study.slug, "olu")
        page = person.page
        left, right = page.locator(".serp-left"), page.locator(".serp-right")
        expect(page.get_by_text("Left / A", exact=True)).to_be_visible()
        expect(page.get_by_text("Right / B", exact=True)).to_be_visible()
        a, b = left.bounding_box(), right.bounding_box()
        assert a["y"] + a["height"] <= b["y"], "the right list should come below the left one"
        assert abs(a["width"] - b["width"]) < 1 and a["width"] > 375 * 0.85
        assert page.evaluate("document.documentElement.scrollWidth") <= 375, "the page scrolls sideways"
        assert left.locator(".result").count() == right.locator(".result").count() == 10
        page.screenshot(path=artifacts / "item-mobile.png", full_page=True)
        expect(page.locator("html")).to_have_class("js")
        expect(page.locator(".hint.keys")).to_be_hidden()  # no keyboard hint on a touch screen
        option = page.locator(".opt-7")
        assert option.bounding_box()["width"] >= 24 and option.bounding_box()["height"] >= 44  # touch targets
        option.tap()
        expect(page.get_by_role("radio", name="Right somewhat better", exact=True)).to_be_checked()
        person.submit_and_wait(lambda: page.get_by_role("button", name="Submit answer").tap())
        expect(page.locator("#progress-label")).to_have_text("Item 2 / 4")
    finally:
        person.close()
    assert [p.value for p in Preference.objects.filter(assignment__annotator=annotator_of(study, "olu"))] == [2]
