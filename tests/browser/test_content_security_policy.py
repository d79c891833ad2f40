"""The strict Content-Security-Policy in real Chromium: a whole participant session and the staff pages
run without a single violation (the browser reports each one on the console), and an injected inline
script is indeed blocked."""

from __future__ import annotations

from tests.browser.conftest import require_playwright

require_playwright()

from playwright.sync_api import ConsoleMessage, expect  # noqa: E402

from studyapp.models import Study  # noqa: E402
from tests.browser.annotator import Participant  # noqa: E402


def watch_violations(person: Participant) -> list[str]:
    violations: list[str] = []

    def seen(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            violations.append(f"{person.page.url}: {message.text}")

    person.page.on("console", seen)
    return violations


def test_a_whole_session_and_the_staff_pages_run_under_the_policy(browser, server, make_study) -> None:
    study = make_study()
    person = Participant(browser, server)
    violations = watch_violations(person)
    try:
        response = person.page.goto(f"{server}/")
        assert "script-src 'self'" in response.headers["content-security-policy"]
        person.onboard(study.slug, "csp-participant")
        for value in (-2, 0, 3, 1):
            person.answer(value)
        expect(person.page.locator("#completion-code")).to_have_text("E2E-DONE")
        assert person.errors == [], f"script errors: {person.errors}"
    finally:
        person.close()

    staff = Participant(browser, server)
    violations += watch_violations(staff)
    try:
        page = staff.page
        page.goto(f"{server}/admin/")
        page.get_by_label("Username").fill("staff")
        page.get_by_label("Password").fill("browser-tests")
        page.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("link", name="Log out").or_(page.get_by_role("button", name="Log out"))).to_be_visible()
        demo = Study.objects.get(name="Demo study")
        for path in ("/admin/studyapp/study/", f"/admin/studyapp/study/{demo.pk}/change/", "/admin/studyapp/annotator/"):
            assert page.goto(f"{server}{path}").status == 200, path
        assert staff.errors == [], f"script errors: {staff.errors}"
    finally:
        staff.close()
    assert violations == [], "\n".join(violations)


def test_an_injected_inline_script_is_blocked(browser, server) -> None:
    person = Participant(browser, server)
    violations = watch_violations(person)
    try:
        person.page.goto(f"{server}/")
        person.page.evaluate(
            "() => { const s = document.createElement('script'); s.textContent = 'window.injected = 1'; document.body.appendChild(s); }"
        )
        assert person.page.evaluate("() => window.injected === undefined")
        assert any("inline script" in v for v in violations), violations
    finally:
        person.close()
