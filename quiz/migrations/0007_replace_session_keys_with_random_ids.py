"""Replace every anonymous learner's stored session key with a fresh random id.

Until now an anonymous learner's rows carried their live session key, so anyone who
could read or filter those rows could take over the session. Each distinct key gets
a new random id (the same one in showings, reviews and schedules), and every stored
session (database-backed sessions) that pointed at the old key is pointed at the new
id, so students keep their progress. A learner whose session is gone keeps their rows
under an id that no one holds: counted in the class's numbers, reachable by nobody.

Reversing keeps the random ids: the code before this reads the learner from the
session's data, which now holds them, so nothing breaks and no key comes back.
"""

import secrets

from django.db import migrations

LEARNER_SESSION_FIELD = "quiz_learner"  # as in quiz/learners.py when this was written
OWNED_MODELS = ("Showing", "Review", "CardState")


def _fresh_id() -> str:
    return secrets.token_hex(16)


def replace_session_keys(apps, schema_editor):
    owned = [apps.get_model("quiz", name) for name in OWNED_MODELS]
    old_keys: set[str] = set()
    for model in owned:
        anonymous = model.objects.filter(user__isnull=True).exclude(anonymous_id="")
        old_keys.update(anonymous.values_list("anonymous_id", flat=True).distinct())
    fresh = {old: _fresh_id() for old in sorted(old_keys)}
    for old, new in fresh.items():
        for model in owned:
            model.objects.filter(user__isnull=True, anonymous_id=old).update(anonymous_id=new)
    _repoint_sessions(apps, fresh)


def _repoint_sessions(apps, fresh: dict[str, str]) -> None:
    if not fresh:
        return
    try:
        Session = apps.get_model("sessions", "Session")
    except LookupError:  # sessions kept elsewhere: those learners start afresh
        return
    from django.contrib.sessions.backends.db import SessionStore

    store = SessionStore()
    for session in Session.objects.only("session_key", "session_data").iterator():
        data = store.decode(session.session_data)
        new = fresh.get(data.get(LEARNER_SESSION_FIELD, ""))
        if new is None:
            continue
        data[LEARNER_SESSION_FIELD] = new
        Session.objects.filter(pk=session.pk).update(session_data=store.encode(data))


class Migration(migrations.Migration):
    dependencies = [
        ("quiz", "0006_anonymous_learner_ids"),
        ("sessions", "0001_initial"),
    ]

    operations = [migrations.RunPython(replace_session_keys, migrations.RunPython.noop)]
