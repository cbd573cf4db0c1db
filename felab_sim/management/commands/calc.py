"""`manage.py calc`: the live calculators on the command line.

    manage.py calc --list [--json]
    manage.py calc NAME [--param-name value ...] [--json]
    manage.py calc --reference > docs/calculators.md

The flags are generated from each calculator's parameter declarations (dashes for
underscores); see docs/architecture.md, "Calculators". Bad input exits non-zero with the
parameter named. ``--reference`` prints the reference docs/calculators.md holds.
"""

from __future__ import annotations

import argparse
import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from felab_sim.engine.calculators import CALCULATORS
from felab_sim.engine.core.calculator import Calculator, Result
from felab_sim.engine.core.params import ParamError
from felab_sim.engine.course import reference
from felab_sim.management.declared import add_declared_flags, flag_error, read_file_flags


def format_result(result: Result) -> str:
    """One output a line: label, value with its unit, and the key cards cite it by; under it, its
    formula with the settings' numbers."""
    rows = [(out.label, out.text(), key) for key, out in result.outputs.items()]
    label_width = max(len(label) for label, _, _ in rows)
    value_width = max(len(value) for _, value, _ in rows)
    lines = []
    for (label, value, key), out in zip(rows, result.outputs.values(), strict=True):
        lines.append(f"{label.ljust(label_width)}  {value.rjust(value_width)}  {key}")
        if out.formula:
            lines.append(f"    {out.formula}")
    return "\n".join(lines)


def format_list() -> str:
    width = max(len(name) for name in CALCULATORS)
    return "\n".join(
        f"{name.ljust(width)}  {calc.title} (lessons {', '.join(calc.lessons)})"
        for name, calc in CALCULATORS.items()
    )


class Command(BaseCommand):
    help = "Run one of felab_sim's live calculators, or list them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--list", action="store_true", help="list the calculators")
        parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
        parser.add_argument(
            "--reference", action="store_true", help="print docs/calculators.md, the calculators' reference"
        )
        subparsers = parser.add_subparsers(dest="calculator", metavar="NAME", title="calculators")
        for name, calculator in CALCULATORS.items():
            sub = subparsers.add_parser(name, help=calculator.title, description=calculator.meaning)
            # Values stay text here: the declaration parses them, so the CLI, the JSON endpoint
            # and the page refuse exactly the same input with the same message.
            add_declared_flags(sub, calculator.params)
            sub.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")

    def handle(self, *args, **options) -> None:
        name = options.get("calculator")
        if options["reference"]:
            self.stdout.write(reference.markdown(), ending="")
            return
        if options["list"]:
            if options["json"]:
                self.stdout.write(json.dumps([calc.as_json() for calc in CALCULATORS.values()], indent=2))
            else:
                self.stdout.write(format_list())
            return
        if not name:
            raise CommandError("name a calculator (calc NAME --help) or use --list:\n" + format_list())
        calculator = CALCULATORS[name]
        result = self.run(calculator, options)
        if options["json"]:
            self.stdout.write(json.dumps(result.as_json(), indent=2))
        else:
            self.stdout.write(f"{calculator.title}\n{format_result(result)}")

    def run(self, calculator: Calculator, options: dict) -> Result:
        given = {param.name: options[param.name] for param in calculator.params if param.name in options}
        raw = read_file_flags(given, calculator.params)
        try:
            return calculator.run(raw)
        except ParamError as error:
            raise flag_error(error) from error
