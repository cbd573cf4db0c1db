"""What a card cites, found and checked: the sweep's live numbers ({{sim.…}}), calculator
outputs of named parameter sets ({{calc.SET.OUTPUT}}), facts from the course's tables
({{hw.…}}, {{model.…}}, {{price.…}}, {{measured.…}}), and the names its "Computed live" panel's
rows give. A citation that cannot be resolved refuses the card when it is saved.

The parsing and resolving are felab_sim's pure code (engine/course/live_numbers.py, citations.py,
facts.py); the parameter sets the card names are looked up through lessons/simulator.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from felab_sim.engine.course import citations, facts, live_numbers
from felab_sim.engine.sweep.sweep_params import SweepParams

from .markdown import as_written_and_shown, live_number_markup_problems
from .simulator import simulator

MEASURED_PREFIX = "measured."


def is_measured_number(name: str) -> bool:
    """Whether a panel row cites one of the course's published measurements (measurements.py)."""
    return name.startswith(MEASURED_PREFIX)


def calc_citations(texts: Iterable[str], panel_names: Iterable[str]) -> list[citations.Citation]:
    """Every calculator output cited in the texts, then in the panel's rows, in that order."""
    found = [cited for text in texts for cited in citations.in_text(text)]
    found += [cited for name in panel_names if (cited := citations.parse_calc_number(name))]
    return found


def text_problems(texts: Mapping[str, str], params: SweepParams | None) -> dict[str, list[str]]:
    """Per section (in the order given), why what its text cites cannot be shown; sections
    without a problem are left out. ``params`` is the card's scenario, which {{sim.…}} reads.

    Each text is checked as written and as the page shows it (lessons/markdown.py says why), and
    the parameter sets every section names are looked up in one query.
    """
    shown = {name: as_written_and_shown(text) for name, text in texts.items()}
    cited = {
        name: list(dict.fromkeys(found for text in both for found in citations.in_text(text)))
        for name, both in shown.items()
    }
    known_sets = simulator().calculators_by_slug(
        citations.slugs(citation for found in cited.values() for citation in found)
    )
    problems: dict[str, list[str]] = {}
    for name, text in texts.items():
        found = live_numbers.problems(shown[name], params)
        found += citations.problems(cited[name], known_sets)
        found += facts.problems(shown[name])
        found += live_number_markup_problems(text)
        if found:
            problems[name] = found
    return problems


def panel_name_problems(name: str, scenario_params: Callable[[], SweepParams | None]) -> list[str]:
    """Why a panel row's live number cannot be shown: a measurement, a calculator's output, or a
    number of the card's sweep. ``scenario_params`` is asked only for the last (it may read the
    card and its scenario from the database)."""
    if is_measured_number(name):
        return facts.problems(["{{" + name + "}}"])
    if citations.is_calc_number(name):
        cited = citations.parse_calc_number(name)
        if cited is None:
            return ["write a calculator's number as calc.SET_SLUG.OUTPUT_KEY"]
        problem = citations.problem(cited, simulator().calculators_by_slug([cited.slug]))
        return [problem] if problem else []
    return live_numbers.problems([live_numbers.placeholder(name)], scenario_params())
