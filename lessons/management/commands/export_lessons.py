from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from lessons.content_export import export_content
from lessons.content_format import CONTENT_DIR


class Command(BaseCommand):
    help = "Write all lesson content from the database to YAML files, to keep in git."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dir", type=Path, default=CONTENT_DIR, help="content directory")

    def handle(self, *args, dir: Path, **options) -> None:
        written = export_content(dir)
        for path in written:
            self.stdout.write(f"wrote {path}")
        self.stdout.write(self.style.SUCCESS(f"Exported {len(written)} files to {dir}."))
