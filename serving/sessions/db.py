"""Django's database session engine, with its row read by precompiled SQL (serving/sessions)."""

from django.contrib.sessions.backends import db

from . import CompiledLookup


class SessionStore(CompiledLookup, db.SessionStore):
    pass
