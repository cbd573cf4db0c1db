"""docs/benchmarks.md's validation tables are what bench/bench_validation.py prints today."""

from pathlib import Path

from felab_sim.engine.serving.serving_runs import runs
from felab_sim.engine.serving.serving_validation import run_row, serving_points, summaries, summary_row
from felab_sim.engine.serving.validation import markdown_row, validation_points

ROOT = Path(__file__).resolve().parent.parent


def documented() -> str:
    return (ROOT / "docs" / "benchmarks.md").read_text()


def test_the_documented_validation_table_is_the_benchmarks_own():
    text = documented()
    section = text[text.index("## Predicted from measurements") :]
    rows = [markdown_row(point) for point in validation_points()]
    assert len(rows) == 22
    for row in rows:
        assert row in section, row


def test_the_documented_serving_table_is_the_benchmarks_own():
    text = documented()
    section = text[text.index("<!-- serving-table -->") :]
    shown = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    points = serving_points()
    expected = [summary_row(summary) for summary in summaries()]
    expected += [run_row(run, points) for run in runs() if any(p.run is run for p in points)]
    assert len(expected) == 12 + 92
    # Every row the code prints, and no other row (the two headers aside).
    assert [line for line in shown if not line.startswith(("| group |", "| run |"))] == expected
