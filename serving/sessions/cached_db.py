"""Django's cached_db session engine (the cache first, then the database), with its database
row read by precompiled SQL (serving/sessions)."""

from django.contrib.sessions.backends import cached_db

from . import CompiledLookup


class SessionStore(CompiledLookup, cached_db.SessionStore):
    pass
