"""The course's pages: the home page, a lesson, and the card page (the learner's work comes in
through lessons/templatetags/learner_work.py, which quiz fills)."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.cache import patch_vary_headers

from accounts.instructors import is_instructor
from pagecache.content_cache import kept
from pagecache.kept_pages import render_kept

from .lesson_page import LessonPage, page_of
from .models import Card, Course, GlossaryTerm, Lesson


def home(request: HttpRequest) -> HttpResponse:
    # Instructors preview drafts where students will see them; students never see them.
    drafts = is_instructor(request.user)
    courses = kept(
        request, ("courses", drafts), lambda: list(Course.objects.with_lessons_and_steps(drafts=drafts))
    )
    # The page around the learner's map is the same for everyone: kept, the map rendered into it.
    return render_kept(
        request, "lessons/home.html", lambda: {"courses": courses, "drafts": drafts}, ("home", drafts)
    )


GLOSSARY_QUERY_MAX = 100
ALPHABET = [chr(code) for code in range(ord("A"), ord("Z") + 1)]


def glossary(request: HttpRequest) -> HttpResponse:
    """Every word to know, each with the cards that use it, under an A–Z index; ?q= keeps the
    terms that mention it (the filter box's search when JavaScript does not filter as one types)."""
    query = request.GET.get("q", "").replace("\x00", "").strip()[:GLOSSARY_QUERY_MAX]
    drafts = is_instructor(request.user)
    if not query:
        # The whole index is the same for every visitor but its per_visitor parts: kept per
        # content version (pagecache/kept_pages.py). A search is rendered for its asker only.
        return render_kept(
            request,
            "lessons/glossary.html",
            lambda: _glossary_context(query, drafts=drafts),
            ("glossary", drafts),
        )
    return render(request, "lessons/glossary.html", _glossary_context(query, drafts=drafts))


def _glossary_context(query: str, *, drafts: bool) -> dict[str, object]:
    terms = GlossaryTerm.objects.with_cards(drafts=drafts).matching(query)
    # Sorted here, not by the database, so "p95" files under P on SQLite and PostgreSQL alike.
    terms = sorted(terms, key=lambda term: term.term.casefold())
    groups: dict[str, list[GlossaryTerm]] = {}
    for term in terms:
        groups.setdefault(term.index_letter, []).append(term)
    letters = ALPHABET + (["#"] if "#" in groups else [])
    return {
        "terms": terms,
        "query": query,
        "groups": sorted(groups.items(), key=lambda item: letters.index(item[0])),
        "index": [(letter, letter in groups) for letter in letters],
    }


def lesson_detail(request: HttpRequest, course_slug: str, lesson_slug: str) -> HttpResponse:
    """Kept whole per content version and kind of visitor (an instructor's has drafts and Edit
    links) but for its per-visitor parts (pagecache/kept_pages.py): the nav."""
    drafts = is_instructor(request.user)
    return render_kept(
        request,
        "lessons/lesson.html",
        lambda: _lesson_context(course_slug, lesson_slug, drafts=drafts),
        ("lesson", drafts, course_slug, lesson_slug),
    )


def _lesson_context(course_slug: str, lesson_slug: str, *, drafts: bool) -> dict[str, object]:
    lesson, page = _lesson_page(course_slug, lesson_slug, drafts=drafts)
    return {
        "lesson": lesson,
        "course": lesson.course,
        "cards": page.cards,
        "try_it": page.try_it,
        "drafts": drafts,
        "instructor": drafts,  # the page is kept per kind of visitor: its Edit link is part of it
        "practice": list(lesson.practice_templates.visible(drafts=drafts).select_related("lesson__course")),
    }


def _lesson_page(course_slug: str, lesson_slug: str, *, drafts: bool) -> tuple[Lesson, LessonPage]:
    lesson = get_object_or_404(
        Lesson.objects.visible(drafts=drafts).select_related("course"),
        course__slug=course_slug,
        slug=lesson_slug,
    )
    return lesson, page_of(lesson, drafts=drafts)


def card_detail(request: HttpRequest, course_slug: str, lesson_slug: str, step: int) -> HttpResponse:
    card = card_for_page(request, course_slug, lesson_slug, step)
    answer_shown = request.GET.get("answer") == "shown"
    return render_card(request, card, answer_shown=answer_shown, review_mode=request.GET.get("review") == "1")


def card_for_page(request: HttpRequest, course_slug: str, lesson_slug: str, step: int) -> Card:
    """The card with what its page shows; a draft is not found unless an instructor asks.

    Fetched once per content version in each process (pagecache/content_cache.py), with its
    rendered sections: the same for every learner.
    """
    drafts = is_instructor(request.user)
    return kept(
        request,
        ("card", drafts, course_slug, lesson_slug, step),
        lambda: get_object_or_404(
            Card.objects.visible(drafts=drafts).for_page(),
            lesson__course__slug=course_slug,
            lesson__slug=lesson_slug,
            step=step,
        ),
    )


def render_card(
    request: HttpRequest, card: Card, *, answer_shown: bool, review_mode: bool = False
) -> HttpResponse:
    """The card page, or for htmx its answer region; quiz's Show answer renders it too.

    Kept whole per content version but for its per-visitor parts (pagecache/kept_pages.py).
    """
    key = (card.pk, is_instructor(request.user), answer_shown, review_mode)
    response = render_kept(
        request,
        card_template(request),
        lambda: card_context(request, card, answer_shown=answer_shown, review_mode=review_mode),
        key,
    )
    patch_vary_headers(response, ["HX-Request"])
    return response


def card_template(request: HttpRequest) -> str:
    # htmx asks for the answer region alone when the toggle is pressed.
    return "lessons/card.html#answer" if request.htmx else "lessons/card.html"


def card_context(
    request: HttpRequest, card: Card, *, answer_shown: bool, review_mode: bool
) -> dict[str, object]:
    """What the card page shows the same way to every visitor (render_card's key names the rest)."""
    return {
        "card": card,
        "instructor": is_instructor(request.user),  # in render_card's key: the Edit link is kept
        "answer_shown": answer_shown,
        "review_mode": review_mode,
        "htmx": bool(request.htmx),  # htmx focuses the toggle it swapped in
        **_neighbours(request, card),
    }


def _neighbours(request: HttpRequest, card: Card) -> dict[str, Card | None]:
    drafts = is_instructor(request.user)
    steps = kept(
        request,
        ("steps", drafts, card.lesson_id),
        lambda: list(
            Card.objects.visible(drafts=drafts)
            .filter(lesson_id=card.lesson_id)
            .order_by("step")
            .values_list("step", flat=True)
        ),
    )
    lesson = card.lesson
    # By step, not by position: a preview's card may have a step no saved card has yet.
    earlier = [step for step in steps if step < card.step]
    later = [step for step in steps if step > card.step]
    return {
        "previous_card": Card(lesson=lesson, step=earlier[-1]) if earlier else None,
        "next_card": Card(lesson=lesson, step=later[0]) if later else None,
    }


def render_preview(request: HttpRequest, card: Card) -> HttpResponse:
    """A card as the admin's form holds it, unsaved, the way students will see it with its answer
    shown: the card page's template and context, rendered for this request only. Never kept
    (pagecache/kept_pages.py), since it is not what the database holds."""
    context = card_context(request, card, answer_shown=True, review_mode=False)
    return render(request, "lessons/card.html", {**context, "preview": True})
