from django.contrib import admin

from .models import Card, CardFigure, CardTerm, Course, GlossaryTerm, Lesson


class LessonInline(admin.TabularInline):
    model = Lesson
    fields = ("number", "title", "slug", "order")
    prepopulated_fields = {"slug": ("title",)}
    extra = 0
    show_change_link = True


@admin.register(Course)
class CourseAdmin(admin.ModelAdmin):
    list_display = ("title", "slug", "order")
    search_fields = ("title", "slug")
    prepopulated_fields = {"slug": ("title",)}
    inlines = [LessonInline]


class CardInline(admin.TabularInline):
    model = Card
    fields = ("step", "title", "question")
    extra = 0
    show_change_link = True


@admin.register(Lesson)
class LessonAdmin(admin.ModelAdmin):
    list_display = ("__str__", "course", "number", "order", "card_count")
    list_filter = ("course",)
    search_fields = ("title", "slug", "cards__title", "cards__question")
    prepopulated_fields = {"slug": ("title",)}
    inlines = [CardInline]

    @admin.display(description="cards")
    def card_count(self, lesson: Lesson) -> int:
        return lesson.cards.count()


class CardTermInline(admin.TabularInline):
    model = CardTerm
    fields = ("order", "term")
    autocomplete_fields = ("term",)
    extra = 1


class CardFigureInline(admin.TabularInline):
    model = CardFigure
    fields = ("order", "label", "figure", "stated", "tolerance", "note")
    extra = 0
    verbose_name_plural = "Computed live panel: figures the card states, beside the model's"


@admin.register(Card)
class CardAdmin(admin.ModelAdmin):
    list_display = ("label", "lesson", "scenario", "updated_at")
    list_filter = ("lesson__course", "lesson", "scenario")
    search_fields = ("title", "question", "plain_words", "picture_it", "real_numbers", "more_detail")
    list_select_related = ("lesson__course", "scenario")
    inlines = [CardTermInline, CardFigureInline]
    fieldsets = (
        (None, {"fields": ("lesson", "step", "title", "question")}),
        ("The answer", {"fields": ("plain_words", "picture_it", "real_numbers_source", "real_numbers")}),
        ("Go deeper: the engineer version", {"fields": ("kit_question", "kit_answer", "more_detail")}),
        ("Computed live", {"fields": ("scenario",)}),
    )
    # view_on_site uses Card.get_absolute_url: the "View on site" link.


@admin.register(GlossaryTerm)
class GlossaryTermAdmin(admin.ModelAdmin):
    list_display = ("term", "definition")
    search_fields = ("term", "definition", "example")
