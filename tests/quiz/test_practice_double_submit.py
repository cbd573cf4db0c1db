"""Identical practice submits sent at once (a double click, a resent form) against a live server:
each answers 200 with the first's result, and the draw counts one try."""

import threading
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar

import pytest

from lessons.models import PracticeTemplate
from quiz.models import PracticeAttempt, PracticeState, Rating

from .practice_forms import hidden_fields

SLUG = "l05-kv-per-conversation"
URL = f"/practice/{SLUG}/"
AT_ONCE = 8  # under the live server's listen backlog (10): more are reset before Django sees them


class Browser:
    """One learner's cookies, shared by every request sent for them."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def get(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=60) as response:
            return response.read().decode()

    def csrf(self) -> str:
        return next(cookie.value for cookie in self.jar if cookie.name == "csrftoken")

    def post(self, path: str, data: dict) -> tuple[int, str]:
        body = urllib.parse.urlencode({"csrfmiddlewaretoken": self.csrf(), **data}).encode()
        request = urllib.request.Request(self.base + path, data=body, headers={"Referer": self.base + path})
        try:
            with self.opener.open(request, timeout=60) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()


def all_at_once(browser: Browser, data: dict) -> list[tuple[int, str]]:
    start = threading.Barrier(AT_ONCE)
    results: list[tuple[int, str]] = []

    def send() -> None:
        start.wait()
        try:
            results.append(browser.post(URL, data))
        except OSError as error:  # refused or reset: no answer at all
            results.append((0, repr(error)))

    threads = [threading.Thread(target=send) for _ in range(AT_ONCE)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.fixture
def browser(live_server, transactional_db, lessons) -> Browser:
    """A learner with a session already (the first answer starts one)."""
    browser = Browser(live_server.url)
    template = PracticeTemplate.objects.get(slug=SLUG)
    form = hidden_fields(browser.get(f"{URL}?seed=1"))
    status, _ = browser.post(URL, {**form, "answer": f"{template.problem(1).answer * 5} GB"})
    assert status == 200
    return browser


def test_identical_first_answers_at_once_count_one_try_and_all_get_its_result(browser):
    template = PracticeTemplate.objects.get(slug=SLUG)
    form = hidden_fields(browser.get(f"{URL}?seed=2"))
    results = all_at_once(browser, {**form, "answer": f"{template.problem(2).answer} GB"})
    assert [status for status, _ in results] == [200] * AT_ONCE
    assert all("Right:" in page and "not counted" not in page for _, page in results)
    attempt = PracticeAttempt.objects.get(seed=2)
    assert (attempt.tries, attempt.rating) == (1, Rating.GOT_IT)
    assert PracticeState.objects.get().review_count == 1


def test_identical_second_tries_at_once_count_one_try(browser):
    template = PracticeTemplate.objects.get(slug=SLUG)
    page = browser.get(f"{URL}?seed=3")
    status, page = browser.post(
        URL, {**hidden_fields(page), "answer": f"{template.problem(3).answer * 5} GB"}
    )
    assert status == 200 and "Try again (2 tries left)" in page
    results = all_at_once(browser, {**hidden_fields(page), "answer": f"{template.problem(3).answer * 6} GB"})
    assert [status for status, _ in results] == [200] * AT_ONCE
    assert all("Try again (1 try left)" in page for _, page in results)
    assert PracticeAttempt.objects.get(seed=3).tries == 2


def test_show_me_pressed_at_once_is_one_missed_it(browser):
    form = hidden_fields(browser.get(f"{URL}?seed=4"))
    results = all_at_once(browser, {**form, "action": "show"})
    assert [status for status, _ in results] == [200] * AT_ONCE
    assert all("Shown:" in page for _, page in results)
    attempt = PracticeAttempt.objects.get(seed=4)
    assert attempt.shown_solution and attempt.rating == Rating.MISSED_IT
