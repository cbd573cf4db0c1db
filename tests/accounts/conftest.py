# Logging in joins the session's study to the account: these tests study first, as quiz's do.
from tests.quiz.conftest import clock, second_card  # noqa: F401
