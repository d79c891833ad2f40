"""The study form in Chromium (issue 33, item 7), as a new user meets it: sign in, "Create a study", choose
the collection, tick runs, submit with two mistakes, see both next to their fields and in the focused
summary, fix them and land on the new study's page; no axe-core violation on the form, errors shown or not."""

from __future__ import annotations

from tests.browser.conftest import require_playwright

require_playwright()

from playwright.sync_api import expect  # noqa: E402

from studyapp.models import Collection, Study  # noqa: E402
from tests.browser.accessibility import axe_violations  # noqa: E402
from tests.browser.annotator import Participant  # noqa: E402
from tests.browser.test_content_security_policy import watch_violations  # noqa: E402
from tests.browser.test_staff_dashboard import sign_in  # noqa: E402


def test_a_new_user_creates_a_study_through_the_staff_page(browser, server, artifacts) -> None:
    Collection.objects.create(name="another-collection")  # two collections: the form asks which one first
    staff = Participant(browser, server, viewport={"width": 1280, "height": 900})
    violations = watch_violations(staff)
    try:
        sign_in(staff, server)
        page = staff.page
        page.get_by_role("link", name="Create a study").click()
        expect(page.get_by_role("heading", name="Create a study")).to_be_visible()
        expect(page.get_by_role("checkbox")).to_have_count(0)  # no runs before a collection is chosen
        page.get_by_label("Collection").select_option(label="demo")
        page.get_by_role("button", name="Continue").click()
        expect(page.get_by_role("group", name="Runs:")).to_be_visible()
        for run in ("demo-diversity", "demo-mixed", "demo-random", "demo-relevance", "demo-weak"):
            expect(page.get_by_role("checkbox", name=run)).to_be_visible()
        assert axe_violations(page) == []

        page.get_by_label("Name:").fill("Made in the browser")
        page.get_by_role("checkbox", name="demo-diversity").check()  # mistake 1: one run only
        page.get_by_label("Depth:", exact=True).fill("0")  # mistake 2: out of its range
        page.get_by_label("Items per annotator:").fill("4")
        page.get_by_role("button", name="Create study").click()

        summary = page.locator("#error-summary")
        expect(summary).to_contain_text("Nothing was created: 2 problems")
        expect(summary).to_be_focused()
        expect(page.locator("#id_runs_error")).to_contain_text("tick at least 2 runs")
        expect(page.locator("#id_depth_error")).to_contain_text("depth must be between 1 and 100, got 0")
        expect(page.get_by_label("Depth:", exact=True)).to_have_attribute("aria-invalid", "true")
        page.screenshot(path=artifacts / "study-form-errors.png", full_page=True)
        assert axe_violations(page) == []
        summary.get_by_role("link", name="Depth: depth must be between 1 and 100, got 0").click()
        expect(page.get_by_label("Depth:", exact=True)).to_be_focused()  # the summary's link leads to the field
        assert Study.objects.filter(name="Made in the browser").count() == 0

        page.get_by_label("Depth:", exact=True).fill("10")
        expect(page.get_by_role("checkbox", name="demo-diversity")).to_be_checked()  # what was right is kept
        page.get_by_role("checkbox", name="demo-relevance").check()
        page.get_by_role("button", name="Create study").click()
        expect(page.get_by_role("heading", name="Made in the browser")).to_be_visible()
        study = Study.objects.get(name="Made in the browser")
        assert page.url.endswith(f"/staff/{study.slug}/")
        assert sorted(study.study_runs.values_list("run__name", flat=True)) == ["demo-diversity", "demo-relevance"]
        assert (study.depth, study.items_per_annotator) == (10, 4)

        # The admin's Studies > Add is the same form: a mistake shown at its field, nothing for axe-core to find.
        demo = Collection.objects.get(name="demo")
        page.goto(f"{server}/admin/studyapp/study/add/?collection={demo.pk}")
        page.get_by_role("checkbox", name="demo-weak").check()
        page.get_by_role("button", name="Create study").click()
        expect(page.locator("#error-summary")).to_contain_text("Nothing was created: 2 problems")
        expect(page.locator("#id_name_error")).to_contain_text("This field is required")
        expect(page.locator("#id_runs_error")).to_contain_text("tick at least 2 runs")
        found = axe_violations(page)
        assert found == [], "\n".join(found)
        assert staff.errors == [], f"script errors: {staff.errors}"
        assert staff.external == []
    finally:
        staff.close()
    assert violations == [], "\n".join(violations)
