"""Calibration over time on /progress/: a simulated student whose estimates get sharper (3×, then
2× too low, then 1.3×, then 1.05× off, five problems each) sees the line fall toward 1× in the
server-drawn chart, and the same medians in the table beside it."""

import re
import time

import pytest

from lessons.models import PracticeTemplate
from quiz import charts
from quiz.models import PracticeAttempt
from quiz.practice_stats import practice_of, templates_by_id

pytestmark = pytest.mark.django_db

SLUG = "l05-kv-per-conversation"
# Each run of five answers this many times the calculator's value: worse on both sides, then sharper.
FACTORS = (3, 1 / 2, 1.3, 1.05)


@pytest.fixture
def improving_student(client, lessons, clock):
    template = PracticeTemplate.objects.get(slug=SLUG)
    seed = 0
    for factor in FACTORS:
        for _ in range(5):
            seed += 1
            value = template.problem(seed).answer * factor
            # An hour after the page was drawn: never "quick", so every rating is the error's own.
            form = {"seed": seed, "answer": f"{value}", "shown_at": time.time() - 3600}
            assert client.post(f"/practice/{SLUG}/", form).status_code == 200
            clock.advance(hours=1)
    return client


def calibration_rows(page: str) -> list[tuple[str, str]]:
    table = page.split('id="calibration-table"')[1].split("</table>")[0]
    return re.findall(r"<td>([^<]+)</td>\s*<td>([^<]+)</td>", table)


def test_the_table_shows_each_runs_median_falling_toward_one(improving_student):
    page = improving_student.get("/progress/").content.decode()
    assert calibration_rows(page) == [("1–5", "3×"), ("6–10", "2×"), ("11–15", "1.3×"), ("16–20", "1.1×")]
    assert "05 · KV cache and context length" in page.split('id="calibration-table"')[1]


def test_the_chart_is_drawn_on_the_server_and_its_line_falls(improving_student):
    page = improving_student.get("/progress/").content.decode()
    chart = page.split('id="calibration-chart"')[1].split('<p class="chart-explore"')[0]
    wide = chart.split('class="chart-wide"')[1].split("</svg>")[0]
    lines = re.findall(r'<polyline fill="none" points="([^"]+)"', wide)
    assert len(lines) == 1  # one lesson practised: one line (the 1× mark is a shape)
    points = [tuple(map(float, point.split(","))) for point in lines[0].split()]
    xs, ys = [x for x, _ in points], [y for _, y in points]
    # Left to right, and down the page (SVG's y grows downward) as the error shrinks toward 1×.
    assert len(points) == 4 and xs == sorted(xs) and ys == sorted(ys) and len(set(ys)) == 4
    assert "Lesson 05" in chart and "1×" in wide


def test_the_figure_plots_the_medians_at_each_runs_last_attempt(improving_student):
    practice = practice_of(PracticeAttempt.objects.filter(user=None).first(), templates_by_id())
    figure = charts.calibration_figure(practice)
    (trace,) = figure["data"]
    assert trace["x"] == [5, 10, 15, 20]
    assert [round(y, 3) for y in trace["y"]] == [3.0, 2.0, 1.3, 1.05]
    assert figure["layout"]["yaxis"]["type"] == "log"


def test_show_me_without_an_answer_leaves_no_calibration_point(client, lessons):
    # An answer of zero is refused unread (tests/quiz/test_practice.py); Show me has no answer.
    for seed in (1, 2, 3):
        client.post(f"/practice/{SLUG}/", {"seed": seed, "action": "show"})
    assert PracticeAttempt.objects.count() == 3
    practice = practice_of(PracticeAttempt.objects.first(), templates_by_id())
    assert practice[0].calibration == [] and practice[0].right == 0


def test_no_practice_no_chart(client, lessons):
    page = client.get("/progress/").content.decode()
    assert 'id="calibration-chart"' not in page and "No practice problems answered yet" in page
