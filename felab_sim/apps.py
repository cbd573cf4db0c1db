from collections.abc import Iterator

from django.apps import AppConfig


def simulator_pages() -> Iterator[str]:
    """The simulator's pages at their default settings: a new worker's first /sim/ runs the
    default sweep and imports what its figure needs, a few hundred ms."""
    from django.urls import reverse

    from .engine.calculators import CALCULATORS

    yield from (reverse("sim"), reverse("chain_page"), reverse("engine_page"))
    yield from (reverse("calc_page", args=[name]) for name in CALCULATORS)


class FelabSimConfig(AppConfig):
    name = "felab_sim"
    verbose_name = "Simulator"
    # Handed to lessons, which finds them here and imports nothing of felab_sim's models:
    # the content files' sections (lessons/content_sections.py) and what cards compute from
    # this app's rows (lessons/simulator.py). Set in ready(), once the models are loaded.
    lesson_content_sections: tuple = ()
    card_simulator = None

    def ready(self) -> None:
        from pagecache.content_cache import CONTENT
        from pagecache.warm import warm_paths
        from serving.views import report_readiness

        from . import prefix_runs, runs
        from .cards.content_files import ParameterSetsFile, ScenariosFile
        from .cards.for_cards import CardSimulator
        from .models import RUNS, ParameterSet, Run, Scenario
        from .pages import calculator_page

        # Cards and calculator pages show them: an edit to either is a new content version.
        CONTENT.watch(Scenario, ParameterSet)
        RUNS.watch(Run)
        warm_paths(simulator_pages)
        report_readiness("queue", runs.queue_readiness)
        # In the order import_lessons has always read them.
        self.lesson_content_sections = (ScenariosFile(), ParameterSetsFile())
        self.card_simulator = CardSimulator()
        calculator_page.show_measured_runs(prefix_runs.NAME, prefix_runs.prefix_cache_run)
