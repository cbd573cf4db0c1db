"""``manage.py practice_server``: serve lesson 03's practice server with uvicorn."""

from __future__ import annotations

import logging
from typing import Any

import uvicorn
from django.core.management.base import BaseCommand, CommandError, CommandParser

from felab_sim.core.model import ParamError, ServerParams
from felab_sim.practice import PracticeApp
from felab_sim.practice.serve import listen_socket, uvicorn_config


def _flag(param: str) -> str:
    return "--" + param.replace("_", "-")


class Command(BaseCommand):
    help = (
        "Serve lesson 03's practice server: an OpenAI-compatible streaming endpoint timed by "
        "felab_sim's model (GET /health, GET /v1/models, POST /v1/chat/completions and /v1/completions)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        defaults = ServerParams()
        parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
        parser.add_argument("--port", type=int, default=8001, help="port to listen on (default 8001)")
        parser.add_argument(
            "--slots",
            type=int,
            default=defaults.slots,
            help=f"requests served at once (default {defaults.slots})",
        )
        parser.add_argument(
            "--step-ms",
            type=float,
            default=defaults.step_ms,
            help=f"decode step with one active request, in ms (default {defaults.step_ms:g})",
        )
        parser.add_argument(
            "--growth",
            type=float,
            default=defaults.growth,
            help=f"step growth per extra active request (default {defaults.growth:g})",
        )
        parser.add_argument(
            "--prefill-tok-s",
            type=float,
            default=defaults.prefill_tok_s,
            help=f"prefill speed in tokens per second (default {defaults.prefill_tok_s:g})",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            params = ServerParams(
                slots=options["slots"],
                step_ms=options["step_ms"],
                growth=options["growth"],
                prefill_tok_s=options["prefill_tok_s"],
            )
        except ParamError as exc:
            raise CommandError(f"{_flag(exc.param)}: {exc.message}") from None
        host: str = options["host"]
        port: int = options["port"]
        if not 1 <= port <= 65535:
            raise CommandError(f"--port must be from 1 to 65535 (got {port})")

        # Bind here rather than inside uvicorn, so that a port in use is a one-line error.
        try:
            sock = listen_socket(host, port)
        except OSError as exc:
            raise CommandError(
                f"--host/--port: cannot listen on {host}:{port}: {exc.strerror or exc}"
            ) from None

        verbosity = options["verbosity"]
        config = uvicorn_config(
            PracticeApp(params), log_level=logging.INFO if verbosity >= 1 else logging.WARNING
        )
        shown = f"[{host}]" if ":" in host else host
        if verbosity >= 1:
            self.stdout.write(
                f"Practice server on http://{shown}:{port}/v1 (slots={params.slots}, "
                f"step_ms={params.step_ms:g}, growth={params.growth:g}, "
                f"prefill_tok_s={params.prefill_tok_s:g}; http={config.http}). Ctrl-C stops it."
            )
        try:
            uvicorn.Server(config).run(sockets=[sock])
        except KeyboardInterrupt:
            # uvicorn re-raises the SIGINT it handled once it has shut down; that is the normal way out.
            pass
        finally:
            sock.close()
