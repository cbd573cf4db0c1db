from django.db import models


class MailSend(models.Model):
    """How the site's last attempt to send mail went, on any host: one row, the latest send's.

    Every process of every host writes it after each send and /readyz reads it, so a password
    reset that could not be sent (the visitor's page stays the same whether or not it was,
    to tell no one which addresses have accounts) shows as mail `degraded` where operators look,
    until a send succeeds (accounts/mail.py).
    """

    ok = models.BooleanField()
    at = models.DateTimeField()
    error = models.TextField(blank=True)

    class Meta:
        # The table serving created before the model moved here: renaming it would break the
        # hosts still running the release before during a rolling deploy.
        db_table = "serving_mailsend"

    def __str__(self) -> str:
        return f"mail {'sent' if self.ok else 'failed'} at {self.at:%Y-%m-%d %H:%M:%S}"
