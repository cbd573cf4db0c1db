from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lessons.content_format import CONTENT_DIR
from lessons.content_import import Conflict, ContentError, import_content


class Command(BaseCommand):
    help = (
        "Load lesson content from YAML files: create what is missing, update what still holds the "
        "last import's values, and report (never overwrite) what was edited in the database since."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dir", type=Path, default=CONTENT_DIR, help="content directory")
        parser.add_argument(
            "--force",
            action="store_true",
            help="take the files' version even of fields edited in the database (those edits are lost)",
        )

    def handle(self, *args, dir: Path, force: bool, **options) -> None:
        try:
            report = import_content(dir, force=force)
        except ContentError as error:
            raise CommandError(str(error)) from error
        # A first set-up creates every object (hundreds): the summary line counts them; -v 2 names each.
        if options["verbosity"] >= 2:
            for label in report.created:
                self.stdout.write(f"created {label}")
        for label in report.updated:
            self.stdout.write(f"updated {label}")
        for conflict in report.conflicts:
            self.stdout.write(self.style.WARNING(_describe(conflict)))
        self.stdout.write(self.style.SUCCESS(f"Lesson content from {dir}: {report.summary()}."))
        if report.conflicts:
            self.stdout.write(
                self.style.WARNING(
                    "Each conflict kept the database's version. To keep the edits in git, run "
                    "`manage.py export_lessons` and commit the files; to discard them, run "
                    "`manage.py import_lessons --force`."
                )
            )


def _describe(conflict: Conflict) -> str:
    return (
        f"conflict: {conflict.label}, field '{conflict.field}': edited in the database since the "
        f"last import, and the files say otherwise; kept the database's version.\n"
        + "\n".join(f"  {line}" for line in conflict.diff())
    )
