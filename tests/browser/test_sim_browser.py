import re
import threading

from playwright.sync_api import Page, expect

from tests.browser.conftest import new_page
from tests.browser.fields import type_and_leave


def test_moving_slots_redraws_the_chart_and_moves_capacity(page: Page, live_server):
    page.goto(live_server.url + "/sim/")
    sentence = page.locator(".capacity-sentence")
    expect(sentence).to_contain_text("Capacity is C = 8")
    plot = page.locator("#sim-results .plot")
    expect(plot.get_by_text("knee: capacity 8").filter(visible=True)).to_be_visible()

    type_and_leave(page.get_by_label("Slots"), "16")

    expect(sentence).to_contain_text("Capacity is C = 16")
    expect(
        page.locator("#sim-results .plot").get_by_text("knee: capacity 16").filter(visible=True)
    ).to_be_visible()
    expect(page.locator("tr.is-capacity th")).to_contain_text("16")
    assert "slots=16" in page.url  # the view can be shared


def test_sim_form_works_without_javascript(page_without_js: Page, live_server):
    page = page_without_js
    page.goto(live_server.url + "/sim/")
    page.get_by_label("Slots").fill("16")
    page.get_by_role("button", name="Simulate").click()
    page.wait_for_url("**slots=16**")
    expect(page.locator(".capacity-sentence")).to_contain_text("Capacity is C = 16")
    expect(page.locator("tr.is-capacity th")).to_contain_text("16")


def test_the_chart_without_javascript_draws_its_grid_as_strokes_only(page_without_js: Page, live_server):
    page = page_without_js
    page.goto(live_server.url + "/sim/")
    grid = page.locator(".chart-wide .chart-svg path.grid")
    expect(grid).to_be_visible()
    drawn = grid.evaluate(
        "path => { const style = getComputedStyle(path);"
        " return [style.fill, style.stroke, getComputedStyle(document.documentElement).getPropertyValue('--border')]; }"
    )
    fill, stroke, border = drawn
    assert fill == "none"  # a filled grid path would paint the panels black
    assert stroke != "none" and border.strip()


def test_seed_card_draws_its_live_chart(page: Page, live_lessons):
    page.goto(live_lessons + "/learn/llm-inference-performance/concurrency-sweep/step-1/")
    page.locator("#answer-toggle").click()
    panel = page.locator(".layer-live")
    expect(panel.get_by_role("heading", name="Computed live")).to_be_visible()
    expect(panel.locator(".chart-static svg.chart-svg").filter(visible=True)).to_have_count(1)
    expect(panel.get_by_text("knee: capacity 8").filter(visible=True)).to_be_visible()
    panel.get_by_role("button", name="Explore this chart").click()
    expect(panel.locator(".plot")).to_have_attribute("data-drawn", "true")
    expect(panel.locator(".plot .main-svg").first).to_be_visible()
    expect(panel.get_by_text("knee: capacity 8")).to_be_visible()  # now plotly's, the drawing is gone


def test_start_a_real_sweep_watch_progress_and_see_the_result(
    page: Page, browser, live_server, student, settings
):
    from django.conf import settings as django_settings
    from django.test import Client

    from felab_sim.engine.sweep.sweep_params import ServerParams
    from tests.practice.conftest import serving
    from tests.taskqueue import work_off_the_queue

    client = Client()
    client.force_login(student)
    page.context.add_cookies(
        [
            {
                "name": django_settings.SESSION_COOKIE_NAME,
                "value": client.cookies["sessionid"].value,
                "url": live_server.url,
            }
        ]
    )
    # A slower step than the other tests' so the progress bars are seen moving.
    with serving(ServerParams(step_ms=6.0)) as server:
        settings.PRACTICE_SERVER_URL = server.api
        page.goto(live_server.url + "/sim/")
        page.get_by_label("Concurrency levels", exact=True).nth(1).fill("1,4")
        page.get_by_label("Max tokens", exact=True).nth(1).fill("32")
        # A target no measured TTFT misses on a busy machine (945 ms was seen at C = 4), so the
        # capacity the page reports is the highest level run, whatever the neighbours do.
        page.get_by_label("TTFT p95 target, SLO (ms)", exact=True).nth(1).fill("60000")
        page.get_by_role("button", name="Start a real sweep").click()
        page.wait_for_url("**/sim/runs/*/")
        expect(page.get_by_text("Waiting in the queue: next")).to_be_visible()
        # Its owner is told the run is theirs; a visitor who opens its address is not told whose.
        expect(page.locator(".lede")).to_contain_text("Against the practice server")
        expect(page.locator(".lede")).to_contain_text("by you")
        stranger = new_page(browser, timeout_ms=30_000)
        stranger.goto(page.url)
        expect(stranger.locator(".lede")).to_contain_text("Against the practice server")
        for seen in (page, stranger):
            expect(seen.locator("body")).not_to_contain_text(server.api)
        expect(stranger.locator("body")).not_to_contain_text(re.compile(r"\bsam\b|by you"))
        stranger.close()
        # A task worker takes it from the queue, as `manage.py db_worker` would.
        worker = threading.Thread(target=work_off_the_queue, daemon=True)
        worker.start()
        expect(page.get_by_text("Running…")).to_be_visible()
        expect(page.locator("#level-1")).to_be_visible()
        # The page updates itself: the state changes without a reload.
        expect(page.get_by_text("Done: capacity C = 4 at a 60,000 ms SLO")).to_be_visible()
        expect(page.locator("#level-4")).to_have_attribute("value", "12")
        expect(page.locator(".plot[data-figure='run-figure'] .chart-static polyline").first).to_be_visible()
        page.get_by_role("link", name="Open in the simulator, drawn over the model").click()
        expect(page.get_by_text("(drawn above)")).to_be_visible()
        worker.join(timeout=60)


def test_the_chart_shows_at_once_and_plotly_loads_only_when_the_student_reaches_for_it(
    page: Page, live_server
):
    fetched = []
    page.on("request", lambda request: fetched.append(request.url))
    page.goto(live_server.url + "/sim/")
    plot = page.locator("#sim-results .plot")
    expect(plot.locator(".chart-static svg.chart-svg").filter(visible=True)).to_have_count(1)
    expect(plot.locator(".chart-static polyline").first).to_be_visible()
    page.wait_for_load_state("networkidle")
    assert not [url for url in fetched if "plotly" in url]

    plot.hover()
    expect(plot).to_have_attribute("data-drawn", "true")
    expect(plot.locator(".main-svg").first).to_be_visible()
    expect(plot.locator(".chart-static")).to_have_count(0)
    assert [url for url in fetched if "plotly" in url]

    # Once asked for, the next redraw is interactive straight away.
    type_and_leave(page.get_by_label("Slots"), "16")
    expect(page.locator("#sim-results .capacity-sentence")).to_contain_text("Capacity is C = 16")
    expect(page.locator("#sim-results .plot")).to_have_attribute("data-drawn", "true")


def test_a_pointer_resting_on_the_chart_before_the_script_runs_still_gets_plotly(page: Page, live_server):
    held = []
    page.route("**/js/plots*.js", lambda route: held.append(route))
    page.goto(live_server.url + "/sim/", wait_until="commit")
    plot = page.locator("#sim-results .plot")
    expect(plot.locator(".chart-static polyline").first).to_be_visible()
    plot.hover()  # the pointer arrives while the chart script is still on its way
    for _ in range(600):  # the request reaches the handler while Playwright waits
        if held:
            break
        page.wait_for_timeout(100)
    assert held, "the chart script was never requested"
    held[0].continue_()
    expect(plot).to_have_attribute("data-drawn", "true")
    expect(plot.locator(".main-svg").first).to_be_visible()


def test_charts_are_drawn_without_javascript(page_without_js: Page, live_lessons):
    page = page_without_js
    page.goto(live_lessons + "/sim/")
    drawing = page.locator("#sim-results .chart-static svg.chart-svg").filter(visible=True)
    expect(drawing).to_have_count(1)
    expect(drawing.locator("polyline")).not_to_have_count(0)
    assert drawing.bounding_box()["height"] > 200
    page.goto(live_lessons + "/learn/llm-inference-performance/concurrency-sweep/step-1/?answer=shown")
    expect(page.locator(".layer-live .chart-static svg.chart-svg").filter(visible=True)).to_have_count(1)
