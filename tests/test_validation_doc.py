"""docs/benchmarks.md's validation table is what bench/bench_validation.py prints today."""

from pathlib import Path

from felab_sim.engine.validation import markdown_row, validation_points

ROOT = Path(__file__).resolve().parent.parent


def test_the_documented_validation_table_is_the_benchmarks_own():
    documented = (ROOT / "docs" / "benchmarks.md").read_text()
    section = documented[documented.index("## Predicted from measurements") :]
    rows = [markdown_row(point) for point in validation_points()]
    assert len(rows) == 22
    for row in rows:
        assert row in section, row
