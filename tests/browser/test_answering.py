"""Answering in real Chromium: keyboard only, reload and back/forward, double click, a lost connection."""

from __future__ import annotations

from tests.browser.conftest import require_playwright

require_playwright()

from playwright.sync_api import expect  # noqa: E402

from studyapp.models import Assignment, Preference  # noqa: E402
from tests.browser.annotator import Participant, annotator_of, preferences  # noqa: E402


def test_keyboard_only_answering(browser, server, make_study) -> None:
    study = make_study()
    person = Participant(browser, server)
    try:
        person.onboard(study.slug, "kim")
        page = person.page
        scale = page.get_by_role("group", name="Which result list is better")
        expect(scale).to_be_visible()
        expect(page.locator(".hint.keys")).to_be_visible()  # a fine pointer with hover: a keyboard is likely
        for name in ("Left much better", "Left slightly better", "About the same", "Right somewhat better", "Right much better"):
            expect(scale.get_by_role("radio", name=name, exact=True)).to_have_count(1)  # screen-reader names

        # Item 1: a number key chooses, Enter submits.
        page.keyboard.press("9")
        expect(page.get_by_role("radio", name="Right much better", exact=True)).to_be_checked()
        expect(page.get_by_role("radio", name="Right much better", exact=True)).to_be_focused()
        person.submit_and_wait(lambda: page.keyboard.press("Enter"))

        # Item 2: Tab to the skip link, jump to the scale, move with the arrows (native radio group), Enter.
        page.keyboard.press("Tab")
        expect(page.get_by_role("link", name="Skip to your answer")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page.get_by_role("radio", name="Left much better", exact=True)).to_be_focused()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        expect(page.get_by_role("radio", name="Left somewhat better", exact=True)).to_be_checked()
        person.submit_and_wait(lambda: page.keyboard.press("Enter"))

        # Item 3: arrows anywhere on the page start from the centre.
        page.keyboard.press("ArrowLeft")
        expect(page.get_by_role("radio", name="About the same", exact=True)).to_be_checked()
        page.keyboard.press("ArrowLeft")
        person.submit_and_wait(lambda: page.keyboard.press("Enter"))

        # Keys on a link keep their meaning: the arrows and numbers on the Withdraw link choose nothing.
        page.get_by_role("link", name="Withdraw from the study").focus()
        for key in ("ArrowRight", "3"):
            page.keyboard.press(key)
        expect(page.locator("form[data-scale] input[type=radio]:checked")).to_have_count(0)
        page.evaluate("document.activeElement.blur()")  # back on the page's body: the keys answer again

        # Item 4: change of mind, then Tab to the submit button and press Space.
        page.keyboard.press("2")
        page.keyboard.press("5")
        page.keyboard.press("Tab")
        expect(page.get_by_role("button", name="Submit answer")).to_be_focused()
        person.submit_and_wait(lambda: page.keyboard.press("Space"))
        expect(page.locator("#completion-code")).to_have_text("E2E-DONE")
        assert person.errors == []
    finally:
        person.close()
    assert [p.value for p in preferences(annotator_of(study, "kim"))] == [4, -2, -1, 0]


def test_reload_and_back_resume_at_the_same_item_with_the_same_sides(browser, server, make_study) -> None:
    study = make_study()
    person = Participant(browser, server)
    try:
        person.onboard(study.slug, "lee")
        page = person.page
        person.answer(1)
        item_url, sides = page.url, person.sides()
        assignment = Assignment.objects.get(pk=person.assignment_id())
        served = assignment.served_at
        page.locator(".opt-3").click()  # a choice that the reload must not keep
        page.reload()
        assert page.url == item_url
        assert person.sides() == sides
        expect(page.locator("#progress-label")).to_have_text("Item 2 / 4")
        for radio in page.get_by_role("radio").all():
            expect(radio).not_to_be_checked()
        assert Assignment.objects.get(pk=assignment.pk).served_at == served

        # The same participant in another browser (the Prolific link again) lands on the same item.
        elsewhere = Participant(browser, server)
        try:
            elsewhere.arrive(study.slug, "lee")
            elsewhere.page.wait_for_url(item_url)
            assert elsewhere.sides() == sides
        finally:
            elsewhere.close()

        person.answer(-2)
        third = page.url
        page.go_back()  # the answered item: the server sends the browser on to the current one
        page.wait_for_url(third)
        page.go_forward()
        assert page.url == third
        person.answer(3)
    finally:
        person.close()
    assert [p.value for p in preferences(annotator_of(study, "lee"))] == [1, -2, 3]
    assert Preference.objects.get(assignment_id=assignment.pk).value == -2


def test_a_double_click_stores_one_answer(browser, server, make_study) -> None:
    study = make_study()
    person = Participant(browser, server)
    try:
        person.onboard(study.slug, "max")
        page = person.page
        first = person.assignment_id()
        answer_url = page.locator("form#answer").get_attribute("action")
        page.locator(".opt-8").click()
        answers = []
        page.on("request", lambda r: answers.append(r) if r.url.endswith("/answer/") else None)
        person.submit_and_wait(lambda: page.get_by_role("button", name="Submit answer").dblclick())
        assert len(answers) == 1  # the page sent one request ...
        # ... a resubmission of the same item (a retry, another tab) is answered with the stored answer,
        # and another value for it is refused: the first answer stands.
        resend = """async ([url, value]) => {
                const token = document.querySelector("input[name=csrfmiddlewaretoken]").value;
                const r = await fetch(url, {method: "POST", headers: {"X-CSRFToken": token, "Accept": "application/json"},
                                            body: new URLSearchParams({value: value, request_id: "a-second-tab"})});
                return [r.status, await r.json()];
            }"""
        reply = page.evaluate(resend, [answer_url, "3"])
        assert reply[0] == 200 and reply[1]["created"] is False and reply[1]["value"] == 3
        reply = page.evaluate(resend, [answer_url, "-4"])
        assert reply[0] == 409 and reply[1]["error"] == "conflict" and "stored" not in reply[1]
    finally:
        person.close()
    assert Preference.objects.filter(assignment_id=first).count() == 1
    assert Preference.objects.get(assignment_id=first).value == 3
    assert len(preferences(annotator_of(study, "max"))) == 1


def test_an_answer_survives_a_lost_connection_and_a_reload(browser, server, make_study, settings) -> None:
    settings.STUDYAPP_HEARTBEAT_SECONDS = 1
    study = make_study()
    person = Participant(browser, server)
    try:
        person.onboard(study.slug, "ned")
        page = person.page
        first = person.assignment_id()
        with page.expect_response("**/heartbeat/") as beat:  # an open page keeps the lease of its item alive
            pass
        assert beat.value.status == 200
        assert beat.value.request.post_data == f"item={first}"  # the item on screen (the server extends only its lease)
        page.route("**/answer/", lambda route: route.abort("internetdisconnected"))
        page.locator(".opt-2").click()
        page.get_by_role("button", name="Submit answer").click()
        notice = page.get_by_role("status")
        expect(notice).to_contain_text("Your answer is saved in this browser")
        expect(page.get_by_role("button", name="Submit answer")).to_be_disabled()
        assert not Preference.objects.filter(assignment_id=first).exists()
        assert page.evaluate(f"localStorage.getItem('studyapp.pending.{first}')") is not None

        page.reload()  # still offline: the saved answer is shown and retried
        expect(notice).to_contain_text("Your answer is saved in this browser")
        expect(page.get_by_role("radio", name="Left better", exact=True)).to_be_checked()
        assert not Preference.objects.filter(assignment_id=first).exists()

        page.unroute("**/answer/")  # the connection is back: the next retry gets through
        page.wait_for_url(lambda url: not url.endswith(f"/item/{first}/"), timeout=20_000)
        expect(page.locator("#progress-label")).to_have_text("Item 2 / 4")
        assert page.evaluate(f"localStorage.getItem('studyapp.pending.{first}')") is None
    finally:
        person.close()
    stored = Preference.objects.get(assignment_id=first)
    assert stored.value == -3
    assert stored.server_seconds * 1000 > stored.client_ms  # the browser's time stops at the click, the server's at arrival


def test_a_refused_answer_is_kept_until_stored_and_only_a_404_or_a_conflict_drops_it(browser, server, make_study) -> None:
    study = make_study()
    person = Participant(browser, server)
    try:
        person.onboard(study.slug, "oda")
        page = person.page
        first = person.assignment_id()
        pending = f"localStorage.getItem('studyapp.pending.{first}')"
        refusal = '{"error": "not_served", "message": "Not now."}'
        page.route("**/answer/", lambda route: route.fulfill(status=409, content_type="application/json", body=refusal))
        page.locator(".opt-7").click()
        page.get_by_role("button", name="Submit answer").click()
        expect(page.get_by_role("status")).to_contain_text("Not now.")
        assert page.evaluate(pending) is not None  # kept in the browser ...
        assert not Preference.objects.filter(assignment_id=first).exists()

        page.unroute("**/answer/")
        page.reload()  # ... and sent again when its page loads
        page.wait_for_url(lambda url: not url.endswith(f"/item/{first}/"), timeout=20_000)
        assert page.evaluate(pending) is None

        second = person.assignment_id()
        page.route("**/answer/", lambda route: route.fulfill(status=404, content_type="application/json", body='{"error": "not_found"}'))
        page.locator(".opt-1").click()
        page.get_by_role("button", name="Submit answer").click()
        expect(page.get_by_role("status")).to_contain_text("Reload the page")
        assert page.evaluate(f"localStorage.getItem('studyapp.pending.{second}')") is None  # 404: not this annotator's item

        page.unroute("**/answer/")
        page.reload()
        shown = person.assignment_id()  # the second item again: its answer was never stored
        conflict = '{"error": "conflict", "message": "This item was already answered with a different choice."}'
        page.route("**/answer/", lambda route: route.fulfill(status=409, content_type="application/json", body=conflict))
        page.locator(".opt-2").click()
        page.get_by_role("button", name="Submit answer").click()
        expect(page.get_by_role("status")).to_contain_text("already answered with a different choice")
        assert page.evaluate(f"localStorage.getItem('studyapp.pending.{shown}')") is None  # never sent again
    finally:
        person.close()
    assert Preference.objects.get(assignment_id=first).value == 2
