"""A student whose class's Redis has just died still sees the answer and keeps it."""

import logging

import pytest
from playwright.sync_api import Page, expect

from quiz.models import Showing
from tests.conftest import SEED_CARD_URL
from tests.limits import OwnRedis, SteppedClock, forget_redis_outages, own_redis, point_the_site_at


@pytest.fixture
def site_redis(settings, tmp_path, monkeypatch) -> OwnRedis:
    # Before the live server: it runs in this process and reads these settings.
    forget_redis_outages(monkeypatch)
    monkeypatch.setattr("serving.cache_outage.clock", SteppedClock())
    with own_redis() as server:
        point_the_site_at(settings, server.url)
        yield server


def test_show_answer_while_redis_is_down_shows_and_keeps_the_answer(
    site_redis, page: Page, live_lessons, caplog
):
    caplog.set_level(logging.WARNING, logger="felab.outage")
    page.goto(live_lessons + SEED_CARD_URL)
    expect(page.get_by_label("Your answer")).to_be_visible()
    site_redis.kill()

    page.get_by_label("Your answer").fill("Batching shares each weight read")
    page.get_by_role("button", name="Show answer").click()
    expect(page.locator(".typed-answer")).to_contain_text("Batching shares each weight read")
    expect(page.get_by_role("heading", name="In plain words")).to_be_visible()

    page.reload()
    expect(page.locator(".typed-answer")).to_contain_text("Batching shares each weight read")
    assert Showing.objects.get().answer == "Batching shares each weight read"
    assert [record.name for record in caplog.records if record.levelno == logging.ERROR] == ["felab.outage"]
