"""axe-core in Chromium: no serious or critical violations on the pages students use."""

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page

from tests.conftest import SEED_CARD_URL

AXE = Axe()
PAGES = {
    "home": "/",
    "card, answer hidden": SEED_CARD_URL,
    "card, answer shown": SEED_CARD_URL + "?answer=shown",
    "card 2, answer shown": SEED_CARD_URL.replace("step-1", "step-2") + "?answer=shown",
    "lesson with Try it": "/learn/llm-inference-performance/kv-cache/",
    "card citing calculators, answer shown": "/learn/llm-inference-performance/kv-cache/step-1/?answer=shown",
    "glossary": "/glossary/",
    "glossary search": "/glossary/?q=kv+cache",
    "simulator": "/sim/",
    "continuous-batching engine": "/sim/engine/",
    "engine, a setting refused": "/sim/engine/?max_num_seqs=1",
    "chain, a setting refused": "/sim/chain/?tensor_parallel=3",
    "progress": "/progress/",
    "review": "/review/",
    "practice index": "/practice/",
    "practice problem": "/practice/l05-kv-per-conversation/?seed=3",
    "practice set, nothing started": "/practice/set/",
    "log in": "/accounts/login/",
    "sign up": "/accounts/signup/",
    "password reset": "/accounts/password/reset/",
}


def serious_violations(page: Page) -> list[str]:
    results = AXE.run(page).response
    return [
        f"{violation['id']} ({violation['impact']}): {violation['help']} at "
        + ", ".join(str(node["target"]) for node in violation["nodes"][:3])
        for violation in results["violations"]
        if violation["impact"] in {"serious", "critical"}
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", PAGES)
def test_no_serious_or_critical_violations(page: Page, live_lessons, name, scheme):
    page.emulate_media(color_scheme=scheme)
    page.goto(live_lessons + PAGES[name])
    page.wait_for_load_state("networkidle")
    assert serious_violations(page) == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_an_answered_practice_problem_and_the_calibration_chart_have_no_serious_violations(
    page: Page, live_lessons, scheme
):
    from lessons.models import PracticeTemplate

    page.emulate_media(color_scheme=scheme)
    answer = PracticeTemplate.objects.get(slug="l05-kv-per-conversation").problem(3).answer
    page.goto(live_lessons + "/practice/l05-kv-per-conversation/?seed=3")
    page.get_by_label("Your answer", exact=False).fill(f"{answer * 1.5} GB")
    page.get_by_label("Your answer", exact=False).press("Enter")
    page.get_by_label("Try again", exact=False).wait_for()  # close: open for another try
    page.get_by_role("button", name="Hint: step 1").click()
    page.locator("#practice-hints").wait_for()
    assert serious_violations(page) == []
    page.get_by_role("button", name="Show me").click()
    page.get_by_role("heading", name="Worked solution").wait_for()
    assert serious_violations(page) == []
    page.goto(live_lessons + "/progress/")
    page.locator("#calibration-chart").wait_for()
    assert serious_violations(page) == []
