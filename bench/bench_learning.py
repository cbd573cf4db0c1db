"""Simulated students practise for weeks through felab's own practice code; how well its recall
predictions and mastery match what they then do.

    .venv/bin/python bench/bench_learning.py [--students 40] [--weeks 6] [--seed 1] [--quick]

A scratch SQLite database with the bundled lessons; the clock (quiz.clock.now) is simulated. Each
student's answer is graded by the problem as the page grades it (drill_problems.Problem.grade) and recorded
and scheduled by the functions the practice page calls (quiz.practice_tries.record_try,
show_solution); what to practise is what a student would pick: the templates the site has due
(PracticeState.objects.due, the longest overdue first), then the next template not yet tried, in
course order. Mastery is read by the functions /practice/ reads it with (practice_stats.learner_records).

The students' answer model (fixed before any run; its numbers are not tuned to the results):

- Skill. Each student has a skill k per concept (felab_sim/engine/problems/concepts.py): the chance of
  applying it right when it is fresh in memory, logit(k) = ability + ease + noise, ability ~ N(1.6, 0.9)
  per student, ease ~ N(0, 0.6) per concept, noise ~ N(0, 0.5). Skill does not grow with practice:
  memory does.
- Memory. Each concept has a stability S in days and the time it was last used; its recall is
  m = exp(−days since ÷ S). Opening a lesson (reading its cards) sets S = 1.5 days for its concepts
  not met before. A problem uses every concept of its template: right, S grows by a factor
  1.3 + 2 (1 − m) (a harder retrieval teaches more: the spacing effect); wrong, the solution is read
  and S = max(1, 0.6 S).
- An answer. A concept is applied right with p = k (0.4 + 0.6 m): forgotten, a student still rebuilds
  it 40% of the time from understanding. The first try is right when every concept of the template
  is (each drawn apart), typed within a third of the template's tolerance of the answer (3% at
  most, so the site grades it right: templates allowing 1% or 2% exist). Otherwise one failed concept is picked; a
  "named" student (half of them) makes a named mistake of that concept, when the draw offers one,
  with chance 0.8; an "unnamed" student, on the five templates in PLANTED, types that template's
  planted slip (the right value × its factor) with chance 0.7; any other miss is off by a
  log-normal factor (e^N(0, 1.2), at least 1.5× away). After a wrong first try the student presses
  Show me half the time, else tries once more (right with the same chance). No hints.
- Sessions. A student comes on a day with chance 0.5, at a random hour from 8 to 22, and answers up
  to 6 to 14 problems, 3 minutes each.

Measured:

- Predictions: before each answer to a template the student answered before, felab's predicted
  chance of a right first try (quiz/next_answer.py: skill on the template's concepts × FSRS memory
  of them, read from the site's records before the answer, the records /instructor/ replays),
  against the first try being right without a hint as the site recorded it. Beside it, two other
  predictors of the same answers: FSRS's retrievability of the template's own schedule alone (what
  the site read before; quiz.scheduling.retrievability, fractional days), and the oracle, the
  student's true chance from the model above, which no predictor can beat on average: what the
  class allows. Log loss (predictions clipped to [1e−4, 1 − 1e−4], as the FSRS benchmark does),
  AUC, and calibration in ten bins: the measures /instructor/ shows for the real class
  (quiz/recall_calibration.py). Each for all students, the fit students (fit_student: numbers
  0, 1, 4, 5, …, named before any number was chosen) and the held-out rest.
- Mastery: at the end, for every student-lesson pair practised, felab's level against true mastery,
  decided from the known model before running: the lowest chance, over the lesson's templates, of a
  right first try at that moment is at least 0.8. Agreement = pairs where "Mastered" and true mastery
  say the same; beside it Cohen's κ, since most pairs are not mastered and agreement alone would
  reward a level that never says Mastered. Beside the site's rule, two readings of felab's
  predicted chance at the end (its lowest over the lesson's templates): added to the rule, and alone.
- The planted unnamed mistakes: for each of PLANTED, its template's largest unnamed group as
  /instructor/ groups the class's wrong first tries (bench/learning_mistakes.py's ``surfaced``), its
  share, whether it is the planted slip, and how many of the five surface.

Floors: AUC ≥ 0.75, log loss ≤ 0.40, agreement ≥ 85%.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

AUC_FLOOR = 0.75
LOG_LOSS_FLOOR = 0.40
AGREEMENT_FLOOR = 0.85
TRUE_MASTERY = 0.8
QUICK = (6, 2)  # students, weeks: --quick, which tests/quiz/test_bench_learning.py runs
START = datetime(2026, 3, 2, tzinfo=UTC)
# Template, factor and what it is: the unnamed slips "unnamed" students make.
PLANTED = (
    ("l05-kv-per-conversation", 2.0, "2× (both K and V counted twice)"),
    ("l04-quant-ceiling", 0.5, "½ (the size counted at 2× the bits)"),
    ("l09-cost-per-1k", 1000.0, "1,000× (per million read as per thousand)"),
    ("l12-moe-memory", 1 / 3, "⅓"),
    ("l15-serverless-month", 12.0, "12× (a year for a month)"),
)


@dataclass
class Student:
    number: int
    named: bool  # makes named mistakes (else the planted unnamed ones)
    skill: dict[str, float]
    stability: dict[str, float] = field(default_factory=dict)
    last_used: dict[str, datetime] = field(default_factory=dict)
    lessons_opened: set[int] = field(default_factory=set)

    def recall(self, concept: str, now: datetime) -> float:
        if concept not in self.stability:
            return 0.0
        days = (now - self.last_used[concept]).total_seconds() / 86400
        return math.exp(-days / self.stability[concept])

    def p_concept(self, concept: str, now: datetime) -> float:
        return self.skill[concept] * (0.4 + 0.6 * self.recall(concept, now))

    def p_right(self, template_concepts: tuple[str, ...], now: datetime) -> float:
        return math.prod(self.p_concept(c, now) for c in template_concepts)

    def open_lesson(self, lesson_concepts: set[str], now: datetime) -> None:
        for concept in lesson_concepts:
            if concept not in self.stability:
                self.stability[concept], self.last_used[concept] = 1.5, now

    def used(self, template_concepts: tuple[str, ...], right: bool, now: datetime) -> None:
        for concept in template_concepts:
            m = self.recall(concept, now)
            old = self.stability.get(concept, 1.0)
            self.stability[concept] = old * (1.3 + 2 * (1 - m)) if right else max(1.0, 0.6 * old)
            self.last_used[concept] = now


def new_students(count: int, rng: random.Random) -> list[Student]:
    from felab_sim.engine.problems.concepts import CONCEPT_SLUGS

    ease = {concept: rng.gauss(0, 0.6) for concept in CONCEPT_SLUGS}
    students = []
    for number in range(count):
        ability = rng.gauss(1.6, 0.9)
        skill = {c: 1 / (1 + math.exp(-(ability + ease[c] + rng.gauss(0, 0.5)))) for c in CONCEPT_SLUGS}
        students.append(Student(number, named=number % 2 == 0, skill=skill))
    return students


@contextmanager
def simulated_clock(start: datetime) -> Iterator[list[datetime]]:
    """quiz.clock.now reads the returned one-item list, which the caller moves."""
    from quiz import clock

    current = [start]
    real = clock.now
    clock.now = lambda: current[0]
    try:
        yield current
    finally:
        clock.now = real


@dataclass
class Results:
    predictions: list[tuple[float, bool]] = field(default_factory=list)  # FSRS's, read off the schedules
    pairs: list[tuple[int, int, bool, bool]] = field(default_factory=list)  # student, lesson, felab, true
    attempts: int = 0
    seconds: float = 0.0
    # By attempt id: the student, the true chance of a right first try (the oracle) and whether it was.
    truth: dict[int, tuple[int, float, bool]] = field(default_factory=dict)
    felab: list = field(default_factory=list)  # quiz.next_answer.Prediction, ref the attempt's id
    misgraded: int = 0  # first tries the student meant right that the site graded otherwise
    # By (student, lesson) at the end: felab's lowest predicted chance over the lesson's templates.
    lowest_chance: dict[tuple[int, int], float] = field(default_factory=dict)


def simulate(students: int, weeks: int, seed: int) -> Results:
    """Run the class on the database Django is set up with (the bundled lessons imported)."""
    from felab_sim.engine.problems import concepts
    from lessons.models import PracticeTemplate
    from quiz import next_answer, practice_stats, practice_tries, recall_calibration, scheduling
    from quiz.learners import Learner
    from quiz.models import PracticeAttempt, PracticeState

    rng = random.Random(seed)
    templates = list(
        PracticeTemplate.objects.published().select_related("lesson")
        .order_by("lesson__order", "lesson__number", "order", "slug")
    )  # fmt: skip
    by_id = {t.pk: t for t in templates}
    needs = {t.pk: concepts.of_template(t.slug) for t in templates}
    lesson_concepts: dict[int, set[str]] = {}
    for t in templates:
        lesson_concepts.setdefault(t.lesson_id, set()).update(needs[t.pk])
    planted = {slug: factor for slug, factor, _ in PLANTED}
    class_ = new_students(students, rng)
    results = Results()
    began = time.perf_counter()
    with simulated_clock(START) as now:
        for day in range(weeks * 7):
            for student in class_:
                if rng.random() >= 0.5:
                    continue
                now[0] = START + timedelta(days=day, hours=rng.uniform(8, 22))
                learner = Learner(anonymous_id=f"bench-{seed}-{student.number}")
                for _ in range(rng.randint(6, 14)):
                    template = _pick(learner, templates, by_id, now[0], PracticeState)
                    if template is None:
                        break
                    if template.lesson_id not in student.lessons_opened:
                        student.lessons_opened.add(template.lesson_id)
                        student.open_lesson(lesson_concepts[template.lesson_id], now[0])
                    state = PracticeState.objects.for_learner(learner).filter(template=template).first()
                    p = student.p_right(needs[template.pk], now[0])
                    right, attempt = _answer(student, template, needs[template.pk], p, planted, rng, learner,
                                             now[0], practice_tries)  # fmt: skip
                    results.truth[attempt.pk] = (student.number, p, right)
                    results.misgraded += right and attempt.first_verdict != "right"
                    if state is not None:
                        predicted = scheduling.retrievability(state.fsrs_card, now[0])
                        if predicted is not None:
                            results.predictions.append((predicted, right))
                    student.used(needs[template.pk], right, now[0])
                    results.attempts += 1
                    now[0] += timedelta(minutes=3)
        predictor = next_answer.Predictor()
        results.felab = recall_calibration.class_predictions(
            PracticeAttempt.objects.all(), read_at_most=10**9, predictor=predictor
        )
        end = START + timedelta(days=weeks * 7)
        now[0] = end
        for student in class_:
            learner = Learner(anonymous_id=f"bench-{seed}-{student.number}")
            records = practice_stats.learner_records(learner, end)
            for lesson_id in student.lessons_opened:
                lesson_templates = [t for t in templates if t.lesson_id == lesson_id]
                truly = min(student.p_right(needs[t.pk], end) for t in lesson_templates) >= TRUE_MASTERY
                felab = records.mastery_of(lesson_id).level == "mastered"
                results.pairs.append((student.number, lesson_id, felab, truly))
                results.lowest_chance[(student.number, lesson_id)] = min(
                    math.prod(predictor.skill_and_memory((None, learner.anonymous_id), t.slug, end))
                    for t in lesson_templates
                )
    results.seconds = time.perf_counter() - began
    return results


def _pick(learner, templates, by_id, now, PracticeState):
    """What a student practises next: the longest overdue template the site has due, else the
    next one not tried yet, in course order."""
    due = PracticeState.objects.for_learner(learner).due(now).values_list("template_id", flat=True).first()
    if due is not None and due in by_id:
        return by_id[due]
    tried = set(PracticeState.objects.for_learner(learner).values_list("template_id", flat=True))
    return next((t for t in templates if t.pk not in tried), None)


def _answer(student, template, needs, p, planted, rng, learner, now, practice_tries):
    """The student's first try (and maybe a second, or Show me), recorded as the page records
    them; whether the first try was right, and the attempt."""
    seed = rng.randint(1, 1_000_000)
    problem = template.problem(seed)
    right = rng.random() < p
    value = _typed_value(student, template, problem, needs, right, planted, rng, now)
    attempt = _record(problem, template, learner, value, practice_tries)
    if not right:
        if rng.random() < 0.5:
            practice_tries.show_solution(learner, template.pk, seed, problem.answer, 0)
        else:
            again = rng.random() < p
            value = _typed_value(student, template, problem, needs, again, planted, rng, now)
            _record(problem, template, learner, value, practice_tries)
    return right, attempt


def _typed_value(student, template, problem, needs, right, planted, rng, now) -> float:
    from felab_sim.engine.problems import concepts

    if right:
        # Within a third of the template's tolerance (3% at most): some templates allow 1%, and a
        # right answer must be graded right, not close.
        off = min(0.03, problem.spec.tolerance / 3)
        return problem.answer * rng.uniform(1 - off, 1 + off)
    weights = [1 - student.p_concept(c, now) for c in needs]
    failed = rng.choices(needs, weights=weights)[0] if sum(weights) > 0 else needs[0]
    if student.named:
        offered = [m for m in problem.mistakes if failed in concepts.of_mistake(template.slug, m.slug)]
        if offered and rng.random() < 0.8:
            return rng.choice(offered).value
    elif template.slug in planted and rng.random() < 0.7:
        return problem.answer * planted[template.slug]
    factor = max(1.5, math.exp(abs(rng.gauss(0, 1.2))))
    return problem.answer * (factor if rng.random() < 0.5 else 1 / factor)


def _record(problem, template, learner, value, practice_tries):
    graded = problem.grade(value)
    return practice_tries.record_try(
        learner,
        template.pk,
        problem.seed,
        f"{value:.6g}",
        value,
        problem.answer,
        graded.checked,
        None,
        mistake=graded.mistake.slug if graded.mistake else "",
    )[0]


def planted_mistakes_section(planted: tuple = PLANTED) -> list[str]:
    """Issue 50 step 1 on this class: for each planted unnamed mistake, its template's largest
    unnamed group as /instructor/ reads the class's answers (bench/learning_mistakes.py's
    ``surfaced``), and how many surface as that group."""
    import learning_mistakes

    rows = learning_mistakes.surfaced([(slug, factor) for slug, factor, _ in planted])
    what = {slug: words for slug, _, words in planted}
    lines = [
        'Planted unnamed mistakes (the "unnamed" students\' slips), read as /instructor/ reads them:',
        "",
        "| template | planted | largest unnamed group | its share | wrong first tries read | surfaced |",
        "| --- | --- | --- | ---: | ---: | --- |",
    ]
    for row in rows:
        lines.append(f"| {row.template} | {what[row.template]} | {row.largest} | {row.share:.0%} | {row.wrong} "
                     f"| {'yes' if row.surfaced else 'no'} |")  # fmt: skip
    hits = sum(row.surfaced for row in rows)
    lines += ["", f"{hits} of {len(rows)} planted unnamed mistakes surface as their template's largest group "
                  f"(target: at least {learning_mistakes.TARGET})."]  # fmt: skip
    return lines


def kappa(pairs: list[tuple[int, int, bool, bool]]) -> float:
    """Cohen's κ of felab's Mastered against true mastery: agreement beyond what the two shares
    alone give (most pairs are not mastered, so agreement alone flatters a "never Mastered")."""
    n = len(pairs)
    observed = sum(f == t for _, _, f, t in pairs) / n
    felab, truly = sum(f for _, _, f, _ in pairs) / n, sum(t for _, _, _, t in pairs) / n
    chance = felab * truly + (1 - felab) * (1 - truly)
    return (observed - chance) / (1 - chance) if chance < 1 else float("nan")


def fit_student(number: int) -> bool:
    """The students any fitted number would be fitted on, named before any run: numbers 0, 1, 4, 5,
    8, 9, … (two in four, so both named and unnamed mistake makers); the rest are held out."""
    return number % 4 < 2


def scored(results: Results, which: str = "all") -> dict[str, list[tuple[float, bool]]]:
    """(prediction, right at the first try as the site recorded it) of each predictor over the
    answers felab predicts, for all students, the fit ones or the held-out ones."""
    found: dict[str, list[tuple[float, bool]]] = {"fsrs": [], "felab": [], "oracle": []}
    for prediction in results.felab:
        student, true_chance, _ = results.truth[prediction.ref]
        if which != "all" and fit_student(student) != (which == "fit"):
            continue
        found["fsrs"].append((prediction.recall, prediction.right))
        found["felab"].append((prediction.chance, prediction.right))
        found["oracle"].append((true_chance, prediction.right))
    return found


def mastery_rules(results: Results) -> dict[str, list[tuple[int, int, bool, bool]]]:
    """(student, lesson, Mastered, truly mastered) under the site's rule and two readings of felab's
    predicted chance at the end, the lowest over the lesson's templates: beside the rule, and alone."""
    low = results.lowest_chance
    return {
        "the site's rule (issue 50)": results.pairs,
        f"the rule, and every template predicted ≥ {TRUE_MASTERY}": [
            (s, lesson, f and low[(s, lesson)] >= TRUE_MASTERY, t) for s, lesson, f, t in results.pairs
        ],
        f"every template predicted ≥ {TRUE_MASTERY}, alone": [
            (s, lesson, low[(s, lesson)] >= TRUE_MASTERY, t) for s, lesson, _, t in results.pairs
        ],
    }


def report(results: Results) -> tuple[list[str], dict[str, float]]:
    from quiz.recall_calibration import auc, bins, log_loss

    everyone = scored(results)
    predictions = everyone["felab"]
    figures = {
        "answers": results.attempts,
        "predictions": len(predictions),
        "auc": auc(predictions),
        "log_loss": log_loss(predictions),
        "base_rate": sum(y for _, y in predictions) / len(predictions),
        "agreement": sum(f == t for _, _, f, t in results.pairs) / len(results.pairs),
        "pairs": len(results.pairs),
        "kappa": kappa(results.pairs),
        "oracle_auc": auc(everyone["oracle"]),
        "oracle_log_loss": log_loss(everyone["oracle"]),
        "fsrs_auc": auc(everyone["fsrs"]),
        "fsrs_log_loss": log_loss(everyone["fsrs"]),
        "misgraded": results.misgraded,
    }
    lines = [
        f"{results.attempts} answers; {len(predictions)} with a prediction "
        f"({figures['base_rate']:.0%} right at the first try); {results.seconds:.0f} s; "
        f"{results.misgraded} first tries meant right that the site graded otherwise",
        "",
        "| measure | value | floor |",
        "| --- | ---: | ---: |",
        f"| AUC of felab's prediction | {figures['auc']:.3f} | ≥ {AUC_FLOOR} |",
        f"| log loss | {figures['log_loss']:.3f} | ≤ {LOG_LOSS_FLOOR} |",
        f"| mastery agrees with true mastery | {figures['agreement']:.1%} of {len(results.pairs)} pairs "
        f"| ≥ {AGREEMENT_FLOOR:.0%} |",
        f"| the same, beyond chance (Cohen's κ) | {figures['kappa']:.2f} | |",
        "",
        "| predictor | students | AUC | log loss |",
        "| --- | --- | ---: | ---: |",
    ]
    for which, words in (("all", "all"), ("fit", "fit (0, 1, 4, 5, …)"), ("held", "held out")):
        split = everyone if which == "all" else scored(results, which)
        for name, label in (("fsrs", "FSRS's recall alone"), ("felab", "felab: skill × memory"),
                            ("oracle", "the true chance (oracle)")):  # fmt: skip
            lines.append(f"| {label} | {words} ({len(split[name])}) | {auc(split[name]):.3f} "
                         f"| {log_loss(split[name]):.3f} |")  # fmt: skip
    lines += [
        "",
        "| predicted | answers | felab's mean | share right | the oracle's mean there |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    true_in_bin: list[list[float]] = [[] for _ in range(10)]
    for (chance, _), (true_chance, _) in zip(predictions, everyone["oracle"], strict=True):
        true_in_bin[min(int(chance * 10), 9)].append(true_chance)
    for found, inside in zip(bins(predictions), true_in_bin, strict=True):
        lines.append(
            f"| {found.span} | {found.answers} | {found.mean_predicted:.3f} | {found.share_right:.3f} "
            f"| {sum(inside) / len(inside):.3f} |"
            if found.answers
            else f"| {found.span} | 0 | – | – | – |"
        )
    lines += [
        "",
        "| Mastered when | agrees | κ | Mastered, truly | Mastered, not truly | not, truly | not, not truly |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for rule, pairs in mastery_rules(results).items():
        both = {(f, t): sum(1 for _, _, a, b in pairs if (a, b) == (f, t)) for f in (0, 1) for t in (0, 1)}
        agree = sum(f == t for _, _, f, t in pairs) / len(pairs)
        lines.append(f"| {rule} | {agree:.1%} | {kappa(pairs):.2f} | {both[(1, 1)]} | {both[(1, 0)]} "
                     f"| {both[(0, 1)]} | {both[(0, 0)]} |")  # fmt: skip
    lines += ["", *planted_mistakes_section()]
    return lines, figures


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--weeks", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="6 students for 2 weeks: a test runs it")
    args = parser.parse_args()
    if args.quick:
        args.students, args.weeks = QUICK
    scratch = Path(tempfile.mkdtemp(prefix="felab-bench-learning-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DATABASE_URL"] = f"sqlite:///{scratch / 'bench.sqlite3'}"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("import_lessons", verbosity=0)
    results = simulate(args.students, args.weeks, args.seed)
    lines, figures = report(results)
    print(f"bench_learning: {args.students} students, {args.weeks} weeks, seed {args.seed}")
    print("\n".join(lines))
    held = (
        figures["auc"] >= AUC_FLOOR
        and figures["log_loss"] <= LOG_LOSS_FLOOR
        and figures["agreement"] >= AGREEMENT_FLOOR
    )
    print("floors held" if held else "a floor missed")
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main())
