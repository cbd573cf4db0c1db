"""A password reset whose email cannot be sent: the visitor's page stays neutral (it may not tell
whether the address has an account), while operators see it: an ERROR line with the cause, and
/readyz reports mail degraded until a send succeeds (`manage.py sendtestemail` included).

Production sends through Django's SMTP backend; these tests point it at a closed port, then at a
small SMTP server of their own."""

import socket
import socketserver
import threading
from collections.abc import Iterator

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db

RESET = "/accounts/password/reset/"


class _SMTPHandler(socketserver.StreamRequestHandler):
    """Enough of SMTP for smtplib without TLS or log-in: greeting, EHLO, MAIL, RCPT, DATA, QUIT."""

    def reply(self, line: str) -> None:
        self.wfile.write(f"{line}\r\n".encode())

    def handle(self) -> None:
        self.reply("220 test SMTP server")
        while line := self.rfile.readline():
            verb = line.decode(errors="replace").split(" ", 1)[0].strip().upper()
            if verb == "DATA":
                self.reply("354 end with <CRLF>.<CRLF>")
                lines = []
                while (data := self.rfile.readline()) not in (b".\r\n", b""):
                    lines.append(data)
                self.server.messages.append(b"".join(lines).decode(errors="replace"))
                self.reply("250 queued")
            elif verb == "QUIT":
                self.reply("221 bye")
                return
            else:  # EHLO, HELO, MAIL, RCPT, RSET, NOOP
                self.reply("250 ok")


class _SMTPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _SMTPHandler)
        self.messages: list[str] = []


@pytest.fixture
def smtp_server() -> Iterator[_SMTPServer]:
    server = _SMTPServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def closed_port() -> int:
    """A port nothing listens on: connecting is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def send_through(settings, port: int) -> None:
    """Production's backend, without TLS, at this port."""
    settings.EMAIL_BACKEND = "accounts.mail.SMTPBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", port, 5
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""


def mail_check(client) -> tuple[str, dict]:
    response = client.get("/readyz")
    assert response.status_code == 200  # mail never takes a host out of service
    return response.json()["status"], response.json()["checks"]["mail"]


def test_a_reset_that_cannot_be_sent_reads_as_sent_and_shows_where_operators_look(
    client, student, settings, caplog
):
    send_through(settings, closed_port())
    unknown = client.post(RESET, {"email": "nobody@example.org"}, follow=True)
    with caplog.at_level("ERROR"):
        failed = client.post(RESET, {"email": student.email}, follow=True)
    # The visitor sees the same page whether the address has an account and whatever the mail did.
    assert failed.redirect_chain == unknown.redirect_chain == [("/accounts/password/reset/sent/", 302)]
    assert failed.content == unknown.content
    errors = [record for record in caplog.records if record.levelname == "ERROR"]
    assert any("ConnectionRefusedError" in record.getMessage() for record in errors), errors
    assert any(
        record.exc_info and isinstance(record.exc_info[1], ConnectionRefusedError) for record in errors
    )
    status, mail = mail_check(client)
    assert status == "degraded" and mail["ok"] is False
    assert "ConnectionRefusedError" in mail["error"] and mail["last_send"]


def test_mail_is_ok_again_once_a_send_succeeds(client, student, settings, smtp_server):
    send_through(settings, closed_port())
    client.post(RESET, {"email": student.email})
    assert mail_check(client)[1]["ok"] is False
    send_through(settings, smtp_server.server_address[1])
    client.post(RESET, {"email": student.email})
    assert len(smtp_server.messages) == 1 and "To: sam@example.org" in smtp_server.messages[0]
    status, mail = mail_check(client)
    assert status == "ready" and mail["ok"] is True and "error" not in mail


def test_djangos_test_email_command_checks_mail_before_going_live(client, settings, smtp_server):
    """docs/deploy.md: `manage.py sendtestemail` sends through the site's backend, so it fails
    loudly when mail does not go, and sets /readyz's mail check either way."""
    send_through(settings, closed_port())
    with pytest.raises(ConnectionRefusedError):
        call_command("sendtestemail", "ops@example.org")
    assert mail_check(client)[1]["ok"] is False
    send_through(settings, smtp_server.server_address[1])
    call_command("sendtestemail", "ops@example.org")
    assert "To: ops@example.org" in smtp_server.messages[0]
    assert mail_check(client)[1]["ok"] is True
