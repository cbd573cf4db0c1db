"""The class's wrong first tries that no named mistake explains, grouped by what they most likely
are. Pure Python: no Django (quiz reads the attempts and hands them in).

Each wrong first try is put back on its own draw (the template and the seed draw the same problem
again) and compared with candidate explanations computed from that draw, the way named mistakes
are computed (felab_sim.engine.problems.mistakes):

- a factor of the right value: ×2 and ÷2; ×8 and ÷8 (bits and bytes); ×1,000 and ÷1,000 (a
  prefix); ×1.073741824 and ÷1.073741824 (1,024³ ÷ 10⁹: GiB and GB mixed up);
- an input left out: for each numeric input of the draw, the calculator is run again with that
  input doubled (halved where doubling is refused); where the answer then scales as the input
  (or as its inverse) the draw is proportional to it, and the answer without it is the answer
  ÷ the input (or × it). Where the answer is not proportional to an input, leaving it out has
  no general value and no candidate is made;
- two inputs swapped: for the template's own drawn single-value inputs, the calculator is run
  with each pair's values exchanged (the first ``MAX_SWAPS`` pairs).

A candidate is kept for a draw as a named mistake is offered: only where it stands more than
half the tolerance from the right answer (``told_apart``). An answer within the tolerance of a
candidate matches it; of several, the nearest wins unless the two nearest are the same number
to half the tolerance (``told_apart`` again), when the answer is counted as ambiguous. A first
try graded right but more than half the tolerance off is read too: nearer a candidate than the
right answer, it is that mistake, as with named mistakes (bytes ÷ 2³⁰ where ÷ 10⁹ is asked is
6.9% low, inside a 10% tolerance); else it was right and is left out of the count.

Tries matching no candidate may still share one factor of the right value across draws (a third,
where the class divides by a count the course never names): those whose ratios lie within a 4%
span (about half the tolerance, where narrower), from at least ``RECURRING_DRAWS`` draws, form a
group of their own where they are at least ``RECURRING_SHARE`` of the tries matching no
candidate: misses scattered at random also land near one another now and then, but seldom so many
in so narrow a span. It is named by the nearest simple fraction within 2% (about half the
tolerance, where narrower), or else by the factor itself; the two halves (√(1 + tolerance) − 1
each) compound to the tolerance, so the formula's value, once named, is within the tolerance of
each of the group's tries (on a draw where one of the template's mistakes lies too near that
value, the earlier one is offered instead, as with any named mistake). A fraction that is one of
the factors above joins that factor's group, and a span around the right value itself is no group.

Work is bounded: at most ``MAX_TRIES`` wrong first tries of a template are read (the caller's
latest), at most ``MAX_CANDIDATES`` candidates are made per draw, and at most ``MAX_RECURRING`` + 1
passes, each a sort and a scan, look for recurring factors.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..core.numbers import format_with_unit
from ..core.params import ParamError, ParamValue
from .drill_problems import Problem
from .drill_specs import DrillError, DrillSpec
from .drills import _answer, draw_problem
from .mistakes import told_apart

__all__ = ["Candidate", "Grouping", "UnnamedGroup", "WrongTry", "candidates", "group_unnamed"]

MAX_TRIES = 300  # wrong first tries read per template, at most
# Read per template where every template is grouped at once: /instructor/ on each request, and
# drill --unnamed unless told to read more (up to MAX_TRIES).
PAGE_TRIES = 100
MAX_CANDIDATES = 24  # candidate explanations per draw
MAX_SWAPS = 3  # pairs of drawn inputs swapped per draw
MAX_EXAMPLES = 3  # answers shown per group
GB_PER_GIB = 1024**3 / 1e9  # a GiB is 1.074 GB

# A label gives the factor and its likely cause, not a direction: the course's own bits-for-bytes
# mistakes are ⅛ of the answer in some templates (l00) and 8× in others (l05).
GB_AND_GIB = "(1,024³/10⁹: GB and GiB mixed up?)"
# (key, label, formula, factor), in the order tried.
FACTORS: tuple[tuple[str, str, str, float], ...] = (
    ("times-2", "2× the right value", "answer * 2", 2.0),
    ("half", "half the right value", "answer / 2", 0.5),
    ("times-8", "8× the right value (bits and bytes mixed up?)", "answer * 8", 8.0),
    ("eighth", "⅛ of the right value (bits and bytes mixed up?)", "answer / 8", 0.125),
    ("times-1000", "1,000× the right value (a unit prefix?)", "answer * 1000", 1000.0),
    ("thousandth", "1/1,000 of the right value (a unit prefix?)", "answer / 1000", 0.001),
    ("times-gib", f"1.074× the right value {GB_AND_GIB}", "answer * 1.073741824", GB_PER_GIB),
    ("over-gib", f"the right value ÷ 1.074 {GB_AND_GIB}", "answer / 1.073741824", 1 / GB_PER_GIB),
)
# How near a power of the input the answer's change must be for the draw to count as proportional.
SCALING_SLACK = 1e-6
# A recurring factor: unmatched tries whose ratios lie within a 4% span (about half the
# tolerance, where narrower), from at least three draws and at least a fifth of the unmatched
# tries. Misses scattered at random, at least 1.5× off, rarely crowd so narrow a span: with 100 of
# them the most in one span was 9% of the unmatched in 100 classes; with 20, four classes of 100
# made a group. It is named by a simple fraction within 2% (about half the tolerance, where
# narrower). At most three such groups a template.
RECURRING_SPREAD = 0.02
RECURRING_DRAWS = 3
RECURRING_SHARE = 0.2
MAX_RECURRING = 3
# The simple fractions a recurring factor is named by, simplest first: p/q with p and q up to 4,
# then whole numbers and their inverses up to 24 (a year for a month is 12, a day for an hour 24).
SIMPLE_FRACTIONS: tuple[tuple[int, int], ...] = tuple(
    sorted(
        {(p, q) for p in range(1, 5) for q in range(1, 5) if math.gcd(p, q) == 1}
        | {(n, 1) for n in range(1, 25)}
        | {(1, n) for n in range(1, 25)},
        key=lambda pq: (pq[0] + pq[1], pq),
    )
)


@dataclass(frozen=True)
class WrongTry:
    """A wrong first try as the caller recorded it."""

    seed: int
    ratio: float  # the first try ÷ the right answer when it was given
    expected: float  # the right answer then
    named: str = ""  # the named mistake it matched then, if any
    # Graded right, yet more than half the tolerance off: wrong if it is nearer a candidate than
    # the right answer (bytes ÷ 2³⁰ where ÷ 10⁹ is asked: 6.9% low, inside a 10% tolerance), as a
    # named mistake is.
    graded_right: bool = False


@dataclass(frozen=True)
class Candidate:
    """One explanation of a wrong answer, computed from one draw."""

    key: str  # the same for every draw: "times-2", "without-context_tokens", "swap-a-b"
    label: str
    formula: str  # to name it in the admin (blank where no formula says it: a swap)
    value: float


@dataclass(frozen=True)
class Example:
    given: float
    right: float


@dataclass(frozen=True)
class UnnamedGroup:
    key: str
    label: str
    formula: str
    count: int
    share: float  # of the wrong first tries read
    examples: tuple[Example, ...]

    @property
    def percent(self) -> int:
        return round(100 * self.share)


@dataclass(frozen=True)
class Grouping:
    """A template's wrong first tries: how many were read, named, unexplained, and the unexplained
    ones grouped, the largest group first."""

    template: str
    unit: str
    wrong: int  # wrong first tries read (of at most ``limit`` read, right ones nearer no candidate left out)
    named: int  # of them, a named mistake (then, or now that one is named)
    ambiguous: int  # matching two candidates that are the same number on their draw
    unmatched: int  # matching no candidate
    redrawn: int  # whose draw no longer gives the answer they were graded against (an edit since)
    groups: tuple[UnnamedGroup, ...] = field(default_factory=tuple)
    capped: bool = False  # more wrong first tries existed than were read
    limit: int = MAX_TRIES  # the latest this many were read

    @property
    def largest(self) -> UnnamedGroup | None:
        return self.groups[0] if self.groups else None

    def as_json(self) -> dict[str, object]:
        return {
            "template": self.template,
            "unit": self.unit,
            "wrong_first_tries_read": self.wrong,
            "capped_at": self.limit if self.capped else None,
            "named": self.named,
            "ambiguous": self.ambiguous,
            "unmatched": self.unmatched,
            "redrawn": self.redrawn,
            "groups": [
                {
                    "key": g.key,
                    "label": g.label,
                    "formula": g.formula,
                    "count": g.count,
                    "share": round(g.share, 4),
                    "examples": [{"given": e.given, "right": e.right} for e in g.examples],
                }
                for g in self.groups
            ],
        }


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _answer_at(problem: Problem, inputs: dict[str, ParamValue]) -> float | None:
    """The template's answer with other inputs (None where the calculator refuses them)."""
    try:
        before, after = problem.rerun(inputs)
        return _answer(problem.spec, before, after if problem.spec.change else None)
    except (ParamError, DrillError):
        return None


def _numeric_inputs(problem: Problem) -> list[str]:
    """The draw's numeric inputs, drawn ones first, then fixed ones the calculator was given."""
    spec = problem.spec
    named = [name for draw in spec.draws for name in draw.inputs] + list(spec.fixed)
    params = problem.before.params
    return [name for name in dict.fromkeys(named) if _is_number(params.get(name)) and params[name] > 0]


def _left_out(problem: Problem, name: str) -> Candidate | None:
    """The answer with one input left out, where the draw's answer is proportional to it (or to
    its inverse); None where it is neither."""
    params = dict(problem.before.params)
    value = float(params[name])  # type: ignore[arg-type]
    if math.isclose(value, 1.0):
        return None
    kind = problem.spec.calc.param(name).kind
    for factor in (2.0, 0.5):
        moved = round(value * factor) if kind == "int" else value * factor
        if moved <= 0 or moved == value:
            continue
        scaled = _answer_at(problem, {**params, name: moved})
        if scaled is None:
            continue
        power = math.log(scaled / problem.answer) / math.log(moved / value)
        if abs(power - 1) <= SCALING_SLACK:
            return Candidate(f"without-{name}", f"{name} left out (the right value ÷ {name})",
                             f"answer / {name}", problem.answer / value)  # fmt: skip
        if abs(power + 1) <= SCALING_SLACK:
            return Candidate(f"without-{name}", f"{name} left out (the right value × {name})",
                             f"answer * {name}", problem.answer * value)  # fmt: skip
        return None
    return None


def _swaps(problem: Problem) -> list[Candidate]:
    spec = problem.spec
    params = problem.before.params
    drawn = [
        draw.name
        for draw in spec.draws
        if not draw.presets and draw.name not in spec.change and _is_number(params.get(draw.name))
    ]
    found: list[Candidate] = []
    pairs = [(a, b) for i, a in enumerate(drawn) for b in drawn[i + 1 :]][:MAX_SWAPS]
    for first, second in pairs:
        if params[first] == params[second]:
            continue
        value = _answer_at(problem, {**params, first: params[second], second: params[first]})
        if value is not None:
            found.append(Candidate(f"swap-{first}-{second}", f"{first} and {second} swapped", "", value))
    return found


def candidates(problem: Problem) -> list[Candidate]:
    """The candidate explanations of a wrong answer to this draw, each told apart from the right
    answer, at most MAX_CANDIDATES."""
    found = [
        Candidate(key, label, formula, problem.answer * factor) for key, label, formula, factor in FACTORS
    ]
    for name in _numeric_inputs(problem):
        if len(found) >= MAX_CANDIDATES:
            break
        if (candidate := _left_out(problem, name)) is not None:
            found.append(candidate)
    found += _swaps(problem)
    tolerance = problem.spec.tolerance
    kept = [
        c
        for c in found
        if c.value > 0 and math.isfinite(c.value) and told_apart(c.value, problem.answer, tolerance)
    ]
    return kept[:MAX_CANDIDATES]


def match(problem: Problem, given: float, found: Sequence[Candidate]) -> Candidate | str | None:
    """The candidate an answer is: the nearest within the tolerance; ``"ambiguous"`` where the two
    nearest are the same number to half the tolerance; None where none is within it."""
    tolerance = problem.spec.tolerance
    near = sorted(
        (abs(math.log(given / c.value)), index, c)
        for index, c in enumerate(found)
        if abs(given / c.value - 1) <= tolerance + 1e-12
    )
    if not near:
        return None
    if (
        len(near) > 1
        and near[1][2].key != near[0][2].key
        and not told_apart(near[0][2].value, near[1][2].value, tolerance)
    ):
        return "ambiguous"
    return near[0][2]


def _half_of(tolerance: float) -> float:
    """h with (1 + h)² = 1 + tolerance: two steps of h, one after the other, stay within it."""
    return math.sqrt(1 + tolerance) - 1


def _fraction(factor: float, near: float) -> tuple[int, int] | None:
    """The simplest of SIMPLE_FRACTIONS within ``near`` (a fraction) of ``factor``."""
    for p, q in SIMPLE_FRACTIONS:
        if abs(factor * q / p - 1) <= near:
            return p, q
    return None


def recurring_candidate(factor: float, tolerance: float) -> Candidate | None:
    """A recurring factor of the right value as a group names it: "1/3 of the right value",
    "answer / 3"; "0.4137× the right value", "answer * 0.4137" where no simple fraction is within
    about half the tolerance. A fraction that is one of FACTORS names that candidate's group; a
    factor that is the right value itself is None."""
    fraction = _fraction(factor, min(RECURRING_SPREAD, _half_of(tolerance)))
    if fraction == (1, 1) or not told_apart(factor, 1.0, tolerance):
        return None
    if fraction is not None:
        for key, label, formula, known in FACTORS:
            if math.isclose(fraction[0] / fraction[1], known):
                return Candidate(key, label, formula, factor)
    if fraction is None:
        key, label, formula = f"{factor:.4g}", f"{factor:.4g}×", f"answer * {factor:.4g}"
    else:
        p, q = fraction
        key = f"{p}" if q == 1 else f"{p}-{q}"
        label = f"{p}×" if q == 1 else f"{p}/{q} of"
        formula = "answer" + (f" * {p}" if p != 1 else "") + (f" / {q}" if q != 1 else "")
    return Candidate(
        f"recurring-{key}", f"{label} the right value (recurring; no cause found)", formula, factor
    )


def _largest_window(rows: list[tuple[float, int, int, Example]], width: float) -> tuple[int, int] | None:
    """The most rows (sorted by log ratio) within ``width`` of one another that come from at
    least RECURRING_DRAWS draws; None where no such window exists."""
    best: tuple[int, int] | None = None
    seeds: dict[int, int] = {}
    end = 0
    for start in range(len(rows)):
        while end < len(rows) and rows[end][0] - rows[start][0] <= width:
            seeds[rows[end][1]] = seeds.get(rows[end][1], 0) + 1
            end += 1
        if len(seeds) >= RECURRING_DRAWS and (best is None or end - start > best[1] - best[0]):
            best = (start, end)
        seed = rows[start][1]
        seeds[seed] -= 1
        if not seeds[seed]:
            del seeds[seed]
    return best


def _recurring(
    loose: list[tuple[int, float, Example]], tolerance: float
) -> list[tuple[Candidate, list[Example]]]:
    """Groups of unmatched tries (seed, ratio, example; the latest first) sharing one factor of
    the right value, their examples the latest first."""
    rows = sorted(
        (math.log(ratio), seed, order, example)
        for order, (seed, ratio, example) in enumerate(loose)
        if ratio > 0 and math.isfinite(ratio)
    )
    needed = RECURRING_SHARE * len(rows)
    # A span of at most "half" the tolerance and a name within "half" of it, halves that compound
    # to the whole: the named formula's value is within the tolerance of each of the group's tries.
    width = math.log(1 + min(2 * RECURRING_SPREAD, _half_of(tolerance)))
    found: list[tuple[Candidate, list[Example]]] = []
    for _ in range(MAX_RECURRING + 1):
        window_at = _largest_window(rows, width)
        if window_at is None or window_at[1] - window_at[0] < needed:
            break
        window = rows[window_at[0] : window_at[1]]
        del rows[window_at[0] : window_at[1]]
        candidate = recurring_candidate(math.exp(window[len(window) // 2][0]), tolerance)
        if candidate is not None:
            found.append((candidate, [example for *_, example in sorted(window, key=lambda row: row[2])]))
        if len(found) == MAX_RECURRING:
            break
    return found


def group_unnamed(spec: DrillSpec, tries: Iterable[WrongTry], *, limit: int = MAX_TRIES) -> Grouping:
    """A template's wrong first tries (the latest first, as many as the caller has: only the first
    ``limit`` are read) grouped by the candidate each matches. A try the draw's named mistakes
    explain now (one named since it was given) counts as named."""
    read: list[WrongTry] = []
    capped = False
    for wrong in tries:
        if len(read) == limit:
            capped = True
            break
        read.append(wrong)
    named = ambiguous = unmatched = redrawn = right = 0
    counts: dict[str, list[tuple[Candidate, Example]]] = {}
    loose: list[tuple[int, float, Example]] = []
    for wrong in read:
        if wrong.named:
            named += 1
            continue
        try:
            problem = draw_problem(spec, wrong.seed)
        except DrillError:
            redrawn += 1
            continue
        if not math.isclose(problem.answer, wrong.expected, rel_tol=1e-6):
            redrawn += 1
            continue
        given = wrong.ratio * problem.answer
        if not _is_number(given) or given <= 0:
            unmatched += 1
            continue
        if problem.grade(given).mistake is not None:
            named += 1
            continue
        found = match(problem, given, candidates(problem))
        if wrong.graded_right and (
            not isinstance(found, Candidate)
            or abs(math.log(given / found.value)) >= abs(math.log(given / problem.answer))
        ):
            right += 1  # right after all: no candidate nearer than the right answer
            continue
        if found is None:
            unmatched += 1
            loose.append((wrong.seed, wrong.ratio, Example(given, problem.answer)))
        elif isinstance(found, str):
            ambiguous += 1
        else:
            counts.setdefault(found.key, []).append((found, Example(given, problem.answer)))
    for candidate, examples in _recurring(loose, spec.tolerance):
        unmatched -= len(examples)
        counts.setdefault(candidate.key, []).extend((candidate, example) for example in examples)
    total = len(read) - right
    groups = [
        UnnamedGroup(
            key=key,
            label=rows[0][0].label,
            formula=rows[0][0].formula,
            count=len(rows),
            share=len(rows) / total,
            examples=tuple(example for _, example in rows[:MAX_EXAMPLES]),
        )
        for key, rows in counts.items()
    ]
    groups.sort(key=lambda g: (-g.count, g.key))
    return Grouping(
        spec.slug, spec.answer_unit, total, named, ambiguous, unmatched, redrawn, tuple(groups), capped, limit
    )


def describe(grouping: Grouping) -> list[str]:
    """The grouping in sentences, as ``manage.py drill SLUG --unnamed`` prints it."""
    if not grouping.wrong:
        return [f"{grouping.template}: no wrong first tries yet."]
    read = f"the latest {grouping.wrong:,}" if grouping.capped else f"{grouping.wrong:,}"
    lines = [
        f"{grouping.template}: {read} wrong first tries; named {grouping.named}, ambiguous {grouping.ambiguous},"
        f" unmatched {grouping.unmatched}"
        + (f", drawn differently now {grouping.redrawn}" if grouping.redrawn else "")
    ]
    unit = "" if grouping.unit == "×" else grouping.unit
    for group in grouping.groups:
        examples = "; ".join(
            f"{format_with_unit(e.given, unit)} for {format_with_unit(e.right, unit)}" for e in group.examples
        )
        formula = f" [formula: {group.formula}]" if group.formula else ""
        lines.append(
            f"  {group.percent}% of wrong first tries are {group.label}, unnamed ({group.count}): {examples}{formula}"
        )
    return lines
