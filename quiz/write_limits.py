"""The limit on every POST that records a learner's study: per client address and per learner.

A visitor may mint Django's CSRF cookie and token pair and POST without loading a page; nothing
in CSRF stops that, so these counts bound how much any one address or learner may write
(settings.RATE_LIMITS "write" and "learner-write", docs/deploy.md "Rate limits").
"""

import hashlib

from django.http import HttpRequest

from serving.ratelimit import rate_limited_per_address_and_visitor

from .learners import Learner


def learner_count_key(request: HttpRequest) -> str:
    """Whom the per-learner count is kept for: the account, or the session's anonymous learner
    (hashed: the count's key is stored in Redis or the database); "" for a visitor with neither."""
    learner = Learner.of(request)
    if learner.user is not None:
        return f"account:{learner.user.pk}"
    if learner.anonymous_id:
        return "anonymous:" + hashlib.sha256(learner.anonymous_id.encode()).hexdigest()[:32]
    return ""


study_write_limited = rate_limited_per_address_and_visitor(
    "write", "learner-write", learner_count_key, "saving study"
)
