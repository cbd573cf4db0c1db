from django.apps import AppConfig


class ServingConfig(AppConfig):
    """How pages are served, for every app: kept pages and content versions, rate limits,
    Redis outages, security headers, admin filters, static files and the health checks."""

    name = "serving"
    verbose_name = "Serving pages"

    def ready(self) -> None:
        from . import csrf_strings

        csrf_strings.install()
