"""What accounts tells the apps above it, which it must not import (quiz keeps a learner's
profile; see quiz/learners.py)."""

from django.dispatch import Signal

# Sent by the sign-up page once the account exists and before it logs in, with ``user`` and
# ``choices`` (the sign-up form's cleaned data: the consent to show one's name, for one).
account_created = Signal()
