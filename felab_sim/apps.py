from django.apps import AppConfig


class FelabSimConfig(AppConfig):
    name = "felab_sim"
    verbose_name = "Simulator"

    def ready(self) -> None:
        from serving.content_cache import watch

        from .models import ParameterSet, Scenario

        # Cards and calculator pages show them: an edit to either is a new content version.
        watch(Scenario, ParameterSet)
