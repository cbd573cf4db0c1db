from django.apps import AppConfig


class PagecacheConfig(AppConfig):
    """Pages kept per content version in each process: the shared content version, kept pages
    and fragments, and the pages gunicorn's arbiter builds before it forks its workers."""

    name = "pagecache"
    verbose_name = "Page cache"
