"""`manage.py prefix_cache --url URL`: lesson 06's prefix-cache run measured over HTTP against
any OpenAI-compatible server (felab_sim.engine.sweep.prefix_cache_run), shared part first against variable part first.

The model's side of the same numbers is the ``prefix-cache`` calculator (same parameter names).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from felab_sim.engine.core.params import ParamError
from felab_sim.engine.sweep.loadgen import LoadgenError
from felab_sim.engine.sweep.prefix_cache_run import (
    PREFIX_ORDERS,
    PrefixCacheRun,
    PrefixCacheSetup,
    run_prefix_cache,
)

COLUMNS = ("order", "prompt_tokens", "cached_tokens", "ttft_cold_ms", "ttft_warm_ms", "speedup")


def format_table(runs: list[PrefixCacheRun]) -> str:
    """One row per order; a number the server did not report is shown as a dash."""
    rows = [[str(run.setup.order)] + [_cell(run.as_dict()[name]) for name in COLUMNS[1:]] for run in runs]
    widths = [max(len(name), *(len(row[i]) for row in rows)) for i, name in enumerate(COLUMNS)]
    lines = ["  ".join(name.rjust(width) for name, width in zip(COLUMNS, widths, strict=True))]
    lines += ["  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]
    first = runs[0].setup
    lines.append(
        f"{first.requests} requests each, one at a time; cold = the first, warm = the median of the "
        f"other {first.requests - 1}; speedup = cold / warm"
    )
    return "\n".join(lines)


def _cell(value: object) -> str:
    return "—" if value is None else str(value)


class Command(BaseCommand):
    help = (
        "Measure lesson 06's prefix-cache run against an OpenAI-compatible server: N requests "
        "repeating a shared part, put first or after a part that varies; TTFT cold vs warm and "
        "the cached tokens the server reports."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        defaults = PrefixCacheSetup()
        parser.add_argument(
            "--url", required=True, help="the server's API root, e.g. http://127.0.0.1:8001/v1"
        )
        parser.add_argument("--model", help="the model name (default: the server's first model)")
        parser.add_argument(
            "--prefix-chars",
            type=int,
            default=defaults.prefix_chars,
            help=f"characters every request repeats (default {defaults.prefix_chars})",
        )
        parser.add_argument(
            "--suffix-chars",
            type=int,
            default=defaults.suffix_chars,
            help=f"characters that differ from request to request (default {defaults.suffix_chars})",
        )
        parser.add_argument(
            "--order",
            choices=[*PREFIX_ORDERS, "both"],
            default="both",
            help="shared part first, variable part first, or both runs one after the other (default both)",
        )
        parser.add_argument(
            "--requests",
            type=int,
            default=defaults.requests,
            help=f"requests per run (default {defaults.requests})",
        )
        parser.add_argument(
            "--max-tokens",
            type=int,
            default=defaults.max_tokens,
            help=f"tokens per reply (default {defaults.max_tokens}, as the course's script)",
        )
        parser.add_argument("--json", action="store_true", help="print JSON instead of the table")

    def handle(self, *args: Any, **options: Any) -> None:
        orders = PREFIX_ORDERS if options["order"] == "both" else (options["order"],)
        try:
            setups = [
                PrefixCacheSetup(
                    prefix_chars=options["prefix_chars"],
                    suffix_chars=options["suffix_chars"],
                    order=order,
                    requests=options["requests"],
                    max_tokens=options["max_tokens"],
                )
                for order in orders
            ]
        except ParamError as error:
            raise CommandError(f"--{error.param.replace('_', '-')}: {error.message}") from error

        url: str = options["url"]
        runs = []
        for setup in setups:
            self.stderr.write(f"measuring {url}: {setup.order}, {setup.requests} requests")
            try:
                runs.append(run_prefix_cache(url, setup, model=options["model"]))
            except LoadgenError as error:
                raise CommandError(f"--url {url}: {error}") from error
        if options["json"]:
            self.stdout.write(json.dumps({"runs": [run.as_dict() for run in runs]}, indent=2))
        else:
            self.stdout.write(format_table(runs))
