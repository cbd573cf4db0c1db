"""`manage.py chain`: the chain from physics to money on the command line.

    manage.py chain [--model PRESET | --model-config FILE] [--hardware PRESET | --hardware custom
        --memory-gb GB --bandwidth-gbs GB/S --peak-tflops TFLOP/S] [--precision bf16|fp8] ... [--json]

The flags are generated from the chain's declarations (felab_sim/engine/course/chain_settings.py,
dashes for underscores); the steps are the page's (/sim/chain/), each with its formula and its
calculator's address. docs/chain.md says what each step assumes. Bad input exits non-zero naming
the flag.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandParser

from felab_sim.engine.core.params import ParamError
from felab_sim.engine.course import chain, chain_settings
from felab_sim.management.declared import add_declared_flags, flag_error, read_file_flags
from felab_sim.pages.chain_views import step_url


def format_chain(walked: chain.Chain) -> str:
    """One step a block: its number, label and value; its formula; its calculator's address."""
    width = max(len(step.label) for step in walked.steps)
    lines = []
    for number, step in enumerate(walked.steps, 1):
        mark = "" if step.ok else "  ✗ the chain stops here"
        lines.append(f"{number}. {step.label.ljust(width)}  {step.text()}{mark}")
        lines.append(f"   {step.formula}")
        lines.append(f"   {step.calculator}: {step_url(step)}")
    lines.append("")
    lines.append(walked.verdict)
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Walk the chain from a model and a GPU to replicas and dollars: fit, KV, speed, cost."

    def add_arguments(self, parser: CommandParser) -> None:
        add_declared_flags(parser, chain_settings.PARAMS)
        parser.add_argument("--json", action="store_true", default=False, help="print /sim/chain.json's JSON")

    def handle(self, *args, **options) -> None:
        given = {param.name: options[param.name] for param in chain_settings.PARAMS if param.name in options}
        raw = read_file_flags(given, chain_settings.PARAMS)
        try:
            walked = chain.walk(raw)
        except ParamError as error:
            raise flag_error(error) from error
        if options["json"]:
            self.stdout.write(json.dumps(walked.as_json(step_url), indent=2))
        else:
            self.stdout.write(format_chain(walked))
