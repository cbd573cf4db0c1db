from django.apps import AppConfig


class ServingConfig(AppConfig):
    """How pages are served, for every app: rate limits, Redis outages, security headers, admin
    filters, hot reads' SQL built once, the health checks."""

    name = "serving"
    verbose_name = "Serving pages"
