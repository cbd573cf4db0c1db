"""Command-line flags generated from parameter declarations (docs/architecture.md, "Parameters:
declared once"): the sweep, practice_server and calc commands share them.

Values stay text until the declaration parses them, so a command refuses exactly what the page
and the JSON endpoint refuse, with the same message, led by the flag to change.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping

from django.core.management.base import CommandError

from felab_sim.engine.core.params import Param, ParamError
from felab_sim.pages.forms import field_text


def flag_help(param: Param) -> str:
    default = "empty" if param.default is None else field_text(param.default)
    unit = f", {param.unit}" if param.unit else ""
    return f"{param.help} (default {default}{unit})".replace("%", "%%")  # argparse formats help with %


def flag_metavar(param: Param) -> str:
    if param.is_long_text:
        return "FILE"
    choices = param.choices or ({"on": "", "off": ""} if param.kind == "bool" else {})
    return "|".join(choices) if choices else param.kind.upper()


def add_declared_flags(parser: argparse.ArgumentParser, params: Iterable[Param]) -> None:
    """One flag per declared parameter (``--step-ms`` for ``step_ms``); a flag not given is absent."""
    for param in params:
        parser.add_argument(
            param.flag,
            dest=param.name,
            metavar=flag_metavar(param),
            default=argparse.SUPPRESS,
            help=flag_help(param),
        )


def read_file_flags(raw: Mapping[str, object], params: Iterable[Param]) -> dict[str, object]:
    """``raw`` with each long-text flag's value (a file's path) replaced by the file's text:
    ``--model-config config.json`` passes the config itself, as the page and the JSON do."""
    read = dict(raw)
    for param in params:
        if param.is_long_text and isinstance(read.get(param.name), str):
            try:
                with open(str(read[param.name]), encoding="utf-8") as file:
                    read[param.name] = file.read()
            except OSError as error:
                raise CommandError(
                    f"{param.flag}: cannot read {read[param.name]!r} ({error.strerror})"
                ) from None
    return read


def given_flags(options: Mapping[str, object], params: Iterable[Param]) -> dict[str, object]:
    """The declared parameters given on the command line, by name, as given."""
    return {param.name: options[param.name] for param in params if options.get(param.name) is not None}


def flag_error(error: ParamError) -> CommandError:
    """A bad value as the one-line command error that names its flag."""
    return CommandError(f"--{error.param.replace('_', '-')}: {error.message}")
