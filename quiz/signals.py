from typing import Any

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.http import HttpRequest

from .models import LEARNER_SESSION_FIELD, Learner


@receiver(user_logged_in, dispatch_uid="quiz_join_session_progress")
def join_session_progress(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """What the visitor studied before logging in becomes the account's.

    By now login() has cycled the session key; the anonymous learner's key was kept
    in the session's data, which survives the cycle.
    """
    session = getattr(request, "session", None)
    if session is None:
        return
    key = session.pop(LEARNER_SESSION_FIELD, "")
    if key:
        Learner(session_key=key).merge_into(user)
