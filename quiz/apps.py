from django.apps import AppConfig


class QuizConfig(AppConfig):
    name = "quiz"
    verbose_name = "Self-assessment and progress"

    def ready(self) -> None:
        from felab_sim.runs import show_starters_by

        from . import learners  # noqa: F401  (connects the merge at log in)
        from .models import run_starter_shown_to

        show_starters_by(run_starter_shown_to)
