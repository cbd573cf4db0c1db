"""The course's published run against lesson 03's practice server: quoted, never computed.

Measured with the server's default rules and replies of at most 128 tokens; the simulator's
defaults reproduce it (docs/architecture.md, "The practice server and the sweep"). The /sim/
page and the sweep's chart show it beside the model only at those settings. Pure Python.
"""

from __future__ import annotations

from .metrics import LevelResult, SweepResult
from .sweep_params import ServerParams, SweepParams

COURSE_RUN_SERVER = ServerParams()
COURSE_RUN_MAX_TOKENS = 128
COURSE_RUN_SETTINGS = "8 slots, 128 max tokens"
PUBLISHED = (
    {"conc": 1, "agg_tok_s": 54.1, "user_tok_s": 54.9, "ttft_p50_ms": 25.4, "ttft_p95_ms": 27.4},
    {"conc": 8, "agg_tok_s": 275.1, "user_tok_s": 38.9, "ttft_p50_ms": 26.3, "ttft_p95_ms": 41.4},
    {"conc": 16, "agg_tok_s": 294.3, "user_tok_s": 38.9, "ttft_p50_ms": 2776.3, "ttft_p95_ms": 3357.0},
)


def published_for(params: SweepParams) -> list[dict[str, float]]:
    """The course's published levels that these settings also sweep, and only when the settings
    are the ones the course measured at: its numbers say nothing about a server with 16 slots.

    The client-side overheads are left out of the comparison: they model the measurement, and
    the course's run is that measurement.
    """
    if params.server != COURSE_RUN_SERVER or params.max_tokens != COURSE_RUN_MAX_TOKENS:
        return []
    return [row for row in PUBLISHED if row["conc"] in params.levels]


def published_beside(result: SweepResult) -> list[tuple[LevelResult, dict[str, float] | None]]:
    """Each simulated level with the course's published numbers for it, when it has them."""
    published = {row["conc"]: row for row in published_for(result.params)}
    return [(level, published.get(level.conc)) for level in result.levels]
