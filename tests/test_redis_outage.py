"""Redis is a cache: losing it must lose no student's work and stop no page the database serves.

With Redis stopped every page was a 500, Show answer posts were lost and nobody could log in,
while /healthz said ok.
"""

import logging
import os
import signal
import threading
import time

import pytest
import redis
from django.test import Client

from lessons.models import Card
from pagecache.content_cache import CONTENT
from quiz.models import Review, Showing
from serving.models import RateLimitCount
from tests.conftest import PASSWORD, SEED_CARD_URL
from tests.limits import (
    NetworkToRedis,
    OwnRedis,
    SteppedClock,
    forget_redis_outages,
    own_redis,
    point_the_site_at,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def outage_clock(monkeypatch) -> SteppedClock:
    clock = SteppedClock()
    monkeypatch.setattr("serving.cache_outage.clock", clock)
    return clock


@pytest.fixture
def site_redis(settings, tmp_path, monkeypatch, outage_clock) -> OwnRedis:
    forget_redis_outages(monkeypatch)
    with own_redis() as server:
        point_the_site_at(settings, server.url)
        yield server


def outage_reports(caplog) -> list[logging.LogRecord]:
    return [
        record
        for record in caplog.records
        if record.name == "felab.outage" and record.levelno == logging.ERROR
    ]


def test_pages_answers_and_log_in_carry_on_while_redis_is_down(site_redis, lessons, student, caplog):
    caplog.set_level(logging.WARNING, logger="felab.outage")
    client = Client()
    assert client.get(SEED_CARD_URL).status_code == 200
    assert client.post(SEED_CARD_URL + "show/", {"answer": "before"}).status_code == 302
    assert redis.Redis.from_url(site_redis.url).keys("felab-test:*")  # the site really used it

    site_redis.kill()
    for url in ["/", SEED_CARD_URL, "/sim/", "/progress/", "/accounts/login/", "/healthz"]:
        assert client.get(url).status_code == 200, url
    shown = client.post(SEED_CARD_URL + "show/", {"answer": "while Redis was down"})
    assert shown.status_code == 302
    assert Showing.objects.filter(answer="while Redis was down").exists()
    assert "while Redis was down" in client.get(shown["Location"]).content.decode()
    rated = client.post(SEED_CARD_URL + "rate/", {"rating": 3})
    assert rated.status_code == 302 and Review.objects.count() == 1

    logged_in = client.post("/accounts/login/", {"username": "sam", "password": PASSWORD})
    assert logged_in.status_code == 302 and client.session["_auth_user_id"] == str(student.pk)
    assert set(Showing.objects.values_list("user", flat=True)) == {student.pk}  # the work joined the account
    assert client.get("/progress/").status_code == 200

    # Dozens of failed cache calls so far: one report, not one per request.
    assert len(outage_reports(caplog)) == 1
    assert "Redis is unreachable" in outage_reports(caplog)[0].getMessage()


def test_an_outage_is_reported_once_a_minute(site_redis, outage_clock, lessons, caplog):
    caplog.set_level(logging.WARNING, logger="felab.outage")
    client = Client()
    site_redis.kill()
    for _ in range(5):
        assert client.get(SEED_CARD_URL).status_code == 200
        outage_clock.advance(10)  # past the 2 s pause, so each request tries Redis again
    assert len(outage_reports(caplog)) == 1
    outage_clock.advance(20)  # 60 s after the first report
    assert client.get(SEED_CARD_URL).status_code == 200
    reports = outage_reports(caplog)
    assert len(reports) == 2 and "failure(s) since the last report" in reports[1].getMessage()


def test_log_in_attempts_count_in_the_database_while_redis_is_down(site_redis, settings, student):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": (3, 60)}
    client = Client()
    wrong = {"username": "sam", "password": "guess"}
    assert client.post("/accounts/login/", wrong).status_code == 200  # counted in Redis
    site_redis.kill()
    statuses = [client.post("/accounts/login/", wrong).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]  # the database's count starts at the outage
    assert RateLimitCount.objects.filter(key__startswith="ratelimit:login:").get().count == 4


def test_a_content_edit_made_while_redis_is_unreachable_is_not_hidden_when_it_answers_again(
    settings, tmp_path, monkeypatch, outage_clock, lessons, client
):
    forget_redis_outages(monkeypatch)
    with own_redis() as server:
        network = NetworkToRedis(server.port)
        point_the_site_at(settings, network.url)
        before = CONTENT.read()
        assert client.get(SEED_CARD_URL).status_code == 200  # this process keeps the page under `before`
        network.cut()
        card = Card.objects.get(lesson__slug="concurrency-sweep", step=1)
        card.title = "Edited while Redis was unreachable"
        card.save()  # its new content version cannot reach Redis
        assert "Edited while Redis was unreachable" in client.get(SEED_CARD_URL).content.decode()
        network.mend()
        outage_clock.advance(5)
        # Redis still holds the token from before the edit; the first process to reach it
        # again replaces it, so no process goes on serving a page it kept before the edit.
        assert "Edited while Redis was unreachable" in client.get(SEED_CARD_URL).content.decode()
        assert CONTENT.read() != before
        network.cut()


def test_a_redis_that_hangs_costs_a_request_a_short_timeout(site_redis, outage_clock, lessons):
    # SIGSTOP: connections are accepted, nothing is answered, as with a Redis that is stuck.
    # redis-py waits 5 s by default; the site's 0.25 s, once, then skips Redis for 2 s.
    client = Client()
    assert client.get(SEED_CARD_URL).status_code == 200
    answered, rescued = threading.Event(), []

    def rescue_a_hung_request() -> None:  # without socket timeouts the request would wait for ever
        if not answered.wait(timeout=60):
            rescued.append(True)
            os.kill(site_redis.process.pid, signal.SIGCONT)

    os.kill(site_redis.process.pid, signal.SIGSTOP)
    watchdog = threading.Thread(target=rescue_a_hung_request)
    watchdog.start()
    try:
        started = time.monotonic()
        status = client.post(SEED_CARD_URL + "show/", {"answer": "stuck"}).status_code
        took = time.monotonic() - started
    finally:
        answered.set()
        watchdog.join()
        os.kill(site_redis.process.pid, signal.SIGCONT)
    assert not rescued and status == 302 and Showing.objects.filter(answer="stuck").exists()
    assert took < 2.5  # ten times the timeout it pays, half of redis-py's default


def test_a_log_out_while_redis_is_unreachable_stays_a_log_out_when_it_answers_again(
    settings, tmp_path, monkeypatch, outage_clock, student, lessons
):
    forget_redis_outages(monkeypatch)
    with own_redis() as server:
        network = NetworkToRedis(server.port)
        point_the_site_at(settings, network.url)
        client = Client()
        assert client.post("/accounts/login/", {"username": "sam", "password": PASSWORD}).status_code == 302
        old_cookie = client.cookies["sessionid"].value
        assert client.get("/progress/").status_code == 200  # the session now sits in Redis too
        network.cut()
        assert client.post("/accounts/logout/").status_code == 302  # gone from the database only
        network.mend()
        outage_clock.advance(5)
        # Someone holding the old cookie (a shared computer's history, a stolen cookie).
        holder = Client()
        holder.cookies["sessionid"] = old_cookie
        page = holder.get("/").content.decode()
        assert 'action="/accounts/logout/"' not in page and 'href="/accounts/login/?next=' in page
        network.cut()
