"""The docs stay true: the generated reference is current, every doc the code cites exists, and
the two documents a newcomer reads first stay short enough to read.

Code cites a document as docs/NAME.md and a section of it as docs/NAME.md, "Heading" or
docs/NAME.md ("Heading") (a comment may wrap between the two). Lessons are cited by number,
never by a file outside the repository. No database.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from felab_sim.engine.course import reference

ROOT = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve()
SKIP_DIRS = {".venv", ".git", "node_modules", "vendor", "staticfiles", "__pycache__", ".pytest_cache"}
SUFFIXES = {".py", ".html", ".js", ".css", ".txt", ".toml", ".yaml", ".yml", ".sh", ".cfg", ".conf", ".md"}
NAMED = {"Makefile", "run"}  # .ci/run

# A line break inside a comment or docstring, with the next line's comment marker.
WRAP = re.compile(r"[ \t]*\n[ \t]*(?:#+|//|\*)?[ \t]*")
CITATION = re.compile(r'docs/([\w-]+\.md)(?:\'s)?(?:(?:,\s*|\s*\(\s*)"([^"\n]+)")?')
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)


def source_files() -> list[Path]:
    found = []
    for path in ROOT.rglob("*"):
        if any(part in SKIP_DIRS for part in path.relative_to(ROOT).parts):
            continue
        if path.is_file() and path != THIS and (path.suffix in SUFFIXES or path.name in NAMED):
            found.append(path)
    return sorted(found)


def citations() -> list[tuple[str, str, str | None]]:
    """(where, doc file, section or None) for every doc citation in the repository's text."""
    found = []
    for path in source_files():
        text = WRAP.sub(" ", path.read_text(errors="replace"))
        for match in CITATION.finditer(text):
            found.append((str(path.relative_to(ROOT)), match.group(1), match.group(2)))
    return found


def headings(doc: Path) -> set[str]:
    return {heading.strip() for heading in HEADING.findall(doc.read_text())}


def test_docs_calculators_is_the_generated_reference():
    assert (ROOT / "docs" / "calculators.md").read_text() == reference.markdown(), f"run: {reference.COMMAND}"


def test_the_calc_command_prints_the_reference():
    printed = subprocess.run(
        [sys.executable, "manage.py", "calc", "--reference"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert printed == reference.markdown()


def test_the_scan_finds_the_citations_it_checks():
    cited = citations()
    assert ("felab_sim/charts/svgchart.py", "architecture.md", "The engine boundary") in cited
    assert any(doc == "deploy.md" and section for _, doc, section in cited)


@pytest.mark.parametrize(("where", "doc", "section"), sorted(set(citations()), key=str), ids=str)
def test_every_cited_doc_and_section_exists(where, doc, section):
    path = ROOT / "docs" / doc
    assert path.is_file(), f"{where} cites docs/{doc}, which does not exist"
    if section is not None:
        assert section in headings(path), f'{where} cites docs/{doc}, "{section}": no such heading'


def test_no_citation_of_a_file_outside_the_repository():
    outside = "COURSE" + ".md"
    citing = [
        str(path.relative_to(ROOT)) for path in source_files() if outside in path.read_text(errors="replace")
    ]
    assert citing == [], "cite the lesson by number instead"


# The course's formula ids (F1 to F36) mean nothing without that outside file; F16 the
# quantization format is not one.
FORMULA_ID = re.compile(r"\bF(?:[1-9]|[1-3][0-9])\b(?! \(16 bits\))")


def test_no_formula_id_of_a_file_outside_the_repository():
    code = [path for path in source_files() if path.suffix in {".py", ".html", ".js"} or path.name in NAMED]
    citing = [
        f"{path.relative_to(ROOT)}: {match.group()}"
        for path in code
        for match in FORMULA_ID.finditer(path.read_text(errors="replace"))
    ]
    assert citing == [], "cite the lesson's formula by lesson number instead"


def test_readme_is_short_and_starts_with_the_two_commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 120
    first = "\n".join(lines[:40])
    assert "make run" in first and "make test" in first


def test_architecture_is_short():
    assert len((ROOT / "docs" / "architecture.md").read_text().splitlines()) <= 250


def test_ci_runs_make_test():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
