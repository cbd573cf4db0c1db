from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lessons.content_files import CONTENT_DIR, ContentError, import_content


class Command(BaseCommand):
    help = "Load lesson content from YAML files (idempotent: unchanged content writes nothing)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dir", type=Path, default=CONTENT_DIR, help="content directory")

    def handle(self, *args, dir: Path, **options) -> None:
        try:
            report = import_content(dir)
        except ContentError as error:
            raise CommandError(str(error)) from error
        for label in report.created:
            self.stdout.write(f"created {label}")
        for label in report.updated:
            self.stdout.write(f"updated {label}")
        self.stdout.write(self.style.SUCCESS(f"Lesson content from {dir}: {report.summary()}."))
