from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Sign-up, log in and every account page; the Instructors group and its permissions; the
    outcome of the last mail send (password resets), which /readyz reports."""

    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from serving.views import report_readiness

        from .mail import readiness

        report_readiness("mail", readiness)
