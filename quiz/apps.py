from django.apps import AppConfig


class QuizConfig(AppConfig):
    name = "quiz"
    verbose_name = "Self-assessment and progress"

    def ready(self) -> None:
        from felab_sim.runs import show_starters_by
        from lessons import class_mistakes as lessons_class_mistakes
        from lessons.templatetags import learner_work
        from pagecache.content_cache import CONTENT
        from pagecache.warm import warm_paths

        from . import class_mistakes, learners  # noqa: F401  (learners connects the merge at log in)
        from .models import ClassMistake
        from .shared_names import run_starter_shown_to
        from .templatetags import quiz_tags

        # The apps below ask quiz through hooks, since they must not import it.
        show_starters_by(run_starter_shown_to)
        warm_paths(lambda: ("/progress/", "/practice/"))
        learner_work.provide(
            card_study=quiz_tags.card_study,
            answer_typed_before=quiz_tags.answer_typed_before,
            rating_buttons=quiz_tags.rating_buttons,
            course_maps=quiz_tags.course_maps,
            home_run=quiz_tags.home_run,
        )
        # A mistake named from the class's answers is part of its template's practice problems.
        lessons_class_mistakes.provide(
            mistakes_of=class_mistakes.mistakes_of,
            unnamed_groupings=class_mistakes.unnamed_groupings,
            entries_of=class_mistakes.entries_of,
            write_entry=class_mistakes.write_entry,
        )
        CONTENT.watch(ClassMistake)
