"""``manage.py practice_server``: serve lesson 03's practice server with uvicorn.

``--engine continuous`` paces it by the continuous-batching engine's step times instead of the
fixed slots (felab_sim/engine/serving/pacing.py), so lesson 03's lab measured against it
shows the curve rising past the slots' knee."""

from __future__ import annotations

import argparse
import logging
from typing import Any

import uvicorn
from django.core.management.base import BaseCommand, CommandError, CommandParser

from felab_sim.engine.core.params import ParamError
from felab_sim.engine.serving.pacing import CONTINUOUS, EnginePacing
from felab_sim.engine.sweep.sweep_params import SERVER_PARAMS, ServerParams, sweep_param
from felab_sim.management.declared import add_declared_flags, flag_error, given_flags
from felab_sim.pages.forms import field_text
from felab_sim.practice import PracticeApp
from felab_sim.practice.serve import listen_socket, uvicorn_config

FIXED = "fixed"
ENGINE_FLAGS = ("model", "hardware", "max_num_seqs", "max_num_batched_tokens")


class Command(BaseCommand):
    help = (
        "Serve lesson 03's practice server: an OpenAI-compatible streaming endpoint timed by "
        "felab_sim's model (GET /health, GET /v1/models, POST /v1/chat/completions and /v1/completions)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
        parser.add_argument("--port", type=int, default=8001, help="port to listen on (default 8001)")
        # The server's rules: its subset of the sweep's declarations, checked by them.
        add_declared_flags(parser, SERVER_PARAMS)
        parser.add_argument(
            "--engine",
            choices=(FIXED, CONTINUOUS),
            default=FIXED,
            help="fixed: lesson 03's slots (default); continuous: the continuous-batching engine's "
            "step times",
        )
        defaults = EnginePacing()
        for flag, default, kind, what in (
            ("--model", defaults.model, str, "model preset"),
            ("--hardware", defaults.hardware, str, "GPU preset"),
            ("--max-num-seqs", defaults.max_num_seqs, int, "requests run at once"),
            ("--max-num-batched-tokens", defaults.max_num_batched_tokens, int, "token budget of a step"),
        ):
            parser.add_argument(
                flag,
                type=kind,
                default=argparse.SUPPRESS,
                help=f"--engine continuous only: the engine's {what} (default {default})",
            )

    def handle(self, *args: Any, **options: Any) -> None:
        given = given_flags(options, SERVER_PARAMS)
        engine_given = {name: options[name] for name in ENGINE_FLAGS if name in options}
        params: ServerParams | EnginePacing
        if options["engine"] == CONTINUOUS:
            if given:
                flag = "--" + next(iter(given)).replace("_", "-")
                raise CommandError(
                    f"{flag}: sets the fixed-slot server; --engine continuous takes --max-num-seqs, "
                    "--max-num-batched-tokens, --model and --hardware"
                )
            try:
                params = EnginePacing(**engine_given)
            except ParamError as error:
                raise flag_error(error) from None
        else:
            if engine_given:
                flag = "--" + next(iter(engine_given)).replace("_", "-")
                raise CommandError(f"{flag}: needs --engine continuous")
            try:
                params = ServerParams(**{name: sweep_param(name).parse(text) for name, text in given.items()})
            except ParamError as error:
                raise flag_error(error) from None
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
            rules = ", ".join(f"{name}={field_text(value)}" for name, value in params.as_flat().items())
            self.stdout.write(
                f"Practice server on http://{shown}:{port}/v1 ({rules}; http={config.http}). Ctrl-C stops it."
            )
        try:
            uvicorn.Server(config).run(sockets=[sock])
        except KeyboardInterrupt:
            # uvicorn re-raises the SIGINT it handled once it has shut down; that is the normal way out.
            pass
        finally:
            sock.close()
