"""The demo study's item page at a laptop's 1366x768 and a phone's 390x844, in real Chromium: the
scale is reachable without scrolling away from the two lists (a sticky answer bar), every point is
named in words and the choice is echoed, the phone page stays short, and the page weighs < 60 KB.

Measurements go to ``test-artifacts/item-layout.json`` and the screenshots to ``test-artifacts/``;
``STUDYAPP_UPDATE_SCREENSHOTS=1`` also copies them to ``docs/screenshots/`` (item-desktop.png, used
by the README, and item-phone.png).
"""

from __future__ import annotations

import json
import os
import shutil

from tests.browser.conftest import ROOT, require_playwright

require_playwright()

from playwright.sync_api import expect  # noqa: E402

from tests.browser.annotator import Participant  # noqa: E402

LAPTOP = {"viewport": {"width": 1366, "height": 768}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
PAGE_BUDGET = 60 * 1024  # bytes: the item page with everything it loads, uncompressed
# px. The item admission happens to draw decides the height, through its snippets: demo items measured 2,405-2,824 px on a
# phone (the lists 1,793-2,212 px, everything else 612-635 px); before the lists were made compact they were
# 3,143-3,370 px (3,801 in the issue), which this still refuses.
PHONE_MAX_HEIGHT = 3_000
# The page without its lists grows with the topic's needs listed above them: 612-705 px measured over demo items.
PHONE_MAX_CHROME = 800  # px: the page without its two result lists (query, needs, scale, links)
WORDS = {
    "Left much better": "much better",
    "Left better": "better",
    "Left somewhat better": "somewhat better",
    "Left slightly better": "slightly better",
    "About the same": "About the same",
    "Right slightly better": "slightly better",
    "Right somewhat better": "somewhat better",
    "Right better": "better",
    "Right much better": "much better",
}


def weight(page) -> tuple[int, dict[str, int]]:
    """Uncompressed bytes of the page and everything it loaded (the Resource Timing API counts cache hits too)."""
    sizes = page.evaluate(
        """() => Object.fromEntries([...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")]
                                    .map(e => [e.name, e.decodedBodySize]))"""
    )
    return sum(sizes.values()), sizes


def publish(artifacts, name: str) -> None:
    if os.environ.get("STUDYAPP_UPDATE_SCREENSHOTS") == "1":
        (ROOT / "docs" / "screenshots").mkdir(exist_ok=True)
        shutil.copyfile(artifacts / name, ROOT / "docs" / "screenshots" / name)


def test_the_item_page_on_a_laptop_and_a_phone(browser, server, artifacts) -> None:
    measured: dict[str, dict] = {}
    laptop = Participant(browser, server, **LAPTOP)
    try:
        laptop.onboard("demo-study")
        page = laptop.page
        page.wait_for_load_state("load")
        total, sizes = weight(page)
        assert total < PAGE_BUDGET, f"the item page weighs {total} bytes: {sizes}"
        assert any(url.endswith(".css") for url in sizes) and any(url.endswith(".js") for url in sizes)
        assert laptop.external == []

        # Every point is named in words on the page, and the names are the radio buttons' accessible names.
        scale = page.get_by_role("group", name="Which result list is better")
        for name, word in WORDS.items():
            radio = scale.get_by_role("radio", name=name, exact=True)
            expect(radio).to_have_count(1)
            label = radio.locator("xpath=..")  # the radio's label.opt
            expect(label.locator(".word")).to_have_text(word)
            expect(label.locator(".word")).to_be_visible()
        echo = page.locator("#choice-echo")
        expect(echo).to_have_text("Your answer: none yet", use_inner_text=True)

        bar = page.locator("form#answer")
        lists = page.locator(".serps")
        box, top = bar.bounding_box(), lists.bounding_box()
        measured["laptop"] = {
            "viewport": LAPTOP["viewport"],
            "page_height": page.evaluate("document.documentElement.scrollHeight"),
            "answer_bar_top": round(box["y"]),
            "answer_bar_height": round(box["height"]),
            "lists_top": round(top["y"]),
            "weight_bytes": total,
            "responses": sizes,
        }
        # Reachable at once: the whole bar is on screen, below the start of the two lists ...
        assert top["y"] < box["y"] and box["y"] + box["height"] <= 768, measured["laptop"]
        assert box["height"] <= 768 * 0.3, "the answer bar hides too much of the lists"
        page.screenshot(path=artifacts / "item-desktop.png")
        # ... and it stays there while the participant reads further down the lists.
        page.evaluate("() => window.scrollTo(0, 600)")
        assert page.evaluate("() => window.scrollY") == 600
        box = bar.bounding_box()
        assert box["y"] + box["height"] <= 768 and box["y"] > 768 * 0.6
        assert page.locator(".serp-left .result").nth(5).is_visible()
        page.locator(".opt-7").click()
        expect(echo).to_have_text("Your answer: Right is somewhat better", use_inner_text=True)
        page.keyboard.press("2")
        expect(echo).to_have_text("Your answer: Left is better", use_inner_text=True)
        page.keyboard.press("5")
        expect(echo).to_have_text("Your answer: Both are about the same", use_inner_text=True)
        assert laptop.errors == []
    finally:
        laptop.close()

    phone = Participant(browser, server, **PHONE)
    try:
        phone.onboard("demo-study")
        page = phone.page
        height = page.evaluate("document.documentElement.scrollHeight")
        measured["phone"] = {"viewport": PHONE["viewport"], "page_height": height}
        page.screenshot(path=artifacts / "item-phone.png", full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, "the page scrolls sideways"
        assert height <= PHONE_MAX_HEIGHT, measured["phone"]
        chrome = height - page.locator(".serps").bounding_box()["height"]
        assert chrome <= PHONE_MAX_CHROME, {**measured["phone"], "without_lists": chrome}
        for name in WORDS:  # on a phone each point shows its whole name ("Left much better")
            label = page.get_by_role("radio", name=name, exact=True).locator("xpath=..")
            expect(label.locator(".text")).to_have_text(name)
            expect(label.locator(".text")).to_be_visible()
            assert label.bounding_box()["height"] >= 44  # touch targets
        page.get_by_role("radio", name="Right much better", exact=True).check()
        expect(page.locator("#choice-echo")).to_have_text("Your answer: Right is much better", use_inner_text=True)
    finally:
        phone.close()
    (artifacts / "item-layout.json").write_text(json.dumps(measured, indent=1) + "\n")
    publish(artifacts, "item-desktop.png")
    publish(artifacts, "item-phone.png")
