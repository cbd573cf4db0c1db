from django.apps import AppConfig


class LessonsConfig(AppConfig):
    name = "lessons"
    verbose_name = "Lesson content"

    def ready(self) -> None:
        from config.content_cache import watch
        from felab_sim.models import ParameterSet, Scenario

        from .models import Card, CardFigure, CardTerm, Course, GlossaryTerm, Lesson

        # Everything a lesson, card or glossary page shows: an edit to any of it is a new version.
        watch(Course, Lesson, Card, CardTerm, CardFigure, GlossaryTerm, Scenario, ParameterSet)
