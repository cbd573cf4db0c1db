from django.apps import AppConfig


class QuizConfig(AppConfig):
    name = "quiz"
    verbose_name = "Self-assessment and progress"

    def ready(self) -> None:
        from . import learners  # noqa: F401  (connects the merge at log in)
