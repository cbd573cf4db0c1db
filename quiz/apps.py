from django.apps import AppConfig


class QuizConfig(AppConfig):
    name = "quiz"
    verbose_name = "Self-assessment and progress"

    def ready(self) -> None:
        from . import signals  # noqa: F401  (connects the log-in merge)
