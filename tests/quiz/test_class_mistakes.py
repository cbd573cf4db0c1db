"""Mistakes the class makes that nobody named: /instructor/ and `drill --unnamed` show them from
one grouping; an instructor names one in the admin, and the next student who makes it reads its
sentence (quiz.class_mistakes, felab_sim.engine.problems.unnamed_mistakes)."""

import io
import json
import random
import time
from urllib.parse import parse_qs, urlparse

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.utils.html import escape

from felab_sim.engine.problems import unnamed_mistakes
from lessons.models import PracticeTemplate
from quiz.class_mistakes import planted_surfaced
from quiz.models import ClassMistake, PracticeAttempt

pytestmark = pytest.mark.django_db

SLUG = "l01-ttft-long-prompt"  # no named mistake of this template is 2× the right value
URL = f"/practice/{SLUG}/"
ADD_URL = "/admin/quiz/classmistake/add/"
SAYS = "Your answer is twice the time: count the prompt once, then add the overhead."


@pytest.fixture
def template(lessons) -> PracticeTemplate:
    return PracticeTemplate.objects.get(slug=SLUG)


def answer(client: Client, seed: int, value: float) -> str:
    response = client.post(URL, {"seed": seed, "answer": f"{value:.6g} ms", "shown_at": time.time()})
    assert response.status_code == 200
    return response.content.decode()


def doubled_by_the_class(client: Client, template: PracticeTemplate, seeds=range(1, 6)) -> None:
    """Five wrong first tries at twice the right value, and one wrong another way."""
    for seed in seeds:
        answer(client, seed, template.problem(seed).answer * 2)
    answer(client, 40, template.problem(40).answer * 3.7)


def unnamed_section(page: str) -> str:
    return page.split('id="unnamed-mistakes"')[1].split("</section>")[0]


def test_the_instructor_sees_the_unnamed_group_with_examples_and_a_link_to_name_it(
    student_client, template, instructor_client
):
    doubled_by_the_class(student_client, template)
    section = unnamed_section(instructor_client.get("/instructor/").content.decode())
    assert "83% of wrong first tries are 2× the right value, unnamed</strong> (5)" in section
    problem = template.problem(5)  # the latest 2× answer: examples are the latest first
    assert f"{problem.answer * 2:,.0f} ms for {problem.answer:,.0f} ms" in section
    link = section.split('data-group="times-2"')[1].split('href="')[1].split('"')[0]
    query = parse_qs(urlparse(link.replace("&amp;", "&")).query)
    assert urlparse(link).path == ADD_URL
    assert query == {"template": [str(template.pk)], "slug": ["times-2"], "formula": ["answer * 2"]}


def test_a_factor_of_8_or_1_074_is_labelled_without_a_direction(student_client, template, instructor_client):
    # ⅛ is what the course's named bits-for-bytes mistakes give: a label naming one direction would
    # contradict them for one of the two factors.
    for seed in range(1, 4):
        answer(student_client, seed, template.problem(seed).answer / 8)
    for seed in range(4, 7):
        answer(student_client, seed, template.problem(seed).answer * 1.073741824)
    section = unnamed_section(instructor_client.get("/instructor/").content.decode())
    assert "⅛ of the right value (bits and bytes mixed up?)" in section
    assert "1.074× the right value (1,024³/10⁹: GB and GiB mixed up?)" in section
    assert "bytes for bits" not in section and "bits for bytes" not in section


def test_a_factor_no_candidate_makes_shows_once_it_recurs_and_its_formula_names_it(
    student_client, template, instructor_client
):
    # A twelfth of the right value is none of the candidates: it shows only from the third draw
    # (seed 2's second answer is a second try, not a first).
    for seed in (1, 2, 2):
        answer(student_client, seed, template.problem(seed).answer / 12)
    assert "recurring" not in unnamed_section(instructor_client.get("/instructor/").content.decode())
    answer(student_client, 3, template.problem(3).answer / 12)
    section = unnamed_section(instructor_client.get("/instructor/").content.decode())
    assert "1/12 of the right value (recurring; no cause found), unnamed</strong> (3)" in section
    link = section.split('data-group="recurring-1-12"')[1].split('href="')[1].split('"')[0]
    assert parse_qs(urlparse(link.replace("&amp;", "&")).query)["formula"] == ["answer / 12"]


def test_drill_unnamed_prints_the_same_grouping_as_the_page(student_client, template, instructor_client):
    doubled_by_the_class(student_client, template)
    out = io.StringIO()
    call_command("drill", SLUG, "--unnamed", stdout=out)
    text = out.getvalue()
    assert f"{SLUG}: 6 wrong first tries; named 0" in text
    assert "83% of wrong first tries are 2× the right value, unnamed (5)" in text
    as_json = io.StringIO()
    call_command("drill", SLUG, "--unnamed", "--json", stdout=as_json)
    group = json.loads(as_json.getvalue())[0]["groups"][0]
    assert (group["key"], group["count"], group["formula"]) == ("times-2", 5, "answer * 2")
    page = unnamed_section(instructor_client.get("/instructor/").content.decode())
    assert f"{round(100 * group['share'])}% of wrong first tries are {group['label']}, unnamed" in page


def test_drill_reads_as_many_tries_as_the_page_unless_told_to_read_more(
    student_client, template, instructor_client, monkeypatch
):
    monkeypatch.setattr(unnamed_mistakes, "PAGE_TRIES", 4)
    doubled_by_the_class(student_client, template)  # six wrong first tries
    page = unnamed_section(instructor_client.get("/instructor/").content.decode())
    assert "its latest 4 first tries" in page and "4 wrong first tries (the latest)" in page
    out = io.StringIO()
    call_command("drill", SLUG, "--unnamed", stdout=out)
    assert f"{SLUG}: the latest 4 wrong first tries" in out.getvalue()
    as_json = io.StringIO()
    call_command("drill", SLUG, "--unnamed", "--json", stdout=as_json)
    [grouping] = json.loads(as_json.getvalue())
    assert (grouping["wrong_first_tries_read"], grouping["capped_at"]) == (4, 4)
    more = io.StringIO()
    call_command("drill", SLUG, "--unnamed", "--latest", "300", stdout=more)
    assert f"{SLUG}: 6 wrong first tries" in more.getvalue()


def test_the_section_says_what_it_reads_shows_and_sets_apart(student_client, template, instructor_client):
    doubled_by_the_class(student_client, template)
    # One answer graded against a draw the template no longer gives (an edit since).
    edited = PracticeAttempt.objects.get(seed=40)
    PracticeAttempt.objects.filter(pk=edited.pk).update(expected=edited.expected * 1.5)
    section = unnamed_section(instructor_client.get("/instructor/").content.decode())
    assert "wrong, or right but further from the right value than half the tolerance" in section
    assert "up to 3 groups a template, each of at least 2 answers" in section
    assert "1 whose draw gives another answer now" in section
    # Still in the denominator: 5 of the 6.
    assert "83% of wrong first tries are 2× the right value" in section


def test_students_and_anonymous_visitors_never_see_the_grouping(student_client, template, client):
    doubled_by_the_class(student_client, template)
    assert student_client.get("/instructor/").status_code == 403
    assert client.get("/instructor/").status_code == 302


def test_the_add_form_opens_with_the_template_and_formula_from_the_link(template, instructor_client):
    page = instructor_client.get(
        f"{ADD_URL}?template={template.pk}&formula=answer+*+2&slug=times-2"
    ).content.decode()
    assert 'value="answer * 2"' in page and 'value="times-2"' in page
    assert f'<option value="{template.pk}" selected>' in page


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"formula": "answer.__class__"}, "formula", "No attributes"),
        ({"formula": "__import__('os')"}, "formula", "No function calls"),
        ({"formula": "answer * " * 30}, "formula", "at most 200 characters"),
        ({"formula": "answer * tokens"}, "formula", "&#x27;tokens&#x27; is not a number this template"),
        ({"formula": "answer * 1"}, "formula", "so no student would ever read it"),
        ({"formula": "answer / 1000"}, "formula", "so no student would ever read it"),  # = in-seconds
        ({"slug": "in-seconds"}, "slug", "already has a mistake named in-seconds"),
        ({"slug": "Twice"}, "slug", "lower-case words joined by hyphens"),
        ({"says": "Twice {nothing}."}, "says", "{nothing} names no input or output"),
    ],
)
def test_the_admin_refuses_a_mistake_it_could_not_offer_saying_why(
    template, instructor_client, fields, field, words
):
    form = {"template": template.pk, "slug": "doubled", "says": SAYS, "formula": "answer * 2", **fields}
    response = instructor_client.post(ADD_URL, form)
    assert response.status_code == 200 and not ClassMistake.objects.exists()
    page = response.content.decode()
    errors = page.split(f'<ul class="errorlist" id="id_{field}_error">')[1].split("</ul>")[0]
    assert words in errors


def test_instructor_names_it_and_the_next_student_reads_its_sentence(
    student_client, other_student_client, template, instructor_client
):
    doubled_by_the_class(student_client, template)
    response = instructor_client.post(
        ADD_URL, {"template": template.pk, "slug": "times-2", "says": SAYS, "formula": "answer * 2"}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    page = answer(other_student_client, 7, template.problem(7).answer * 2.01)
    assert escape(SAYS) in page
    attempt = PracticeAttempt.objects.get(seed=7)
    assert attempt.first_mistake == attempt.mistake == "times-2"
    # The right answer and other wrong answers are as before.
    assert escape(SAYS) not in answer(other_student_client, 8, template.problem(8).answer)
    assert escape(SAYS) not in answer(other_student_client, 9, template.problem(9).answer * 3.7)
    # Named now: the class's earlier 2× answers count as named, and the group is gone.
    instructor_page = instructor_client.get("/instructor/").content.decode()
    assert "2× the right value, unnamed" not in unnamed_section(instructor_page)
    assert f'title="{escape(SAYS)}">times-2: 1</span>' in instructor_page
    out = io.StringIO()
    call_command("drill", SLUG, "--unnamed", stdout=out)
    assert f"{SLUG}: 8 wrong first tries; named 6, ambiguous 0, unmatched 2" in out.getvalue()
    as_json = io.StringIO()
    call_command("drill", SLUG, "--seed", "7", "--json", stdout=as_json)
    assert "times-2" in {m["slug"] for m in json.loads(as_json.getvalue())["mistakes"]}


def test_a_named_mistake_is_not_offered_where_it_would_name_another(template, student_client, lessons):
    # answer × 1,000 ÷ 1,000 is the template's own in-seconds on every draw: refused on save;
    # written around the admin it is never offered, and in-seconds still is.
    ClassMistake.objects.create(template=template, slug="thousandth", says="x", formula="answer / 1000")
    problem = PracticeTemplate.objects.get(slug=SLUG).problem(3)
    slugs = [m.slug for m in problem.mistakes]
    assert "in-seconds" in slugs and "thousandth" not in slugs
    assert "Your answer is in seconds" not in SAYS  # (the sentence tested above is ours)


def test_planted_mistakes_surface_as_their_templates_largest_group(lessons):
    # What bench/learning_mistakes.py asks, on a small class: each student answers one draw of
    # two templates through the practice page, right, the planted factor or wrong otherwise.
    plants = [(SLUG, 2.0), ("l12-moe-memory", 0.125)]
    rng = random.Random(5)
    for number in range(12):
        client = Client()
        client.force_login(User.objects.create(username=f"sim{number}"))
        for slug, factor in plants:
            draw = rng.randint(1, 10**6)
            right = PracticeTemplate.objects.get(slug=slug).problem(draw).answer
            value = right * rng.choice([1, factor, factor, rng.uniform(2.5, 6), 1 / rng.uniform(2.5, 6)])
            client.post(
                f"/practice/{slug}/", {"seed": draw, "answer": f"{value:.6g}", "shown_at": time.time()}
            )
    rows = planted_surfaced(plants)
    assert [(row.template, row.surfaced) for row in rows] == [(SLUG, True), ("l12-moe-memory", True)]
    # The largest group must be the planted factor itself: another factor does not surface.
    assert not any(row.surfaced for row in planted_surfaced([(slug, 3.0) for slug, _ in plants]))


# Grouping is kept between loads (quiz.class_mistakes): a load regroups only what changed.

OTHER = "l01-prompt-doubles"


def answer_other(client: Client, seed: int) -> None:
    """A wrong first try at another template: five times its right factor."""
    value = PracticeTemplate.objects.get(slug=OTHER).problem(seed).answer * 5
    response = client.post(
        f"/practice/{OTHER}/", {"seed": seed, "answer": f"{value:.6g}", "shown_at": time.time()}
    )
    assert response.status_code == 200


@pytest.fixture
def grouped(monkeypatch) -> list[str]:
    """The templates grouped afresh, by slug, in the order grouped."""
    from quiz import class_mistakes

    calls: list[str] = []
    real = class_mistakes.group_unnamed

    def counted(spec, tries, **kwargs):
        calls.append(spec.slug)
        return real(spec, tries, **kwargs)

    monkeypatch.setattr(class_mistakes, "group_unnamed", counted)
    return calls


def test_a_second_load_with_nothing_new_regroups_nothing(
    student_client, template, instructor_client, grouped
):
    doubled_by_the_class(student_client, template)
    answer_other(student_client, 3)
    first = unnamed_section(instructor_client.get("/instructor/").content.decode())
    assert sorted(grouped) == sorted([SLUG, OTHER])
    grouped.clear()
    assert unnamed_section(instructor_client.get("/instructor/").content.decode()) == first
    out = io.StringIO()
    call_command("drill", SLUG, "--unnamed", stdout=out)  # the page's reading: kept too
    assert grouped == []
    assert "83% of wrong first tries are 2× the right value, unnamed" in out.getvalue()


def test_a_new_wrong_first_try_shows_on_the_next_load(
    student_client, other_student_client, template, instructor_client, grouped
):
    doubled_by_the_class(student_client, template)
    answer_other(student_client, 3)
    before = unnamed_section(instructor_client.get("/instructor/").content.decode())
    assert "83% of wrong first tries are 2× the right value, unnamed</strong> (5)" in before
    grouped.clear()
    answer(other_student_client, 11, template.problem(11).answer * 2)
    after = unnamed_section(instructor_client.get("/instructor/").content.decode())
    assert "86% of wrong first tries are 2× the right value, unnamed</strong> (6)" in after
    assert grouped == [SLUG]  # the other template's tries are as they were


def test_naming_a_mistake_in_the_admin_moves_it_out_of_the_unnamed_groups_on_the_next_load(
    student_client, template, instructor_client
):
    doubled_by_the_class(student_client, template)
    before = unnamed_section(instructor_client.get("/instructor/").content.decode())
    assert "2× the right value, unnamed" in before
    response = instructor_client.post(
        ADD_URL, {"template": template.pk, "slug": "times-2", "says": SAYS, "formula": "answer * 2"}
    )
    assert response.status_code == 302
    after = unnamed_section(instructor_client.get("/instructor/").content.decode())
    assert "2× the right value, unnamed" not in after
    # Its sentence edited: still named, the grouping read against the row as it is now.
    named = ClassMistake.objects.get()
    named.formula = "answer * 3"
    named.save()
    edited = unnamed_section(instructor_client.get("/instructor/").content.decode())
    assert "2× the right value, unnamed" in edited
