"""`manage.py sweep`: lesson 03's concurrency sweep, simulated by felab_sim's model, or with
--url measured over HTTP against any OpenAI-compatible server (felab_sim.engine.sweep.loadgen)."""

from __future__ import annotations

import json
import math

from django.core.management.base import BaseCommand, CommandError, CommandParser

from felab_sim.engine.core.params import ParamError
from felab_sim.engine.sweep.loadgen import LoadgenError, run_real_sweep
from felab_sim.engine.sweep.metrics import SweepResult
from felab_sim.engine.sweep.simulator import run_sweep
from felab_sim.engine.sweep.sweep_params import SERVER_PARAMS, SWEEP_PARAMS, SweepParams
from felab_sim.management.declared import add_declared_flags, flag_error, given_flags

SERVER_FLAGS = ", ".join(param.flag for param in SERVER_PARAMS)
COLUMNS = ("conc", "requests", "agg_tok_s", "user_tok_s", "ttft_p50_ms", "ttft_p95_ms", "goodput_rps")


def format_table(result: SweepResult) -> str:
    """The sweep as a fixed-width table, one row per level, then the capacity line."""
    widths = [max(len(name), 8) for name in COLUMNS]
    lines = ["  ".join(name.rjust(width) for name, width in zip(COLUMNS, widths, strict=True))]
    for level in result.as_dict()["levels"]:
        cells = ["—" if level[name] is None else str(level[name]) for name in COLUMNS]
        lines.append("  ".join(cell.rjust(width) for cell, width in zip(cells, widths, strict=True)))
    slo = f"{result.params.slo_ms:g} ms"
    if result.capacity is None:
        lines.append(f"capacity at TTFT p95 <= {slo}: none of the levels")
    else:
        lines.append(f"capacity at TTFT p95 <= {slo}: C = {result.capacity}")
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Simulate lesson 03's concurrency sweep against the practice server's model."

    def add_arguments(self, parser: CommandParser) -> None:
        # The flags come from the sweep's declarations (SWEEP_PARAMS); values arrive as text and
        # are checked by SweepParams, so every bad value gets the model's own message naming it.
        add_declared_flags(parser, SWEEP_PARAMS)
        parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
        parser.add_argument(
            "--url",
            help="measure this OpenAI-compatible server instead, e.g. http://127.0.0.1:8001/v1 "
            f"(the server's own settings apply; {SERVER_FLAGS} are ignored)",
        )
        parser.add_argument("--model", help="with --url: the model name (default: the server's first model)")

    def handle(self, *args, **options) -> None:
        params = self.sweep_params(options)
        if options["url"]:
            result = self.measure(options["url"], params, options["model"])
        else:
            result = run_sweep(params, max_events=math.inf)  # the command line has no cap
        self.emit(result, as_json=options["json"])

    def measure(self, url: str, params: SweepParams, model: str | None) -> SweepResult:
        def progress(index: int, conc: int, done: int, total: int) -> None:
            # One line per level on stderr, so --json output on stdout stays machine-readable.
            if done == total:
                self.stderr.write(f"level C = {conc}: {done}/{total} requests done")

        self.stderr.write(f"measuring {url}: levels {', '.join(map(str, params.levels))}")
        try:
            return run_real_sweep(url, params, model=model, on_progress=progress)
        except LoadgenError as error:
            raise CommandError(f"--url {url}: {error}") from error

    def sweep_params(self, options: dict) -> SweepParams:
        try:
            return SweepParams.from_flat(given_flags(options, SWEEP_PARAMS))
        except ParamError as error:
            raise flag_error(error) from error

    def emit(self, result: SweepResult, *, as_json: bool) -> None:
        if as_json:
            self.stdout.write(json.dumps(result.as_dict(), indent=2))
        else:
            self.stdout.write(format_table(result))
