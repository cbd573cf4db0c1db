from django.apps import AppConfig


class FelabSimConfig(AppConfig):
    name = "felab_sim"
    verbose_name = "Simulator"

    def ready(self) -> None:
        from config.content_cache import watch

        from . import calc_views, prefix_runs
        from .models import ParameterSet, Scenario

        # Cards and calculator pages show them: an edit to either is a new content version.
        watch(Scenario, ParameterSet)
        calc_views.show_measured_runs(prefix_runs.NAME, prefix_runs.prefix_cache_run)
