from collections.abc import Iterator

from django.apps import AppConfig


def course_pages() -> Iterator[str]:
    """Home, the glossary and every published lesson and card, a card with its answer hidden and shown."""
    from .models import Card, Lesson

    yield from ("/", "/glossary/")
    for lesson in Lesson.objects.published().select_related("course"):
        yield lesson.get_absolute_url()
    for card in Card.objects.published().select_related("lesson__course"):
        yield card.get_absolute_url()
        yield card.get_absolute_url() + "?answer=shown"


class LessonsConfig(AppConfig):
    name = "lessons"
    verbose_name = "Lesson content"

    def ready(self) -> None:
        from django.utils.autoreload import file_changed

        from pagecache.content_cache import CONTENT, drop_kept_when_a_template_changes
        from pagecache.warm import warm_paths

        from .models import Card, CardNumber, CardTerm, Course, GlossaryTerm, Lesson

        # Everything a lesson, card or glossary page shows: an edit to any of it is a new version.
        # The simulator's scenarios and parameter sets that cards cite: felab_sim watches its own.
        CONTENT.watch(Course, Lesson, Card, CardTerm, CardNumber, GlossaryTerm)
        from .models import PracticeTemplate  # issue 22's practice problems: content too

        CONTENT.watch(PracticeTemplate)
        warm_paths(course_pages)
        file_changed.connect(drop_kept_when_a_template_changes, dispatch_uid="felab-kept-templates")
