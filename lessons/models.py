from __future__ import annotations

import dataclasses

from django.core.exceptions import ValidationError
from django.db import models
from django.urls import reverse
from django.utils.functional import cached_property
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify

from felab_sim.engine.core.calculator import Result
from felab_sim.engine.core.params import ParamError
from felab_sim.engine.course import citations, facts
from felab_sim.engine.problems import drill_problems, drill_specs
from felab_sim.engine.problems import drills as drill_engine
from felab_sim.engine.sweep.metrics import SweepResult
from felab_sim.engine.sweep.sweep_params import SweepParams
from pagecache.content_cache import ContentQuerySet, kept_without_request

from . import card_citations, card_html, card_live, number_checks
from .class_mistakes import mistakes_of as class_mistakes_of
from .help_texts import CARD_TEXT_HELP, MARKDOWN_HELP, NUMBER_CHECKS_HELP, PRACTICE_DRAWS_HELP
from .markdown import live_number_markup_problems, normalise_line_ends, render_markdown


def normalise_text_fields(obj: models.Model) -> None:
    """Every text area's line breaks as the files write them, however the text arrived (save() calls it)."""
    for field in obj._meta.concrete_fields:
        if isinstance(field, models.TextField) and isinstance(value := getattr(obj, field.attname), str):
            setattr(obj, field.attname, normalise_line_ends(value))


class CourseQuerySet(ContentQuerySet["Course"]):
    def with_lessons_and_steps(self, *, drafts: bool = False) -> CourseQuerySet:
        """Everything the home page lists, in three queries whatever the size: each course's
        lessons in ``course.listed_lessons``, each lesson's cards in ``lesson.listed_cards``.

        Draft lessons and cards only with drafts=True: what an instructor previews. Lists, not
        ``.lessons.all()``: these courses are kept per content version and read on every
        request, and each ``.all()`` builds a related manager (21 of them, a tenth of the home
        page's time).
        """
        lessons = Lesson.objects.all() if drafts else Lesson.objects.published()
        cards = Card.objects.all() if drafts else Card.objects.filter(published=True)
        return self.prefetch_related(
            models.Prefetch(
                "lessons",
                queryset=lessons.order_by("order", "number").prefetch_related(
                    models.Prefetch(
                        "cards",
                        queryset=cards.only("id", "lesson_id", "step", "title", "published"),
                        to_attr="listed_cards",
                    )
                ),
                to_attr="listed_lessons",
            )
        )


class Course(models.Model):
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True, help_text=MARKDOWN_HELP)
    order = models.PositiveSmallIntegerField(default=0)

    objects = CourseQuerySet.as_manager()

    class Meta:
        ordering = ["order", "title"]

    def __str__(self) -> str:
        return self.title

    def save(self, *args, **kwargs) -> None:
        normalise_text_fields(self)
        super().save(*args, **kwargs)

    def natural_key(self) -> tuple[str]:
        return (self.slug,)


class LessonQuerySet(ContentQuerySet["Lesson"]):
    def published(self) -> LessonQuerySet:
        return self.filter(published=True)

    def visible(self, *, drafts: bool) -> LessonQuerySet:
        """What a visitor may open: students only published lessons, instructors drafts too."""
        return self if drafts else self.published()


class Lesson(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="lessons")
    number = models.PositiveSmallIntegerField(help_text="The lesson's number in the course, e.g. 3.")
    title = models.CharField(max_length=200)
    slug = models.SlugField()
    order = models.PositiveSmallIntegerField(
        default=0, help_text="Lessons are listed by this, then by number."
    )
    intro = models.TextField(blank=True, help_text="Shown above the lesson's cards. " + MARKDOWN_HELP)
    minutes = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="About how many minutes the lesson takes; blank when unknown."
    )
    published = models.BooleanField(
        default=True, help_text="Students see only published lessons; a draft is shown to instructors only."
    )
    rendered = models.JSONField(default=dict, editable=False)

    objects = LessonQuerySet.as_manager()

    class Meta:
        ordering = ["course", "order", "number"]
        constraints = [
            models.UniqueConstraint(fields=["course", "slug"], name="lesson_slug_unique_in_course"),
            models.UniqueConstraint(fields=["course", "number"], name="lesson_number_unique_in_course"),
        ]

    def __str__(self) -> str:
        return f"Lesson {self.number:02d} · {self.title}"

    def save(self, *args, **kwargs) -> None:
        # Render once on save, as cards do, so pages only ever read sanitized HTML.
        normalise_text_fields(self)
        self.rendered = {"intro": render_markdown(self.intro)}
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("lesson", args=[self.course.slug, self.slug])

    def get_admin_url(self) -> str:
        return reverse("admin:lessons_lesson_change", args=[self.pk])

    @property
    def is_draft(self) -> bool:
        return not self.published

    @cached_property
    def listed_card_ids(self) -> frozenset[int]:
        """The ids of ``listed_cards`` (Course.objects.with_lessons_and_steps): the per-request
        progress pages match a learner's schedules against them with one set operation a lesson."""
        return frozenset(card.id for card in self.listed_cards)

    @property
    def intro_html(self) -> SafeString:
        # Sanitized by nh3 when saved, so it is safe to mark as such.
        return mark_safe(self.rendered.get("intro", ""))

    def natural_key(self) -> tuple[str, str]:
        return (self.course.slug, self.slug)

    @cached_property
    def following(self) -> Lesson | None:
        """The course's next published lesson in reading order (order, then number), or None after the last.

        Drafts are skipped: this is where a student goes next. Kept on the instance, which the
        card page keeps per content version (pagecache/content_cache.py).
        """
        later = models.Q(order__gt=self.order) | models.Q(order=self.order, number__gt=self.number)
        return (
            Lesson.objects.published()
            .select_related("course")
            .filter(later, course_id=self.course_id)
            .order_by("order", "number")
            .first()
        )


class GlossaryTermQuerySet(ContentQuerySet["GlossaryTerm"]):
    def with_cards(self, *, drafts: bool = False) -> GlossaryTermQuerySet:
        """Terms with the cards that list them, in course order: two queries whatever the size.

        Students see only published cards; instructors (drafts=True) see drafts too.
        """
        card_terms = CardTerm.objects.select_related("card__lesson__course").order_by(
            "card__lesson__course__order", "card__lesson__order", "card__lesson__number", "card__step"
        )
        if not drafts:
            card_terms = card_terms.filter(card__published=True, card__lesson__published=True)
        return self.prefetch_related(models.Prefetch("card_terms", queryset=card_terms))

    def matching(self, query: str) -> GlossaryTermQuerySet:
        """Terms whose name, definition or example holds `query`, whatever its case."""
        if not query:
            return self
        return self.filter(
            models.Q(term__icontains=query)
            | models.Q(definition__icontains=query)
            | models.Q(example__icontains=query)
        )


class GlossaryTerm(models.Model):
    """A word to know, written once and reused by every card that needs it."""

    term = models.CharField(max_length=120, unique=True)
    definition = models.TextField(help_text=MARKDOWN_HELP)
    example = models.TextField(blank=True, help_text=MARKDOWN_HELP)
    rendered = models.JSONField(default=dict, editable=False)

    objects = GlossaryTermQuerySet.as_manager()

    class Meta:
        ordering = ["term"]

    def __str__(self) -> str:
        return self.term

    def save(self, *args, **kwargs) -> None:
        normalise_text_fields(self)
        self.rendered = {
            "definition": render_markdown(self.definition),
            "example": render_markdown(self.example),
        }
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return f"{reverse('glossary')}#{self.anchor}"

    def clean(self) -> None:
        errors = {
            name: problems
            for name in ("definition", "example")
            if (
                problems := facts.problems([getattr(self, name)])
                + live_number_markup_problems(getattr(self, name))
            )
        }
        if errors:
            raise ValidationError(errors)

    def natural_key(self) -> tuple[str]:
        return (self.term,)

    @property
    def anchor(self) -> str:
        """The term's id on the glossary page, e.g. term-time-to-first-token-ttft."""
        return f"term-{slugify(self.term)}"

    @property
    def index_letter(self) -> str:
        """Where the glossary's A–Z index files the term: its first letter, or # for a digit or sign."""
        first = self.term[:1].upper()
        return first if "A" <= first <= "Z" else "#"

    def cards_using(self) -> list[Card]:
        """The cards that list this term, in course order (prefetched by with_cards)."""
        return [card_term.card for card_term in self.card_terms.all()]

    @property
    def html(self) -> dict[str, SafeString]:
        # Sanitized by nh3 when saved, so it is safe to mark as such.
        # Facts ({{hw.…}}, {{model.…}}) are read from the engine's tables on each showing.
        return {name: card_html.with_facts(self.rendered.get(name, "")) for name in ("definition", "example")}


class CardQuerySet(ContentQuerySet["Card"]):
    def published(self) -> CardQuerySet:
        """Cards students may see: the card and its lesson both published."""
        return self.filter(published=True, lesson__published=True)

    def visible(self, *, drafts: bool) -> CardQuerySet:
        """What a visitor may open: students only published cards, instructors drafts too."""
        return self if drafts else self.published()

    def for_page(self) -> CardQuerySet:
        """A card with what its page shows: lesson, course and ordered glossary."""
        return self.select_related("lesson__course", "scenario").prefetch_related(
            models.Prefetch("card_terms", queryset=CardTerm.objects.select_related("term").order_by("order")),
            models.Prefetch("numbers", queryset=CardNumber.objects.order_by("order")),
        )


def published_steps_by_lesson() -> dict[int, list[int]]:
    """Per lesson id, its published cards' steps in order: one query per content version."""

    def build() -> dict[int, list[int]]:
        steps: dict[int, list[int]] = {}
        rows = (
            Card.objects.filter(published=True).order_by("lesson_id", "step").values_list("lesson_id", "step")
        )
        for lesson_id, step in rows:
            steps.setdefault(lesson_id, []).append(step)
        return steps

    return kept_without_request(("published-steps",), build)


class Card(models.Model):
    """One step of a lesson: a question card and its layered answer."""

    # The Markdown fields, in the order the card shows them.
    TEXT_FIELDS = (
        "question",
        "plain_words",
        "picture_it",
        "real_numbers_source",
        "real_numbers",
        "kit_question",
        "kit_answer",
        "more_detail",
    )

    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="cards")
    step = models.PositiveSmallIntegerField(help_text="The step number within the lesson, from 1.")
    title = models.CharField(max_length=200, help_text="Shown as 'Step N · title'.")
    question = models.TextField(help_text=CARD_TEXT_HELP)
    plain_words = models.TextField("In plain words", help_text=CARD_TEXT_HELP)
    picture_it = models.TextField(
        "Picture it", blank=True, help_text="An analogy, and where it stops working. " + CARD_TEXT_HELP
    )
    # A text, not a capped string: a measurement's source names its repository, files, run and
    # licence, and lesson 14's run past 300 characters (PostgreSQL refused them; SQLite does not).
    real_numbers_source = models.TextField(
        "With real numbers: source note",
        blank=True,
        help_text="Where the numbers come from, shown first in 'With real numbers'.",
    )
    real_numbers = models.TextField("With real numbers", blank=True, help_text=CARD_TEXT_HELP)
    kit_question = models.TextField("The kit's question", blank=True, help_text=CARD_TEXT_HELP)
    kit_answer = models.TextField("The kit's answer", blank=True, help_text=CARD_TEXT_HELP)
    more_detail = models.TextField("More detail", blank=True, help_text=CARD_TEXT_HELP)
    terms = models.ManyToManyField(GlossaryTerm, through="CardTerm", related_name="cards", blank=True)
    scenario = models.ForeignKey(
        "felab_sim.Scenario",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="cards",
        help_text="The simulator scenario behind this card's live numbers and chart.",
    )
    published = models.BooleanField(
        default=True, help_text="Students see only published cards; a draft is shown to instructors only."
    )
    number_checks = models.JSONField(
        "checks of derived numbers",
        default=list,
        blank=True,
        help_text=NUMBER_CHECKS_HELP,
    )
    rendered = models.JSONField(default=dict, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    objects = CardQuerySet.as_manager()

    class Meta:
        ordering = ["lesson", "step"]
        constraints = [models.UniqueConstraint(fields=["lesson", "step"], name="card_step_unique_in_lesson")]

    def __str__(self) -> str:
        return f"{self.lesson.title} · {self.label}"

    def save(self, *args, **kwargs) -> None:
        # Render once on save, so pages only ever read sanitized HTML.
        self.render()
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("card", args=[self.lesson.course.slug, self.lesson.slug, self.step])

    @cached_property
    def page_url(self) -> str:
        """get_absolute_url, worked out once per instance (the home page lists every card)."""
        return self.get_absolute_url()

    @cached_property
    def urls(self) -> dict[str, str]:
        """The card page's forms' URLs (quiz's Show answer, rating, opened layer), worked out once
        per instance: the card page keeps its instance per content version."""
        args = [self.lesson.course.slug, self.lesson.slug, self.step]
        return {
            key: reverse(name, args=args)
            for key, name in (("show", "show_answer"), ("rate", "rate_card"), ("opened", "open_layer"))
        }

    def get_admin_url(self) -> str:
        return reverse("admin:lessons_card_change", args=[self.pk])

    def render(self) -> None:
        """Each section's sanitized HTML, from the text as it stands (save() calls it; so does a preview)."""
        normalise_text_fields(self)
        self.rendered = {name: render_markdown(text) for name, text in self.texts().items()}

    def clean(self) -> None:
        errors = card_citations.text_problems(self.texts(), self.scenario_params)
        if self.number_checks is None:  # the admin's box left empty: no checks
            self.number_checks = []
        if shape_problem := number_checks.shape_problem(self.number_checks):
            errors.setdefault("number_checks", []).append(shape_problem)
        if errors:
            raise ValidationError(errors)

    def texts(self) -> dict[str, str]:
        """Each section's Markdown as written, in the order the card shows them."""
        return {name: getattr(self, name) for name in self.TEXT_FIELDS}

    def number_findings(self) -> tuple[list[number_checks.Finding], list[str]]:
        """Each derived number in the card's text and how it is covered, and its checks' problems."""
        return number_checks.check_card(
            self.texts(),
            [number.stated for number in self.numbers.all()],
            self.number_checks if isinstance(self.number_checks, list) else [],
        )

    def unchecked_numbers(self) -> list[str]:
        """What an instructor is warned about: derived numbers neither live nor checked, and
        checks that do not work out. A warning, never a refusal: the card still saves."""
        findings, problems = self.number_findings()
        return [finding.message() for finding in findings if not finding.covered] + problems

    @cached_property
    def number(self) -> int | None:
        """The step number students see: its place among the lesson's published cards, so a
        draft between them leaves no gap (1, 2, 3, not 1, 2, 4); None for a draft.

        The URL keeps ``step``, which stays put when a draft is published (old links hold).
        """
        if not self.published:
            return None
        steps = published_steps_by_lesson().get(self.lesson_id, [])
        # A card not yet saved as published (an admin preview) takes the place its step would.
        return sum(1 for step in steps if step < self.step) + 1

    @property
    def label(self) -> str:
        return f"Step {self.number} · {self.title}" if self.number else f"Draft · {self.title}"

    @cached_property
    def description(self) -> str:
        """The page's meta description, as plain text: which lesson and step, and the question's start.

        Plain text (entities decoded), so the template escapes it once, quotes included.
        """
        question = card_html.plain_text(self.html["question"], 150)
        return f"Lesson {self.lesson.number:02d}, {self.label}: {question}"

    @property
    def is_draft(self) -> bool:
        """Hidden from students: the card, or the lesson it belongs to, is not published."""
        return not (self.published and self.lesson.published)

    def natural_key(self) -> tuple[str, str, int]:
        return (*self.lesson.natural_key(), self.step)

    @cached_property
    def following(self) -> Card | None:
        """The lesson's next published step, or None on its last (drafts are skipped: students go there).

        Kept on the instance, which the card page keeps per content version.
        """
        return (
            Card.objects.filter(published=True)
            .select_related("lesson__course")
            .filter(lesson_id=self.lesson_id, step__gt=self.step)
            .order_by("step")
            .first()
        )

    @cached_property
    def scenario_params(self) -> SweepParams | None:
        """The scenario's parameters; None without a scenario or with one the model refuses."""
        if self.scenario_id is None:
            return None
        try:
            return self.scenario.sweep_params()
        except ParamError:
            return None

    @cached_property
    def live_result(self) -> SweepResult | None:
        """The scenario's simulated sweep (cached by parameters), or None without one."""
        return card_live.sweep_of(self.scenario_params)

    def calc_citations(self) -> list[citations.Citation]:
        """Every calculator output the card cites, in its text and its Computed live panel."""
        return card_citations.calc_citations(
            self.texts().values(), (number.live for number in self.panel_numbers)
        )

    @cached_property
    def calc_results(self) -> dict[str, Result | None]:
        """The cited parameter sets' results: one query for the whole card, not one per citation.
        The lesson page sets it for all its cards at once (lessons/lesson_page.py)."""
        return card_live.results_of(card_live.cited_sets(self.calc_citations()))

    @cached_property
    def html(self) -> dict[str, SafeString]:
        """Each section's HTML, ready for a template, with live numbers filled in (lessons/card_html.py)."""
        result, calc_results = self.live_result, self.calc_results
        return {
            name: card_html.with_live_numbers(self.rendered.get(name, ""), result, calc_results)
            for name in self.TEXT_FIELDS
        }

    def live_chart(self) -> str | None:
        """The card's chart as plotly JSON, or None without a scenario."""
        return card_live.chart_of(self.scenario_params)

    def sim_url(self) -> str:
        return card_live.sim_url(self.scenario_params)

    def live_rows(self) -> list[dict[str, str]]:
        """The "Computed live" panel's rows (lessons/card_live.py)."""
        return card_live.panel_rows(self)

    def published_sources(self) -> list[str]:
        """The published runs the panel's rows quote, each named once."""
        return card_live.published_sources(self.panel_numbers)

    # The live numbers and terms as the page shows them. An admin preview sets both from its unsaved
    # inline rows (lessons/admin.py), so the page reads the form, not the database.
    @cached_property
    def panel_numbers(self) -> list[CardNumber]:
        """The "Computed live" panel's numbers, in order (prefetched by for_page)."""
        return list(self.numbers.all())

    @cached_property
    def terms_in_order(self) -> list[GlossaryTerm]:
        return [card_term.term for card_term in self.card_terms.all()]

    def ordered_terms(self) -> list[GlossaryTerm]:
        return self.terms_in_order


class CardTerm(models.Model):
    """A glossary term's place on one card."""

    card = models.ForeignKey(Card, on_delete=models.CASCADE, related_name="card_terms")
    term = models.ForeignKey(GlossaryTerm, on_delete=models.PROTECT, related_name="card_terms")
    order = models.PositiveSmallIntegerField(default=0)

    objects = ContentQuerySet.as_manager()

    class Meta:
        ordering = ["card", "order"]
        constraints = [models.UniqueConstraint(fields=["card", "term"], name="term_once_per_card")]
        verbose_name = "word to know"
        verbose_name_plural = "words to know"

    def __str__(self) -> str:
        return f"{self.term} on {self.card.label}"


class CardNumber(models.Model):
    """A number the card states, shown beside the simulator's live value for it."""

    card = models.ForeignKey(Card, on_delete=models.CASCADE, related_name="numbers")
    order = models.PositiveSmallIntegerField(default=0)
    label = models.CharField(max_length=120, help_text="e.g. 'Total, 8 people (tok/s)'.")
    live = models.CharField(
        "live number",
        max_length=120,
        help_text="A live number's name without 'sim.', e.g. c8.agg_tok_s (see felab_sim/engine/course/live_numbers.py).",
    )
    stated = models.CharField("the card says", max_length=60, blank=True)
    tolerance = models.FloatField(
        null=True,
        blank=True,
        help_text="How far the stated number may sit from the live one, relative: 0.01 is 1%. Blank: 2%.",
    )
    note = models.CharField(
        max_length=300, blank=True, help_text="Why the stated number differs from the live one, when it does."
    )

    objects = ContentQuerySet.as_manager()

    class Meta:
        ordering = ["card", "order"]
        verbose_name = "live number"

    def __str__(self) -> str:
        cited = citations.is_calc_number(self.live) or card_citations.is_measured_number(self.live)
        name = self.live if cited else f"sim.{self.live}"
        return f"{self.label} ({name})"

    def clean(self) -> None:
        if problems := card_citations.panel_name_problems(self.live, self._scenario_params):
            raise ValidationError({"live": problems})

    def _scenario_params(self) -> SweepParams | None:
        card = getattr(self, "card", None)  # unset on a blank inline row
        return card.scenario_params if card is not None else None


class ImportBaseline(models.Model):
    """What the last import_lessons wrote for one object, field by field.

    The next import compares against it to tell a change in the files (the database
    still holds what was imported: take the file's) from an instructor's edit (the
    database differs: keep it and report the conflict).
    """

    key = models.CharField(max_length=300, unique=True, help_text="e.g. 'card course/lesson/3'.")
    values = models.JSONField(default=dict)

    def __str__(self) -> str:
        return self.key


# Practice templates (issue 22): numeric problems drawn from a calculator. Reading a template is
# felab_sim.engine.problems.drill_specs', drawing and checking it drills', the drawn problem
# drill_problems'; this is the content row.
class PracticeTemplateQuerySet(ContentQuerySet["PracticeTemplate"]):
    def published(self) -> PracticeTemplateQuerySet:
        return self.filter(published=True, lesson__published=True)

    def visible(self, *, drafts: bool) -> PracticeTemplateQuerySet:
        """What a visitor may open: students only published templates, instructors drafts too."""
        return self if drafts else self.published()


# Addresses under /practice/ that are pages of their own, not templates (quiz/urls.py).
RESERVED_PRACTICE_SLUGS = frozenset({"set"})


class PracticeTemplate(models.Model):
    """A practice problem's template: a calculator's output asked with freshly drawn inputs."""

    class Asks(models.TextChoices):
        VALUE = "value", "the output at the drawn settings"
        AFTER = "after", "the output after the change"
        RATIO = "ratio", "after the change ÷ before it"

    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="practice_templates")
    slug = models.SlugField(
        unique=True, help_text="Its address, /practice/SLUG/: unique across the site, so a shared link stays."
    )
    title = models.CharField(max_length=200, help_text="A few words on the idea it drills.")
    order = models.PositiveSmallIntegerField(default=0, help_text="Templates are listed by this in a lesson.")
    question = models.TextField(
        help_text="The question, with {name} where each drawn (or fixed) input's value goes."
    )
    # No choices here: a new calculator must not need a migration; the admin offers them.
    calculator = models.CharField(max_length=40, help_text="The calculator's name, e.g. kv-cache.")
    output = models.CharField(max_length=60, help_text="The calculator's output key the answer is.")
    asks = models.CharField(max_length=10, choices=Asks.choices, default=Asks.VALUE)
    draws = models.JSONField(default=list, help_text=PRACTICE_DRAWS_HELP)
    fixed = models.JSONField(
        default=dict, blank=True, help_text='Inputs every problem shares, e.g. {"layers": 32}.'
    )
    change = models.JSONField(
        default=dict,
        blank=True,
        help_text='For "after" and "ratio": each input multiplied, e.g. {"context_tokens": 2} doubles it.',
    )
    tolerance = models.FloatField(default=0.1, help_text="Right within this share: 0.1 is 10%.")
    unit = models.CharField(
        max_length=30, blank=True, help_text="The unit the answer is given in; blank: the output's."
    )
    hint = models.TextField(blank=True, help_text="Shown on request before answering (plain text).")
    solution = models.TextField(
        blank=True,
        help_text="The worked solution: the formula with {name} inputs, {out.KEY} outputs, "
        "{after.KEY} after the change and {answer}.",
    )
    mistakes = models.JSONField(
        default=list,
        blank=True,
        help_text="Named mistakes, each computed from the same draw: "
        '[{"slug": "kv-once", "says": "Your answer counts the cache once: …", "change": {"kv_heads": 0.5}}]; '
        "see docs/practice.md, Named mistakes.",
    )
    published = models.BooleanField(
        default=True, help_text="Students see only published templates; a draft is shown to instructors only."
    )

    objects = PracticeTemplateQuerySet.as_manager()

    SPEC_FIELDS = ("calculator", "output", "asks", "question", "draws", "fixed", "change", "tolerance",
                   "unit", "solution", "mistakes")  # fmt: skip

    class Meta:
        ordering = ["lesson", "order", "slug"]
        verbose_name = "practice template"

    def __str__(self) -> str:
        return f"{self.slug} · {self.title}"

    def save(self, *args, **kwargs) -> None:
        normalise_text_fields(self)
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("practice_problem", args=[self.slug])

    @property
    def is_draft(self) -> bool:
        return not self.published or not self.lesson.published

    def spec(self, *, class_mistakes: bool = True) -> drill_specs.DrillSpec:
        """The engine's reading of this row; DrillError naming the field when it cannot be read.
        Its mistakes are its own, then those instructors named from the class's answers
        (lessons.class_mistakes), which the template's declared ones come before."""
        spec = drill_specs.DrillSpec.from_data(
            self.slug, {name: getattr(self, name) for name in self.SPEC_FIELDS}
        )
        if class_mistakes and (named := class_mistakes_of(self)):
            spec = dataclasses.replace(spec, mistakes=spec.mistakes + named)
        return spec

    def problems(self) -> list[drill_specs.DrillError]:
        """Why it cannot be saved (admin, import): its address taken by a page, or its spec."""
        taken = (
            [
                drill_specs.DrillError(
                    "slug", f"/practice/{self.slug}/ is a page of its own: choose another slug."
                )
            ]
            if self.slug in RESERVED_PRACTICE_SLUGS
            else []
        )
        try:
            return taken + drill_engine.spec_problems(self.spec(class_mistakes=False))
        except drill_specs.DrillError as error:
            return [*taken, error]

    def clean(self) -> None:
        """Refused with the reason when its placeholders, draws or unit do not hold."""
        errors: dict[str, list[str]] = {}
        for problem in self.problems():
            errors.setdefault(problem.field, []).append(problem.message)
        if errors:
            raise ValidationError(errors)

    def problem(self, seed: int) -> drill_problems.Problem:
        return drill_engine.draw_problem(self.spec(), seed)

    def drawn_question(self, seed: int) -> drill_engine.DrawnQuestion:
        """The problem's question alone, checked against the calculator's ground, not solved."""
        return drill_engine.draw_question(self.spec(), seed)

    def natural_key(self) -> tuple[str]:
        return (self.slug,)
