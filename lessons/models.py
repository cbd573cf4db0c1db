from __future__ import annotations

from django.db import models
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from .markdown import render_markdown

MARKDOWN_HELP = (
    "Markdown: a blank line starts a new paragraph, a line starting with '- ' is a bullet, "
    "**bold**, *italic*, `code`, [link text](https://example.org). "
    "HTML such as <script> or <iframe> is removed when the card is shown."
)


class CourseQuerySet(models.QuerySet["Course"]):
    def with_lessons_and_steps(self) -> CourseQuerySet:
        """Everything the home page lists, in three queries whatever the size."""
        return self.prefetch_related(
            models.Prefetch(
                "lessons",
                queryset=Lesson.objects.order_by("order", "number").prefetch_related(
                    models.Prefetch("cards", queryset=Card.objects.only("id", "lesson_id", "step", "title"))
                ),
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

    def natural_key(self) -> tuple[str]:
        return (self.slug,)


class Lesson(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="lessons")
    number = models.PositiveSmallIntegerField(help_text="The lesson's number in the course, e.g. 3.")
    title = models.CharField(max_length=200)
    slug = models.SlugField()
    order = models.PositiveSmallIntegerField(
        default=0, help_text="Lessons are listed by this, then by number."
    )

    class Meta:
        ordering = ["course", "order", "number"]
        constraints = [
            models.UniqueConstraint(fields=["course", "slug"], name="lesson_slug_unique_in_course"),
            models.UniqueConstraint(fields=["course", "number"], name="lesson_number_unique_in_course"),
        ]

    def __str__(self) -> str:
        return f"Lesson {self.number:02d} · {self.title}"

    def get_absolute_url(self) -> str:
        return reverse("lesson", args=[self.course.slug, self.slug])

    def natural_key(self) -> tuple[str, str]:
        return (self.course.slug, self.slug)


class GlossaryTerm(models.Model):
    """A word to know, written once and reused by every card that needs it."""

    term = models.CharField(max_length=120, unique=True)
    definition = models.TextField(help_text=MARKDOWN_HELP)
    example = models.TextField(blank=True, help_text=MARKDOWN_HELP)
    rendered = models.JSONField(default=dict, editable=False)

    class Meta:
        ordering = ["term"]

    def __str__(self) -> str:
        return self.term

    def save(self, *args, **kwargs) -> None:
        self.rendered = {
            "definition": render_markdown(self.definition),
            "example": render_markdown(self.example),
        }
        super().save(*args, **kwargs)

    def natural_key(self) -> tuple[str]:
        return (self.term,)

    @property
    def html(self) -> dict[str, SafeString]:
        # Sanitized by nh3 when saved, so it is safe to mark as such.
        return {name: mark_safe(self.rendered.get(name, "")) for name in ("definition", "example")}


class CardQuerySet(models.QuerySet["Card"]):
    def for_page(self) -> CardQuerySet:
        """A card with what its page shows: lesson, course and ordered glossary."""
        return self.select_related("lesson__course").prefetch_related(
            models.Prefetch("card_terms", queryset=CardTerm.objects.select_related("term").order_by("order"))
        )


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
    question = models.TextField(help_text=MARKDOWN_HELP)
    plain_words = models.TextField("In plain words", help_text=MARKDOWN_HELP)
    picture_it = models.TextField(
        "Picture it", blank=True, help_text="An analogy, and where it stops working. " + MARKDOWN_HELP
    )
    real_numbers_source = models.CharField(
        "With real numbers: source note",
        max_length=300,
        blank=True,
        help_text="Where the numbers come from, shown first in 'With real numbers'.",
    )
    real_numbers = models.TextField("With real numbers", blank=True, help_text=MARKDOWN_HELP)
    kit_question = models.TextField("The kit's question", blank=True, help_text=MARKDOWN_HELP)
    kit_answer = models.TextField("The kit's answer", blank=True, help_text=MARKDOWN_HELP)
    more_detail = models.TextField("More detail", blank=True, help_text=MARKDOWN_HELP)
    terms = models.ManyToManyField(GlossaryTerm, through="CardTerm", related_name="cards", blank=True)
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
        self.rendered = {name: render_markdown(getattr(self, name)) for name in self.TEXT_FIELDS}
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("card", args=[self.lesson.course.slug, self.lesson.slug, self.step])

    @property
    def label(self) -> str:
        return f"Step {self.step} · {self.title}"

    def natural_key(self) -> tuple[str, str, int]:
        return (*self.lesson.natural_key(), self.step)

    @property
    def html(self) -> dict[str, SafeString]:
        """Each section's HTML, sanitized by nh3 when saved, ready for a template."""
        return {name: mark_safe(self.rendered.get(name, "")) for name in self.TEXT_FIELDS}

    def ordered_terms(self) -> list[GlossaryTerm]:
        return [card_term.term for card_term in self.card_terms.all()]


class CardTerm(models.Model):
    """A glossary term's place on one card."""

    card = models.ForeignKey(Card, on_delete=models.CASCADE, related_name="card_terms")
    term = models.ForeignKey(GlossaryTerm, on_delete=models.PROTECT, related_name="card_terms")
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["card", "order"]
        constraints = [models.UniqueConstraint(fields=["card", "term"], name="term_once_per_card")]
        verbose_name = "word to know"
        verbose_name_plural = "words to know"

    def __str__(self) -> str:
        return f"{self.term} on {self.card.label}"
