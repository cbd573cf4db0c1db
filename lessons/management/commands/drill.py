"""`manage.py drill --list [--json]` lists the practice templates; `drill SLUG --seed N [--json]`
prints the problem that seed draws, with its answer, steps and named mistakes; `--answer TEXT`
grades a typed answer as the site does (docs/practice.md, "Practice problems")."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from felab_sim.engine.answers import AnswerError, close_band, read_answer
from felab_sim.engine.drills import DrillError
from lessons.models import PracticeTemplate


class Command(BaseCommand):
    help = "List the practice templates, or print the problem a seed draws from one."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", nargs="?", help="the template's slug")
        parser.add_argument("--seed", type=int, default=1, help="the draw (default 1)")
        parser.add_argument("--list", action="store_true", help="list every template")
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.add_argument("--answer", help="grade this typed answer as the problem page does")

    def handle(self, *args: object, **options: object) -> None:
        templates = PracticeTemplate.objects.select_related("lesson").order_by(
            "lesson__number", "order", "slug"
        )
        if options["list"]:
            rows = [
                {"template": t.slug, "lesson": t.lesson.number, "title": t.title, "calculator": t.calculator,
                 "output": t.output, "published": t.published}
                for t in templates
            ]  # fmt: skip
            if options["json"]:
                self.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False))
            else:
                for row in rows:
                    self.stdout.write(f"{row['lesson']:02d}  {row['template']}  {row['title']}")
            return
        slug = options["slug"]
        if not slug:
            raise CommandError("name a template (drill --list lists them)")
        template = templates.filter(slug=slug).first()
        if template is None:
            raise CommandError(f"{str(slug)[:60]!r} is not a practice template; drill --list lists them")
        seed = options["seed"]
        if not isinstance(seed, int) or seed < 0:
            raise CommandError("--seed must be a whole number from 0")
        try:
            problem = template.problem(seed)
        except DrillError as error:
            raise CommandError(f"{slug}: {error.message}") from None
        if options["answer"] is not None:
            self._grade(problem, str(options["answer"]), bool(options["json"]))
            return
        if options["json"]:
            self.stdout.write(json.dumps(problem.as_json(), indent=2, ensure_ascii=False))
        else:
            self.stdout.write(problem.question)
            self.stdout.write(f"Answer: {problem.answer_text}")

    def _grade(self, problem, typed: str, as_json: bool) -> None:
        try:
            read = read_answer(
                typed,
                problem.unit,
                above_zero=True,
                share=problem.share,
                right_as_typed=problem.right_as_typed(typed),
            )
        except AnswerError as error:
            raise CommandError(f"not counted: {error}") from None
        graded = problem.grade(read.value)
        if as_json:
            shown = {
                **graded.as_json(),
                "tolerance": problem.spec.tolerance,
                "close_within": close_band(problem.spec.tolerance),
                "read": {"value": read.value, "unit": problem.unit, "note": read.note},
                "answer": {"value": problem.answer, "unit": problem.unit},
            }
            self.stdout.write(json.dumps(shown, indent=2, ensure_ascii=False))
            return
        verdict = graded.checked.verdict.capitalize()
        self.stdout.write(f"{verdict}: {graded.checked.words}")
        if graded.mistake is not None:
            self.stdout.write(graded.mistake.says)
