from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Sign-up, log in and every account page; the Instructors group and its permissions."""

    name = "accounts"
    verbose_name = "Accounts"
