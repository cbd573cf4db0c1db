from django.apps import AppConfig


class FelabSimConfig(AppConfig):
    name = "felab_sim"
    verbose_name = "Simulator"
