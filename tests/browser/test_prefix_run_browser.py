"""A student measures lesson 06's prefix-cache run from its calculator's page and sees it drawn
over the model, with JavaScript (the page polls and reloads itself) and without (it refreshes)."""

import threading

import pytest
from playwright.sync_api import Page, expect

PAGE = "/sim/calc/prefix-cache/?prefix_chars=1300&suffix_chars=80"
# Four requests an order at 15 ms a decode step: each reply streams for about 0.7 s, so the run
# measures for several seconds and the page, polling every second, sees it running.
REQUESTS = "4"


@pytest.fixture
def signed_in(live_server, student):
    """Put a signed-in student's session cookie into a browser page."""
    from django.conf import settings as django_settings
    from django.test import Client

    client = Client()
    client.force_login(student)

    def sign_in(page: Page) -> Page:
        cookie = {
            "name": django_settings.SESSION_COOKIE_NAME,
            "value": client.cookies[django_settings.SESSION_COOKIE_NAME].value,
            "url": live_server.url,
        }
        page.context.add_cookies([cookie])
        return page

    return sign_in


@pytest.fixture
def practice_server(settings):
    from felab_sim.engine.sweep.sweep_params import ServerParams
    from tests.practice.conftest import serving

    with serving(ServerParams(step_ms=15.0)) as server:
        settings.PRACTICE_SERVER_URL = server.api
        yield server


def run_id(page: Page) -> str:
    return page.url.split("run=")[1].split("&")[0].split("#")[0]


def start_worker() -> threading.Thread:
    """A task worker takes the run from the queue, as `manage.py db_worker` would."""
    from tests.taskqueue import work_off_the_queue

    worker = threading.Thread(target=work_off_the_queue, daemon=True)
    worker.start()
    return worker


def test_a_student_measures_the_prefix_cache_and_sees_it_over_the_model(
    page: Page, live_server, signed_in, practice_server
):
    page = signed_in(page)
    page.goto(live_server.url + PAGE)
    page.get_by_label("Requests per order").fill(REQUESTS)
    page.get_by_role("button", name="Measure these settings on the practice server").click()
    page.wait_for_url("**run=*")
    progress = page.locator("#run-progress")
    expect(progress.get_by_text("Waiting in the queue: next")).to_be_visible()
    expect(progress.get_by_text("Shared part first: 0 of 4 requests")).to_be_visible()

    worker = start_worker()
    expect(progress.get_by_text("Running…")).to_be_visible()
    # When the run is done the page reloads itself and draws the run over the model's curves.
    expect(page.get_by_text("Done: drawn on the chart above")).to_be_visible()
    expect(page.locator("#order-variable-first")).to_have_attribute("value", "4")
    chart = page.locator("#calc-results .plot[data-figure='calc-figure']")
    for half in ("shared part first (320 of 345", "variable part first (0 of 345"):
        # Each measured point is drawn, and named in the chart's legend.
        label = f"measured: run {run_id(page)}, repeat, {half} tokens cached)"
        expect(chart.locator("path title", has_text=label)).not_to_have_count(0)
        expect(chart.locator("li").filter(has_text=label).filter(visible=True).first).to_be_visible()
    expect(page.get_by_text("The × marks were measured on the practice server")).to_be_visible()
    # The table: the model beside what the server measured, cached tokens exactly alike.
    expect(page.locator("td.calc-value[data-key='cached_tokens']")).to_have_text("320 tokens")
    expect(page.locator("td.calc-measured-value[data-key='cached_tokens']")).to_have_text("320 tokens")

    # Changing a setting redraws in place and keeps the run on the chart.
    order = page.get_by_label("Order", exact=True)
    order.select_option("variable-first")
    expect(page.locator("td.calc-measured-value[data-key='cached_tokens']")).to_have_text("0 tokens")
    assert "run=" in page.url and "order=variable-first" in page.url
    worker.join(timeout=60)


def test_without_javascript_the_page_refreshes_until_the_run_is_drawn(
    page_without_js: Page, live_server, signed_in, practice_server
):
    page = signed_in(page_without_js)
    page.goto(live_server.url + PAGE)
    page.get_by_label("Requests per order").fill("2")
    page.get_by_role("button", name="Measure these settings on the practice server").click()
    page.wait_for_url("**run=*")
    expect(page.get_by_text("Waiting in the queue: next")).to_be_visible()
    worker = start_worker()
    # The page's <noscript> refresh brings the run's state every two seconds.
    expect(page.get_by_text("Done: drawn on the chart above")).to_be_visible()
    expect(page.locator("td.calc-measured-value[data-key='cached_tokens']")).to_have_text("320 tokens")
    worker.join(timeout=60)


def test_anonymous_visitors_are_asked_to_log_in(page: Page, live_server):
    page.goto(live_server.url + PAGE)
    page.get_by_role("link", name="Log in to measure").click()
    page.wait_for_url("**/accounts/login/**")
    assert "prefix_chars%3D1300" in page.url or "prefix_chars=1300" in page.url
