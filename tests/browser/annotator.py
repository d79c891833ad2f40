"""What a participant does in the browser, step by step (shared by the browser tests)."""

from __future__ import annotations

import json
from urllib.parse import urlencode, urlsplit

from playwright.sync_api import BrowserContext, Page, Route, expect

from studyapp.models import Annotator, Preference

PROLIFIC = "https://app.prolific.com/"
MTURK_SANDBOX = "https://workersandbox.mturk.com"
DESKTOP = {"width": 1280, "height": 900}
CHECK_ANSWERS = [
    "Two lists of search results for the same query",
    "Left much better",
    "When you see no real difference between the two lists",
]


class Participant:
    """One browser context (its own cookies and storage) of one participant, plus what it saw.

    Every request leaving the live server is answered here: the Prolific completion URL and MTurk's
    sandbox by stub pages (what is posted to MTurk is kept in ``mturk_posts``), anything else is
    aborted and remembered in ``external`` (the pages must be self-contained). ``visited`` lists every
    URL the browser asked for.

    With ``intercept=False`` no request is intercepted (Playwright's request interception has hung
    navigations inside cross-site frames): requests are only listened to, ``visited`` and ``external``
    (outside the live server and ``allowed_origins``) are still kept, nothing is stubbed or aborted.
    """

    def __init__(self, browser, server: str, *, intercept: bool = True, allowed_origins: tuple[str, ...] = (), **context_options) -> None:
        self.server = server
        self.external: list[str] = []
        self.visited: list[str] = []
        self.mturk_posts: list[str] = []
        self.context: BrowserContext = browser.new_context(**{"viewport": DESKTOP, **context_options})
        if intercept:
            self.context.route("**/*", self._route)
        else:
            self.context.on("request", lambda request: self._listen(request.url, allowed_origins))
        self.page: Page = self.context.new_page()
        self.page.set_default_timeout(15_000)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    def _route(self, route: Route) -> None:
        url = route.request.url
        self.visited.append(url)
        if url.startswith(self.server):
            route.continue_()
        elif url.startswith(PROLIFIC):
            route.fulfill(status=200, content_type="text/html", body="<!doctype html><title>Prolific</title><h1>Prolific stub</h1>")
        elif url.startswith(MTURK_SANDBOX):
            self.mturk_posts.append(route.request.post_data or "")
            route.fulfill(status=200, content_type="text/html", body="<!doctype html><title>MTurk</title><h1>MTurk stub</h1>")
        else:
            self.external.append(url)
            route.abort()

    def _listen(self, url: str, allowed_origins: tuple[str, ...]) -> None:
        self.visited.append(url)
        if not url.startswith((self.server, *allowed_origins, "data:", "blob:", "about:")):
            self.external.append(url)

    def close(self) -> None:
        self.context.close()

    def delay_script(self, ms: int) -> None:
        """Run annotator.js ``ms`` after it would run (a slow device or network): what the participant
        does on a page before that must not be lost."""

        def late(route: Route) -> None:
            response = route.fetch()
            route.fulfill(response=response, body=f"window.setTimeout(function () {{\n{response.text()}\n}}, {ms});")

        self.page.route("**/annotator.js", late)

    # -- the onboarding ---------------------------------------------------------------------------

    def arrive(self, slug: str, pid: str | None = None, *, query: dict[str, str] | None = None) -> None:
        """Open the study link: as Prolific participant ``pid``, with the link parameters ``query``
        (e.g. MTurk's), or with neither as an anonymous participant."""
        params = {"PROLIFIC_PID": pid, "STUDY_ID": "e2e", "SESSION_ID": f"s-{pid}"} if pid else query or {}
        self.page.goto(f"{self.server}/s/{slug}/" + (f"?{urlencode(params)}" if params else ""))

    def onboard(self, slug: str, pid: str | None = None, *, query: dict[str, str] | None = None, check: list[str] | None = None) -> None:
        """Arrive, consent, read the instructions, do the practice item, pass the check; ends on item 1.

        With ``check`` (other answers to the comprehension questions) it ends on the page after that attempt."""
        page = self.page
        self.arrive(slug, pid, query=query)
        expect(page.locator("[data-page=consent]")).to_be_visible()
        page.get_by_label("I have read the information above and agree to take part.").check()
        page.get_by_role("button", name="I agree, start").click()
        expect(page.locator("[data-page=instructions]")).to_be_visible()
        page.get_by_role("button", name="Continue to a practice item").click()
        expect(page.locator("[data-page=practice]")).to_be_visible()
        page.get_by_role("radio", name="Left better", exact=True).check()
        page.get_by_role("button", name="Submit answer").click()
        expect(page.locator("[data-page=practice-feedback]")).to_be_visible()
        expect(page.get_by_role("link", name="Continue")).to_be_focused()  # focus moves on from the feedback
        page.get_by_role("link", name="Continue").click()
        self.answer_check(check or CHECK_ANSWERS)
        if check is None:
            page.wait_for_url("**/item/*/")

    def answer_check(self, answers: list[str]) -> None:
        """Choose these answers (by label) to the comprehension questions and submit."""
        for label in answers:
            self.page.get_by_label(label, exact=True).check()
        self.page.get_by_role("button", name="Check my answers").click()

    # -- items ------------------------------------------------------------------------------------

    def assignment_id(self) -> int:
        return int(urlsplit(self.page.url).path.rstrip("/").split("/")[-1])

    def progress(self) -> str:
        return self.page.locator("#progress-label").inner_text()

    def sides(self) -> tuple[list[str], list[str]]:
        """The titles shown on the left and on the right."""
        left = self.page.locator(".serp-left .title").all_inner_texts()
        right = self.page.locator(".serp-right .title").all_inner_texts()
        return left, right

    def submit_and_wait(self, action) -> None:
        """Run ``action`` (which submits) and wait until the browser has moved on to the next page."""
        before = self.page.url
        action()
        self.page.wait_for_url(lambda url: url != before)

    def answer(self, value: int) -> None:
        """Choose ``value`` with the mouse and submit."""
        self.page.locator(f".opt-{value + 5}").click()
        self.submit_and_wait(lambda: self.page.get_by_role("button", name="Submit answer").click())

    def timing(self) -> dict:
        return json.loads(self.page.evaluate(f"localStorage.getItem('studyapp.timing.{self.assignment_id()}') || 'null'") or "null")


def preferences(annotator: Annotator) -> list[Preference]:
    return list(Preference.objects.filter(assignment__annotator=annotator).select_related("assignment").order_by("assignment__position"))


def annotator_of(study, pid: str) -> Annotator:
    return Annotator.objects.get(study=study, platform="prolific", external_id=pid)
