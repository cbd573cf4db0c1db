"""What pages show of the learner's own work; lessons knows nothing of quiz.

The card page and the home page belong to lessons. Their templates load lessons' learner_work
tags, which call the functions here that QuizConfig.ready provides them, so quiz depends on
lessons and never the other way round. quiz's own templates load this library directly.
"""

from collections.abc import Iterable
from datetime import UTC, datetime
from html import escape
from typing import Any

from django import template
from django.template.loader import get_template
from django.utils.safestring import SafeString

from lessons.models import Card, Course
from pagecache.templatetags.content_fragments import kept_part

from .. import clock
from ..course_map import CourseMap, LessonOnMap, LessonRun
from ..learners import Learner
from ..models import Showing
from ..rating_previews import Preview
from ..selectors import SEEN_CARDS, CardStudy, LessonProgress

register = template.Library()


@register.simple_tag(takes_context=True)
def card_study(context: template.Context, card: Card) -> CardStudy:
    """The requesting learner's typed answer and rating previews for a card whose answer is shown.

    One query, made once per request: each of the card page's per-visitor parts asks for it.
    """
    if card.pk is None:  # an admin preview of a card not saved yet: no one's work, a first-timer's buttons
        return CardStudy(None, tuple(Preview.for_history(0, [], clock.now())))
    request = context["request"]
    studies: dict[int, CardStudy] = request.__dict__.setdefault("_felab_card_studies", {})
    if card.pk not in studies:
        studies[card.pk] = CardStudy.of(Learner.of(request), card)
    return studies[card.pk]


@register.simple_tag(takes_context=True)
def answer_typed_before(context: template.Context, card: Card) -> str:
    """What the learner typed before showing the answer, put back in the box when they hide it."""
    return Showing.objects.last_answer(Learner.of(context["request"]), card)


_TIME_FORMATS = {"short": "{day} {value:%b, %H:%M}", "year": "{day} {value:%b %Y} at {value:%H:%M}"}


@register.filter
def utc_time(value: datetime | None, form: str = "short") -> SafeString:
    """A moment as <time>: UTC text (marked "UTC"), which static/js/local-time.js rewrites to
    the student's own time zone; without JavaScript the UTC text stays."""
    if value is None:
        return SafeString("")
    value = value.astimezone(UTC)
    text = _TIME_FORMATS.get(form, _TIME_FORMATS["short"]).format(day=value.day, value=value)
    return SafeString(
        f'<time datetime="{value:%Y-%m-%dT%H:%M:%SZ}" data-local-time="{escape(form)}">{escape(text)} UTC</time>'
    )


@register.simple_tag
def rating_buttons(previews: Iterable[Preview]) -> SafeString:
    """The four rating buttons, each with when the card would come back.

    Written here rather than as a template loop: they are rendered on every card page with its
    answer shown.
    """
    return SafeString(
        "\n".join(
            # The two times are digits, letters, spaces and ":,-": nothing to escape.
            _RATING_BUTTON.format(
                int(preview.value),
                preview.due_text,
                escape(preview.label),
                escape(preview.when),
                preview.due_iso,
            )
            for preview in previews
        )
    )


_RATING_BUTTON = (
    '<button type="submit" name="rating" value="{0}" class="button rating rating-{0}" title="Comes back {1} UTC" '
    'data-due="{4}">'
    '<span class="rating-label">{2}</span> <span class="rating-when">{3}</span></button>'
)


@register.simple_tag(takes_context=True)
def learner_progress(context: template.Context, courses: Iterable[Course]) -> dict[int, LessonProgress]:
    """Per lesson id, the requesting learner's progress: one query, none for a first-time visitor.

    The courses must come from Course.objects.with_lessons_and_steps (their listed lessons and cards).
    """
    lessons = [lesson for course in courses for lesson in course.listed_lessons]
    return LessonProgress.by_lesson(Learner.of(context["request"]), lessons, clock.now())


@register.inclusion_tag("quiz/progress_bar.html")
def progress_bar(progress_by_lesson: dict[int, LessonProgress], lesson: Any) -> dict[str, Any]:
    return {"progress": progress_by_lesson[lesson.pk]}


@register.simple_tag(takes_context=True)
def course_maps(context: template.Context, courses: Iterable[Course]) -> list[CourseMap]:
    """Each course's map for the requesting learner: two queries whatever the course's size.

    None for a first-time visitor; the courses must come from Course.objects.with_lessons_and_steps.
    """
    learner = Learner.of(context["request"])
    courses = list(courses)
    lessons = [lesson for course in courses for lesson in course.listed_lessons]
    progress = LessonProgress.by_lesson(learner, lessons, clock.now())
    seen_ids = set(SEEN_CARDS.run(learner))
    return [CourseMap.build(course, progress, seen_ids) for course in courses]


def home_run(context: template.Context, run: LessonRun, course_map: CourseMap) -> SafeString:
    """A run of lessons on home's map. Lessons the learner has neither opened nor rated read the
    same for every such learner: kept by their ids and which is where to continue, and built from
    those alone with no progress at all, so nothing of the learner's can reach what is kept."""
    part = get_template("lessons/home_run.html")
    next_due = bool(course_map.next_card and course_map.next_card.due)
    if not run.untouched:
        # The request only keys the lesson's parts that are the same for everyone (its heading
        # and introduction, content_fragment): rendered without the context processors.
        return SafeString(part.render({"run": run, "map": course_map, "request": context["request"]}))
    lessons = tuple(stop.lesson for stop in run.stops)
    next_flags = tuple(stop.is_next for stop in run.stops)

    def build() -> str:
        now = clock.now()
        stops = tuple(
            LessonOnMap(LessonProgress(lesson, {}, now), 0, is_next)
            for lesson, is_next in zip(lessons, next_flags, strict=True)
        )
        return part.render({"run": LessonRun(stops), "map": {"next_card": {"due": next_due}}})

    key = ("home-untouched", tuple(lesson.id for lesson in lessons), next_flags, next_due)
    return SafeString(kept_part(context, key, build))


@register.filter
def record_of(records: Any, template_id: int) -> Any:
    """The learner's record on one practice template (quiz.practice_stats.LearnerRecords)."""
    return records.of(template_id)


@register.filter
def mastery_in(records: Any, group: Any) -> Any:
    """The learner's mastery of the lesson a /practice/ group lists (quiz.practice_stats)."""
    return records.mastery_of(group.lesson.pk)


@register.filter
def due_in(records: Any, group: Any) -> int:
    """How many of the templates a lesson lists on /practice/ are due for the learner."""
    return sum(records.of(template.pk).due for template in group.templates)
