"""Mixed practice sets (/practice/set/): the server's draw, the set's pages with and without htmx,
a set that counts once whatever is resent, and its summary per lesson."""

import itertools
import os
import random
import re
from collections import Counter

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils.html import escape

from lessons.models import Card, PracticeTemplate
from quiz import practice_sets, practice_stats
from quiz.learners import Learner
from quiz.models import PracticeAttempt, PracticeSet, PracticeSetItem, PracticeState
from quiz.practice_sets import Candidate, draw_order
from quiz.practice_views import hint_limit

from .conftest import anonymous_learner
from .practice_forms import hidden_fields


@pytest.fixture(autouse=True)
def _fixed_draw(monkeypatch):
    """Each new set drawn as seed SET_SEED draws it: the same ten problems on every run."""
    monkeypatch.setattr(practice_sets, "new_rng", lambda: random.Random(int(os.environ.get("SET_SEED", "7"))))


pytestmark = pytest.mark.django_db


def practice_sets_now():
    from quiz import clock

    return clock.now()


START = "/practice/set/"


# The draw, on its own -------------------------------------------------------------------------


def _switches(order: list[Candidate]) -> int:
    return sum(a.lesson_id != b.lesson_id for a, b in itertools.pairwise(order))


def test_the_draw_never_gives_one_template_twice_in_a_row():
    for seed in range(200):
        rng = random.Random(seed)
        pool = [Candidate(t, t % 3, rng.choice([0.5, 1, 3, 9])) for t in range(rng.randint(2, 8))]
        order = draw_order(pool, rng)
        assert len(order) == practice_sets.SET_SIZE
        assert all(a.template_id != b.template_id for a, b in itertools.pairwise(order)), order


def test_two_templates_alternate_and_fewer_make_no_mixed_set():
    # However heavy one of two templates is, the set alternates them.
    order = draw_order([Candidate(1, 1, 100.0), Candidate(2, 1, 1.0)], random.Random(4))
    ids = [c.template_id for c in order]
    assert len(ids) == 10 and set(ids[0::2]) | set(ids[1::2]) == {1, 2} and len(set(ids[0::2])) == 1
    assert len(draw_order([Candidate(1, 1, 1.0)], random.Random(1))) == 1
    assert draw_order([], random.Random(1)) == []


def test_the_draw_interleaves_lessons():
    # Two lessons of three templates each, equal weights: blocked practice would switch lessons
    # once; drawn at random, about half the time; interleaved, most of the time.
    pool = [Candidate(t, 1 if t < 3 else 2, 1.0) for t in range(6)]
    switches = [_switches(draw_order(pool, random.Random(seed))) for seed in range(100)]
    assert sum(switches) / len(switches) >= 7  # of 9 places a lesson could change


def test_the_draw_gives_more_of_the_heavier_templates():
    pool = [Candidate(1, 1, 9.0), Candidate(2, 1, 1.0), Candidate(3, 2, 9.0), Candidate(4, 2, 1.0)]
    counts = Counter(c.template_id for seed in range(100) for c in draw_order(pool, random.Random(seed)))
    assert counts[1] > 2 * counts[2] and counts[3] > 2 * counts[4]


# Who has started what, and the weights ---------------------------------------------------------


def _start_lesson(client: Client, lesson_slug: str) -> None:
    """Show the answer of the lesson's first card: the lesson is started."""
    card = Card.objects.filter(lesson__slug=lesson_slug, published=True).order_by("step").first()
    assert client.post(card.get_absolute_url() + "show/", {"answer": ""}).status_code == 302


def test_only_the_started_lessons_are_drawn(client, lessons):
    _start_lesson(client, "kv-cache")
    _start_lesson(client, "batch-api")
    learner = anonymous_learner(client)
    found = practice_sets.candidates(learner, practice_sets_now())
    lesson_slugs = set(
        PracticeTemplate.objects.filter(pk__in=[c.template_id for c in found]).values_list(
            "lesson__slug", flat=True
        )
    )
    assert lesson_slugs == {"kv-cache", "batch-api"}
    published = PracticeTemplate.objects.published().filter(lesson__slug__in=lesson_slugs).count()
    assert len(found) == published


def test_a_due_template_and_a_weak_lesson_weigh_more(client, lessons, clock):
    _start_lesson(client, "kv-cache")
    _start_lesson(client, "batch-api")
    learner = anonymous_learner(client)
    kv = PracticeTemplate.objects.published().filter(lesson__slug="kv-cache").order_by("order", "slug")
    batch = PracticeTemplate.objects.published().filter(lesson__slug="batch-api").order_by("order", "slug")
    # Lesson 05: four problems right first time over four days (its mastery above lesson 08's);
    # then lesson 08: one template answered right just now (not due for days), the rest new.
    seeds = iter(range(1, 500))
    answers = set()
    while len(answers) < 4:
        seed = next(seeds)
        if (value := kv[0].problem(seed).answer) not in answers:
            answers.add(value)
            clock.advance(days=1)
            answer_right(client, kv[0], seed)
    answer_right(client, batch[0], 11)
    weights = {c.template_id: c.weight for c in practice_sets.candidates(learner, practice_sets_now())}
    assert weights[batch[1].pk] > weights[batch[0].pk]  # new (due) over not due, same lesson
    assert weights[kv[1].pk] < weights[batch[1].pk]  # both new: the weaker lesson (08) weighs more


def answer_right(
    client: Client, template: PracticeTemplate, seed: int, url: str | None = None, **extra
) -> str:
    page = client.post(
        url or template.get_absolute_url(),
        {"seed": seed, "answer": template.problem(seed).answer_text, **extra},
    )
    assert page.status_code == 200, page.content[:300]
    return page.content.decode()


# The pages ----------------------------------------------------------------------------------------


def test_a_student_with_nothing_started_is_told_what_to_do(client, lessons):
    page = client.get(START).content.decode()
    assert "Start a lesson first" in page and 'href="/"' in page and 'href="/practice/"' in page
    assert "Start a set" not in page
    response = client.post(START, {"number": 1})
    assert response.status_code == 200 and "Start a lesson first" in response.content.decode()
    assert not PracticeSet.objects.exists()


def test_practice_and_progress_link_the_set(client, lessons):
    assert 'href="/practice/set/"' in client.get("/practice/").content.decode()
    _start_lesson(client, "kv-cache")
    assert 'href="/practice/set/"' in client.get("/progress/").content.decode()


def _start_set(client: Client, *lessons_started: str) -> PracticeSet:
    for slug in lessons_started:
        _start_lesson(client, slug)
    page = client.get(START).content.decode()
    number = re.search(r'name="number" value="(\d+)"', page).group(1)
    response = client.post(START, {"number": number})
    assert response.status_code == 302, response.content[:300]
    found = PracticeSet.objects.filter(number=int(number)).latest("pk")  # the one just made
    assert response["Location"] == f"/practice/set/{found.number}/1/"
    return found


def test_the_start_page_says_lessons_are_mixed_and_no_kind_of_problem_comes_twice_running(client, lessons):
    # The draw interleaves lessons and never repeats a template; "the same problem" would be a
    # promise about draws, and "one lesson after another" reads as blocks.
    _start_lesson(client, "kv-cache")
    _start_lesson(client, "batch-api")
    lede = client.get(START).content.decode().split('<p class="lede">')[1].split("</p>")[0]
    assert "lessons mixed, not one block at a time" in lede
    assert "never two of one kind of problem in a row" in lede
    assert "one lesson after another" not in lede


def test_a_set_is_ten_stored_problems_of_the_started_lessons(client, lessons):
    practice_set = _start_set(client, "kv-cache", "batch-api")
    items = list(practice_set.items.select_related("template__lesson"))
    assert [item.position for item in items] == list(range(1, 11))
    assert {item.template.lesson.slug for item in items} <= {"kv-cache", "batch-api"}
    assert all(a.template_id != b.template_id for a, b in itertools.pairwise(items))
    assert practice_set.anonymous_id == anonymous_learner(client).anonymous_id and practice_set.user is None


def test_starting_twice_from_one_page_makes_one_set(client, lessons):
    _start_lesson(client, "kv-cache")
    page = client.get(START).content.decode()
    number = re.search(r'name="number" value="(\d+)"', page).group(1)
    first = client.post(START, {"number": number})
    again = client.post(START, {"number": number})
    assert first["Location"] == again["Location"]
    assert PracticeSet.objects.count() == 1 and PracticeSetItem.objects.count() == 10
    # A forged number far ahead makes the next set, not set 99.
    client.post(START, {"number": 99})
    assert sorted(PracticeSet.objects.values_list("number", flat=True)) == [1, 2]


def _item(practice_set: PracticeSet, position: int) -> PracticeSetItem:
    return practice_set.items.select_related("template").get(position=position)


def _answer_item(client: Client, practice_set: PracticeSet, position: int, typed: str | None = None, htmx: bool = False,
                 **extra) -> str:  # fmt: skip
    url = f"/practice/set/{practice_set.number}/{position}/"
    fields = hidden_fields(client.get(url).content.decode())
    item = _item(practice_set, position)
    data = {
        **fields,
        "answer": item.template.problem(item.seed).answer_text if typed is None else typed,
        **extra,
    }
    response = client.post(url, data, headers={"HX-Request": "true"} if htmx else {})
    assert response.status_code == 200, response.content[:300]
    return response.content.decode()


@pytest.mark.parametrize("htmx", [False, True])
def test_a_set_problem_is_answered_on_the_practice_pages_rules(client, lessons, htmx):
    practice_set = _start_set(client, "kv-cache")
    item = _item(practice_set, 1)
    page = client.get("/practice/set/1/1/").content.decode()
    assert escape(item.template.problem(item.seed).question) in page
    assert "Practice set 1 · problem 1 of 10" in page and 'action="/practice/set/1/1/"' in page
    page = _answer_item(client, practice_set, 1, htmx=htmx)
    assert "Right" in page and "Worked solution" in page and 'href="/practice/set/1/2/"' in page
    assert "Next in set" in page and "Another one like this" not in page
    attempt = PracticeAttempt.objects.get()
    # The same draw as its own practice page: one attempt per learner and draw.
    assert (attempt.template_id, attempt.seed, attempt.tries) == (item.template_id, item.seed, 1)
    assert PracticeState.objects.filter(template=item.template).exists()


def test_a_wrong_try_a_hint_and_show_me_work_in_a_set(client, lessons):
    practice_set = _start_set(client, "kv-cache")
    # The first problem with a step Hint may reveal (some give the answer away at their first).
    here = next(i for i in practice_set.items.all() if hint_limit(i.template.problem(i.seed)) > 0).position
    page = _answer_item(client, practice_set, here, typed="1e-9")
    assert "Try again (2 tries left)" in page
    url = f"/practice/set/1/{here}/"
    fields = hidden_fields(client.get(url).content.decode())
    page = client.post(url, {**fields, "action": "hint"}).content.decode()
    assert "Hints: 1 step" in page
    page = client.post(url, {**hidden_fields(page), "action": "show"}).content.decode()
    assert "Shown:" in page or "Worked solution" in page
    attempt = PracticeAttempt.objects.get()
    assert attempt.shown_solution and attempt.tries == 1 and attempt.hints_used == 1
    # Reloading shows it finished, every step on the page, with the way on.
    again = client.get(url).content.decode()
    following = f"/practice/set/1/{here + 1}/" if here < 10 else "/practice/set/1/"
    assert "Worked solution" in again and f'href="{following}"' in again


def test_a_resent_answer_and_a_second_tab_count_once(client, lessons):
    practice_set = _start_set(client, "kv-cache")
    url = "/practice/set/1/1/"
    fields = hidden_fields(client.get(url).content.decode())
    item = _item(practice_set, 1)
    data = {**fields, "answer": "1e-9"}
    client.post(url, data)
    client.post(url, data)  # the same form again: from a page that had seen no try
    second_tab = Client()
    second_tab.cookies = client.cookies
    second_tab.post(url, data)
    attempt = PracticeAttempt.objects.get(template=item.template, seed=item.seed)
    assert attempt.tries == 1
    # The seed comes from the stored set, never the form.
    client.post(url, {**hidden_fields(client.get(url).content.decode()), "seed": 424242,
                      "answer": item.template.problem(item.seed).answer_text})  # fmt: skip
    assert not PracticeAttempt.objects.filter(seed=424242).exists()
    assert PracticeAttempt.objects.get(template=item.template, seed=item.seed).verdict == "right"


def test_another_learners_set_is_not_found(client, lessons):
    _start_set(client, "kv-cache")
    other = Client()
    _start_lesson(other, "kv-cache")
    assert other.get("/practice/set/1/").status_code == 404
    assert other.get("/practice/set/1/1/").status_code == 404
    assert other.post("/practice/set/1/1/", {"answer": "1"}).status_code == 404
    assert client.get("/practice/set/1/11/").status_code == 404


def test_an_abandoned_set_is_resumed_or_a_new_one_started(client, lessons):
    practice_set = _start_set(client, "kv-cache")
    for position in (1, 2, 3):
        _answer_item(client, practice_set, position)
    page = client.get(START).content.decode()
    assert "Practice set 1: 3 of 10 finished" in page and 'href="/practice/set/1/4/"' in page
    assert "Start a new set instead" in page
    response = client.post(START, {"number": re.search(r'name="number" value="(\d+)"', page).group(1)})
    assert response["Location"] == "/practice/set/2/1/"
    assert PracticeSet.objects.get(number=1).items.count() == 10  # the old one stays as it was
    assert 'href="/practice/set/1/"' in client.get(START).content.decode()


def test_the_summary_reads_per_lesson_what_the_set_came_to(client, lessons, clock):
    practice_set = _start_set(client, "kv-cache", "batch-api")
    items = list(practice_set.items.select_related("template__lesson"))
    mistaken = hinted = None
    for item in items:
        problem = item.template.problem(item.seed)
        named = problem.mistakes
        if mistaken is None and named and item.template.lesson_id == items[0].template.lesson_id:
            # A named mistake at the first try, then Show me.
            typed = f"{named[0].value!r} {problem.unit}"
            page = _answer_item(client, practice_set, item.position, typed=typed)
            assert escape(named[0].says) in page
            url = f"/practice/set/1/{item.position}/"
            client.post(url, {**hidden_fields(client.get(url).content.decode()), "action": "show"})
            mistaken = (item, named[0].says)
        elif (
            hinted is None and item.template.lesson_id != items[0].template.lesson_id and hint_limit(problem)
        ):
            # Right at the first try after a hint: not right first time in the summary.
            url = f"/practice/set/1/{item.position}/"
            client.post(url, {**hidden_fields(client.get(url).content.decode()), "action": "hint"})
            _answer_item(client, practice_set, item.position)
            hinted = item
        else:
            _answer_item(client, practice_set, item.position)
    assert mistaken is not None, "some problem in the set offers a named mistake"
    assert hinted is not None and hinted.template.lesson_id != mistaken[0].template.lesson_id
    page = client.get("/practice/set/1/").content.decode()
    assert "Finished:</strong> 8 of 10 right first time" in page
    for lesson_id, missed in ((mistaken[0].template.lesson_id, 1), (hinted.template.lesson_id, 1)):
        section = page.split(f'id="set-lesson-{lesson_id}"')[1].split("</section>")[0]
        in_lesson = [item for item in items if item.template.lesson_id == lesson_id]
        assert f"{len(in_lesson) - missed} of {len(in_lesson)}</strong> right first time" in section
    assert "right at the first try, after a hint" in page
    lesson = mistaken[0].template.lesson
    section = page.split(f'id="set-lesson-{lesson.pk}"')[1].split("</section>")[0]
    assert escape(mistaken[1]) in section
    # What is now due: the Show me problem comes back soonest (Missed it), none due yet.
    assert "Nothing due now; its next problem comes back in" in section
    clock.advance(days=400)
    later = client.get("/practice/set/1/").content.decode()
    assert "due now</strong>" in later
    # The summary is the learner's own records: the start page says the last set is finished.
    assert "is finished: 8 of 10 right first time" in client.get(START).content.decode()
    # The start form sent again for this set, now finished, shows its summary.
    assert client.post(START, {"number": 1})["Location"] == "/practice/set/1/"


def test_rating_a_set_problem_without_javascript_goes_on_in_the_set(client, lessons):
    practice_set = _start_set(client, "kv-cache")
    page = _answer_item(client, practice_set, 1)
    assert 'name="set_place" value="1/1"' in page
    attempt = PracticeAttempt.objects.get()
    rated = client.post(
        f"/practice/{attempt.template.slug}/rate/", {"attempt": attempt.pk, "rating": 2, "set_place": "1/1"}
    ).content.decode()
    assert "Rating stored" in rated and 'href="/practice/set/1/2/"' in rated and "Next in set" in rated
    # A place in someone else's set, or none, is the usual page.
    rated = client.post(
        f"/practice/{attempt.template.slug}/rate/", {"attempt": attempt.pk, "rating": 3, "set_place": "7/1"}
    ).content.decode()
    assert "Another one like this" in rated


def test_a_sessions_sets_join_the_account_at_log_in(client, lessons, student):
    from tests.conftest import PASSWORD

    account = Client()
    account.force_login(student)
    _start_set(account, "kv-cache")  # the account's set 1
    session_set = _start_set(client, "batch-api")  # the session's set 1
    _answer_item(client, session_set, 1)
    assert (
        client.post("/accounts/login/", {"username": student.username, "password": PASSWORD}).status_code
        == 302
    )
    assert sorted(PracticeSet.objects.filter(user=student).values_list("number", flat=True)) == [1, 2]
    joined = PracticeSet.objects.get(user=student, number=2)
    assert joined.pk == session_set.pk and joined.anonymous_id == ""
    assert "1 of 10 finished" in client.get("/practice/set/2/").content.decode()


def test_the_export_lists_the_sets(client, lessons):
    practice_set = _start_set(client, "kv-cache")
    data = client.get("/progress/export.json").json()
    [exported] = data["practice_sets"]
    assert exported["number"] == 1 and len(exported["problems"]) == 10
    first = _item(practice_set, 1)
    assert exported["problems"][0] == {"position": 1, "template": first.template.slug, "seed": first.seed}


def test_set_is_no_template_slug(lessons):
    template = PracticeTemplate.objects.published().first()
    template.slug = "set"
    with pytest.raises(ValidationError) as raised:
        template.clean()
    assert "page of its own" in str(raised.value)


def test_a_withdrawn_problem_does_not_hold_the_set_up(client, lessons):
    practice_set = _start_set(client, "kv-cache")
    for position in range(1, 10):
        _answer_item(client, practice_set, position)
    last = _item(practice_set, 10).template
    last.published = False
    last.save()
    assert client.get("/practice/set/1/10/").status_code == 404
    assert "Finished:" in client.get("/practice/set/1/").content.decode()


def test_a_problem_withdrawn_before_it_was_answered_is_left_out_of_the_counts(client, lessons):
    practice_set = _start_set(client, "kv-cache", "batch-api")
    for position in range(1, 10):
        _answer_item(client, practice_set, position)
    last = _item(practice_set, 10).template
    last.published = False
    last.save()
    page = client.get("/practice/set/1/").content.decode()
    # Nobody can answer it now: "9 of 10" would read as a miss.
    assert "Finished:</strong> 9 of 9 right first time" in page
    assert "1 withdrawn from practice before you finished it, not counted" in page
    in_lesson = [item for item in practice_set.items.all() if item.template.lesson_id == last.lesson_id]
    section = page.split(f'id="set-lesson-{last.lesson_id}"')[1].split("</section>")[0]
    assert f"{len(in_lesson) - 1} of {len(in_lesson) - 1}</strong> right first time" in section
    assert "1 withdrawn from practice, not counted" in section
    assert "is finished: 9 of 9 right first time" in client.get(START).content.decode()


def test_learner_of_a_fresh_visitor_knows_no_sets(db):
    assert practice_sets.latest(Learner()) is None
    assert practice_sets.candidates(Learner(), practice_sets_now()) == []


def test_every_mastery_level_has_a_weight_in_the_draw():
    assert set(practice_sets.MASTERY_WEIGHT) == set(practice_stats.MASTERY_WORDS)
