from django.apps import AppConfig


class LessonsConfig(AppConfig):
    name = "lessons"
    verbose_name = "Lesson content"

    def ready(self) -> None:
        from django.utils.autoreload import file_changed

        from serving.content_cache import drop_kept_when_a_template_changes, watch

        from .models import Card, CardNumber, CardTerm, Course, GlossaryTerm, Lesson

        # Everything a lesson, card or glossary page shows: an edit to any of it is a new version.
        # The simulator's scenarios and parameter sets that cards cite: felab_sim watches its own.
        watch(Course, Lesson, Card, CardTerm, CardNumber, GlossaryTerm)
        from .models import PracticeTemplate  # issue 22's practice problems: content too

        watch(PracticeTemplate)
        file_changed.connect(drop_kept_when_a_template_changes, dispatch_uid="felab-kept-templates")
