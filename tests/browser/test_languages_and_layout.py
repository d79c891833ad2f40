"""Participant pages in Chinese and Japanese, the fair rules, and the scale's layout, in real Chromium.

* A study with ``language`` zh-hans and one with ja, walked from the link to the completion page:
  every page has its ``lang`` and shows none of the English texts of the catalogue (the visible text
  checked against every msgid, tests/studyapp/catalogue.py). Screenshots in ``test-artifacts/``;
  ``STUDYAPP_UPDATE_SCREENSHOTS=1`` copies them to ``docs/screenshots/`` (i18n-*.png).
* The nine scale labels never overlap from 320 to 1920 px wide, in English, Chinese and Japanese
  (their bounding boxes, measured; 768-960 px overlapped before: "somewhslightly").
* The instructions state the speed rule with the study's numbers; a participant excluded for fast
  answers is told why and what to do; a study's minimum window width gives way to a friendly note.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable

from tests.browser.conftest import ROOT, require_playwright

require_playwright()

from playwright.sync_api import expect  # noqa: E402

from tests.browser.annotator import Participant  # noqa: E402
from tests.studyapp.catalogue import english_left  # noqa: E402

WIDTHS = (320, 390, 768, 800, 900, 960, 1024, 1366, 1920)
RIGHT_ANSWERS = {"compare": "lists", "answer": "left", "same": "equal"}
PUBLISHED = ("consent", "instructions", "item", "excluded", "too-narrow")  # copied to docs/screenshots (the others: test-artifacts)


def publish(artifacts, name: str) -> None:
    if os.environ.get("STUDYAPP_UPDATE_SCREENSHOTS") == "1":
        (ROOT / "docs" / "screenshots").mkdir(exist_ok=True)
        shutil.copyfile(artifacts / name, ROOT / "docs" / "screenshots" / name)


class Walk:
    """A participant going through a study by the page's structure, not its words (any language)."""

    def __init__(self, participant: Participant, language: str, artifacts, prefix: str) -> None:
        self.p, self.page, self.language, self.artifacts, self.prefix = participant, participant.page, language, artifacts, prefix
        self.seen: list[str] = []

    def check(self, name: str, *, shot: bool = False) -> str:
        """The page is in the study's language: its lang, and no English text of the catalogue."""
        page = self.page
        page.wait_for_load_state("load")
        assert page.locator("html").get_attribute("lang") == self.language, (name, page.url)
        # An item page's query, needs and results are the collection's data (English in the demo), not page texts.
        text = page.evaluate(
            """() => { const body = document.body.cloneNode(true);
                       if (location.pathname.includes("/item/")) body.querySelectorAll(".results, .query, .needs, .need").forEach(e => e.remove());
                       document.documentElement.appendChild(body); const t = body.innerText; body.remove(); return t; }"""
        )
        left = english_left(text, self.language)
        assert left == [], f"{name}: English left on the {self.language} page: {left}\n{text[:1500]}"
        self.seen.append(name)
        if shot:
            file = f"{self.prefix}-{name}.png"
            page.screenshot(path=str(self.artifacts / file), full_page=name == "instructions")
            if name in PUBLISHED:
                publish(self.artifacts, file)
        return text

    def onboard(self, slug: str, pid: str, *, on_instructions: Callable[[], None] | None = None) -> None:
        """Arrive, consent, read the instructions (``on_instructions`` is called there), answer the practice item
        and give the right comprehension answers, without checking the pages; ends on item 1."""
        page = self.page
        self.p.arrive(slug, pid)
        page.locator("#id_agree").check()
        page.locator("form button.primary").click()
        if on_instructions is not None:
            on_instructions()
        page.locator("[data-page=instructions] form button").click()
        page.locator(".opt-2").click()
        page.locator("form#answer button[type=submit]").click()
        page.locator("[data-page=practice-feedback] a.button").click()
        for name, value in RIGHT_ANSWERS.items():
            page.locator(f"input[name={name}][value={value}]").check()
        page.locator("[data-page=comprehension] button").click()
        page.wait_for_url("**/item/*/")

    def through(self, slug: str, pid: str) -> None:
        page = self.page
        self.p.arrive(slug, pid)
        expect(page.locator("[data-page=consent]")).to_be_visible()
        self.check("consent", shot=True)
        page.locator("#id_agree").check()
        page.locator("form button.primary").click()
        expect(page.locator("[data-page=instructions]")).to_be_visible()
        self.check("instructions", shot=True)
        page.locator("[data-page=instructions] form button").click()
        expect(page.locator("[data-page=practice]")).to_be_visible()
        self.check("practice")
        page.locator(".opt-2").click()
        page.locator("form#answer button[type=submit]").click()
        expect(page.locator("[data-page=practice-feedback]")).to_be_visible()
        self.check("practice-feedback")
        page.locator("[data-page=practice-feedback] a.button").click()
        expect(page.locator("[data-page=comprehension]")).to_be_visible()
        page.locator("input[name=compare][value=speed]").check()  # one wrong answer first: the notice and the summary
        page.locator("input[name=answer][value=left]").check()
        page.locator("input[name=same][value=equal]").check()
        page.locator("[data-page=comprehension] button").click()
        expect(page.locator("fieldset.wrong")).to_have_count(1)
        self.check("comprehension", shot=True)
        for name, value in RIGHT_ANSWERS.items():
            page.locator(f"input[name={name}][value={value}]").check()
        page.locator("[data-page=comprehension] button").click()
        page.wait_for_url("**/item/*/")
        page.locator(".opt-3").click()
        expect(page.locator("#choice-echo")).not_to_contain_text("Your answer")
        # The chosen sentence moves to the next line whole rather than breaking inside a word ("や/や良い").
        lines = page.evaluate("[...document.querySelectorAll('#choice-echo span')].filter(s => getComputedStyle(s).display !== 'none')"
                              ".map(s => s.getClientRects().length)")  # fmt: skip
        assert lines == [1], lines
        self.check("item", shot=True)
        for _ in range(4):
            if "/item/" not in page.url:
                break
            page.locator(".opt-3").click()
            self.p.submit_and_wait(lambda: page.locator("form#answer button[type=submit]").click())
        expect(page.locator("[data-page=done]")).to_be_visible()
        self.check("done", shot=True)


def test_a_chinese_and_a_japanese_study_on_every_page(browser, server, make_study, artifacts) -> None:
    for language in ("zh-hans", "ja"):
        study = make_study(language=language)
        participant = Participant(browser, server)
        try:
            walk = Walk(participant, language, artifacts, f"i18n-{language}")
            walk.through(study.slug, f"p-{language}")
            assert walk.seen == ["consent", "instructions", "practice", "practice-feedback", "comprehension", "item", "done"]
            assert participant.errors == [] and participant.external == []
        finally:
            participant.close()


def label_overlaps(page) -> list:
    """Pairs of scale labels (their text's bounding boxes) that overlap, and labels wider than their point."""
    return page.evaluate(
        """() => {
          const opts = [...document.querySelectorAll("#answer .opt")];
          const boxes = opts.map(o => { const r = o.querySelector(".text").getBoundingClientRect();
                                        const c = o.getBoundingClientRect();
                                        return {text: o.querySelector(".text").innerText.replace(/\\s+/g, " "), r, c}; });
          const bad = [];
          boxes.forEach((a, i) => {
            if (a.r.left < a.c.left - 0.5 || a.r.right > a.c.right + 0.5) bad.push(["wider than its point", a.text]);
            boxes.slice(i + 1).forEach(b => {
              const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
              const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
              if (w > 0.5 && h > 0.5) bad.push(["overlap", a.text, b.text, Math.round(w), Math.round(h)]);
            });
          });
          return bad;
        }"""
    )


def test_scale_labels_never_overlap_from_320_to_1920_px(browser, server, make_study, artifacts) -> None:
    measured = {}
    for language in ("en", "zh-hans", "ja"):
        study = make_study(language=language)
        participant = Participant(browser, server)
        try:
            page = participant.page
            Walk(participant, language, artifacts, "unused").onboard(study.slug, f"w-{language}")
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": 900})
                page.wait_for_timeout(50)
                bad = label_overlaps(page)
                measured[f"{language} {width}"] = bad
                assert bad == [], f"{language} at {width} px: {bad}"
                if language == "en" and width in (768, 900):
                    page.locator("form#answer").screenshot(path=str(artifacts / f"scale-{width}.png"))
                    publish(artifacts, f"scale-{width}.png")
        finally:
            participant.close()
    (artifacts / "scale-labels.json").write_text(json.dumps(measured, indent=1))


def test_the_rules_are_told_up_front_and_an_excluded_participant_learns_why(browser, server, make_study, artifacts) -> None:
    study = make_study(fast_limit=1)  # the browser answers in well under 10 s: the second fast answer excludes
    participant = Participant(browser, server)
    try:
        page = participant.page
        participant.arrive(study.slug, "fast-one")
        page.locator("#id_agree").check()
        page.locator("form button.primary").click()
        rule = page.locator("[data-rule=fast]")
        expect(rule).to_have_text("gives more than 1 answer in less than 10 seconds each;")
        expect(page.locator("[data-rules]")).to_contain_text("return the study on your platform")
        page.locator("[data-page=instructions] form button").click()
        page.locator(".opt-2").click()
        page.locator("form#answer button[type=submit]").click()
        page.locator("[data-page=practice-feedback] a.button").click()
        participant.answer_check(["Two lists of search results for the same query", "Left much better",
                                  "When you see no real difference between the two lists"])  # fmt: skip
        page.wait_for_url("**/item/*/")
        for _ in range(2):
            participant.answer(-2)
        expect(page.locator("[data-page=excluded]")).to_be_visible()
        reason = page.locator("[data-reason=fast]")
        expect(reason).to_contain_text("more than 1 of your answers took less than 10 seconds each")
        expect(page.locator("[data-page=excluded]")).to_contain_text("Please return the study on your platform")
        expect(page.locator("[data-page=excluded]")).not_to_contain_text("cannot take more answers")
        page.screenshot(path=str(artifacts / "excluded-en.png"))
        publish(artifacts, "excluded-en.png")
    finally:
        participant.close()
    ja = make_study(language="ja", fast_limit=1, excluded_exit="screenout")
    participant = Participant(browser, server)
    try:
        walk = Walk(participant, "ja", artifacts, "i18n-ja")
        page = participant.page
        walk.onboard(ja.slug, "fast-ja", on_instructions=lambda: expect(page.locator("[data-rule=fast]")).to_contain_text("10秒未満"))
        for _ in range(2):
            page.locator(".opt-3").click()
            participant.submit_and_wait(lambda: page.locator("form#answer button[type=submit]").click())
        expect(page.locator("[data-page=excluded]")).to_be_visible()
        expect(page.locator("[data-reason=fast]")).to_contain_text("1件を超えたため")
        expect(page.locator(".code")).to_have_text("E2E-FULL")  # excluded_exit "screenout": the code, Prolific's redirect
        expect(page.locator("a.button.primary")).to_have_attribute("href", "https://app.prolific.com/submissions/complete?cc=E2E-FULL")
        walk.check("excluded", shot=True)
    finally:
        participant.close()


def test_a_minimum_window_width_gives_way_to_a_friendly_note(browser, server, make_study, artifacts) -> None:
    study = make_study(language="ja", min_viewport_width=800)
    participant = Participant(browser, server, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        page = participant.page
        participant.arrive(study.slug, "narrow")
        note = page.locator("#too-narrow")
        expect(note).to_be_visible()
        expect(page.locator("[data-page=consent]")).to_be_hidden()
        expect(note.locator("[data-window-width]")).to_have_text("390")
        expect(note).to_contain_text("800ピクセル以上")
        expect(page.locator("a.withdraw-link")).to_be_visible()  # every page promises the way out, this one too
        Walk(participant, "ja", artifacts, "i18n-ja").check("too-narrow", shot=True)
        page.set_viewport_size({"width": 1024, "height": 768})  # turned sideways, or a wider window
        expect(note).to_be_hidden()
        expect(page.locator("[data-page=consent]")).to_be_visible()
        nothing = make_study()
        page.set_viewport_size({"width": 320, "height": 640})
        participant.arrive(nothing.slug, "any-width")  # a study without a minimum: any width
        expect(page.locator("[data-page=consent]")).to_be_visible()
        expect(page.locator("#too-narrow")).to_have_count(0)
    finally:
        participant.close()
