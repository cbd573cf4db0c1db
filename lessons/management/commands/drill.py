"""`manage.py drill --list [--json]` lists the practice templates; `drill SLUG --seed N [--json]`
prints the problem that seed draws, with its answer, steps and named mistakes; `--answer TEXT`
grades a typed answer as the site does (docs/practice.md, "Practice problems"); `drill [SLUG]
--unnamed [--latest N] [--json]` groups the class's unexplained wrong first tries as /instructor/
does, reading as many a template (``--latest`` reads more), and prints every group, those of one
answer and beyond the page's three included (docs/practice.md, "Mistakes nobody named")."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from felab_sim.engine.problems import unnamed_mistakes
from felab_sim.engine.problems.answers import AnswerError, close_band
from felab_sim.engine.problems.drill_specs import DrillError
from felab_sim.engine.problems.unnamed_mistakes import describe
from lessons import class_mistakes
from lessons.models import PracticeTemplate


class Command(BaseCommand):
    help = "List the practice templates, or print the problem a seed draws from one."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", nargs="?", help="the template's slug")
        parser.add_argument("--seed", type=int, default=1, help="the draw (default 1)")
        parser.add_argument("--list", action="store_true", help="list every template")
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.add_argument("--answer", help="grade this typed answer as the problem page does")
        parser.add_argument(
            "--unnamed",
            action="store_true",
            help="group the class's wrong first tries no named mistake explains, as /instructor/ does",
        )
        parser.add_argument(
            "--latest",
            type=int,
            help=f"with --unnamed: read the latest N a template (default {unnamed_mistakes.PAGE_TRIES}, as"
            f" /instructor/; at most {unnamed_mistakes.MAX_TRIES})",
        )

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
        if options["unnamed"]:
            latest = options["latest"]
            if latest is not None and not (
                isinstance(latest, int) and 1 <= latest <= unnamed_mistakes.MAX_TRIES
            ):
                raise CommandError(f"--latest takes 1 to {unnamed_mistakes.MAX_TRIES}")
            self._unnamed(
                list(templates.filter(slug=slug) if slug else templates),
                slug,
                bool(options["json"]),
                latest if isinstance(latest, int) else None,
            )
            return
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

    def _unnamed(
        self, templates: list[PracticeTemplate], slug: object, as_json: bool, latest: int | None
    ) -> None:
        if slug and not templates:
            raise CommandError(f"{str(slug)[:60]!r} is not a practice template; drill --list lists them")
        groupings = class_mistakes.unnamed_groupings(templates, latest or unnamed_mistakes.PAGE_TRIES)
        if as_json:
            self.stdout.write(json.dumps([g.as_json() for g in groupings], indent=2, ensure_ascii=False))
            return
        if not groupings:
            self.stdout.write("No wrong first tries yet.")
        for grouping in groupings:
            for line in describe(grouping):
                self.stdout.write(line)

    def _grade(self, problem, typed: str, as_json: bool) -> None:
        try:
            read = problem.read_typed(typed)
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
