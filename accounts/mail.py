"""Django's SMTP backend, recording each send's outcome where /readyz reports it (MailSend).

A password reset that fails to send must look the same to the visitor as one that was sent
(the reset form may not tell anyone whether an address has an account), so the failure has to
show where operators look: an ERROR line naming the server and the cause, and `/readyz`'s mail
check (docs/deploy.md, "Mail"). `manage.py sendtestemail` goes through this backend too, so a
test email sent before going live clears or sets the same state.
"""

import logging
from collections.abc import Sequence
from typing import Any

from django.core.mail.backends import smtp
from django.core.mail.message import EmailMessage
from django.db import DatabaseError, transaction
from django.utils import timezone

from .models import MailSend

logger = logging.getLogger("felab.mail")

LAST_SEND = 1  # MailSend's one row


def record_send(error: BaseException | str | None) -> None:
    """Record how the latest send went (None: sent). A database that cannot take the record
    costs the send nothing: the log has the send's outcome anyway."""
    detail = "" if error is None else error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    try:
        with transaction.atomic():
            MailSend.objects.update_or_create(
                pk=LAST_SEND, defaults={"ok": error is None, "at": timezone.now(), "error": detail[:2000]}
            )
    except DatabaseError:
        logger.warning("Could not record the last mail send's outcome", exc_info=True)


def readiness() -> dict[str, Any]:
    """/readyz's mail check: how the site's last send went, on whichever host; none yet is ok."""
    last = MailSend.objects.filter(pk=LAST_SEND).first()
    if last is None:
        return {"ok": True, "last_send": None}
    return {
        "ok": last.ok,
        "last_send": last.at.isoformat(),
        **({} if last.ok else {"error": f"the last send failed: {last.error}"}),
    }


class SMTPBackend(smtp.EmailBackend):
    def send_messages(self, email_messages: Sequence[EmailMessage]) -> int:
        if not email_messages:
            return 0
        try:
            sent = super().send_messages(email_messages)
        except Exception as error:
            logger.error(
                "Mail not sent through %s:%s: %s: %s (/readyz reports mail degraded until a send succeeds)",
                self.host, self.port, type(error).__name__, error,
            )  # fmt: skip
            record_send(error)
            raise
        # With fail_silently a refused connection returns 0 instead of raising.
        wanted = sum(1 for message in email_messages if message.recipients())
        if sent < wanted:
            logger.error(
                "Mail not sent through %s:%s: %d of %d messages sent", self.host, self.port, sent, wanted
            )
            record_send(f"{sent} of {wanted} messages sent")
        else:
            record_send(None)
        return sent
