"""How a learner is named to others: by name only where the student consented (their
LearnerProfile's share_name), and only to instructors."""

from typing import Any

from django.core.exceptions import ObjectDoesNotExist

from accounts.instructors import is_instructor


def shared_name(user: Any) -> str:
    """A learner as an instructor may see them: a name only with the student's consent."""
    if user is None:
        return "anonymous"
    try:
        shares = user.learner_profile.share_name
    except ObjectDoesNotExist:  # an account without a profile (LearnerProfile.of) shares nothing
        shares = False
    if shares:
        return user.get_full_name() or user.get_username()
    return "a student (name not shared)"


def run_starter_shown_to(owner: Any, viewer: Any) -> str:
    """A simulator run's starter as another signed-in user may see them: to an instructor, as
    on /instructor/; to anyone else, not at all. felab_sim asks through runs.show_starters_by."""
    return shared_name(owner) if is_instructor(viewer) else ""
