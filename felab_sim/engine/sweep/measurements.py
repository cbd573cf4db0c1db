"""The course's published measurements that several cards quote: quoted, never computed.

One entry per run, its numbers by name and where they were published. The practice server's run
lives in ``course_run.py`` (the /sim/ page draws it) and is read from there. Pure Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .course_run import PUBLISHED


@dataclass(frozen=True)
class Measurement:
    name: str
    values: Mapping[str, float]
    source: str


MEASUREMENTS: tuple[Measurement, ...] = (
    Measurement(
        "l01-mac-ollama-8b",
        {
            "short_ttft_p50_ms": 145,
            "short_ttft_p95_ms": 190,
            "short_itl_ms": 22.4,
            "short_tok_s": 44.6,
            "long_ttft_p50_ms": 4210,
            "long_ttft_p95_ms": 4480,
            "long_itl_ms": 24.1,
            "long_tok_s": 41.5,
        },
        "lesson 01's bench_ttft.py on the course's Mac, Ollama serving llama3.1:8b (Q4_K_M, 4.9 GB): "
        "a 12-token and an 8,000-token prompt, 10 runs after one warm-up",
    ),
    Measurement(
        "l04-m4-max-llama8b",
        {
            "q8_0_tg128": 52,
            "q4_k_m_tg128": 86,
            "q3_k_m_tg128": 98,
            "q8_0_pp512": 1150,
            "q4_k_m_pp512": 1050,
            "q3_k_m_pp512": 980,
        },
        "lesson 04's llama-bench table (`--demo`) on an M4 Max with 546 GB/s: tg128 and pp512 in tokens "
        "per second for Llama 3.1 8B's Q8_0, Q4_K_M and Q3_K_M files",
    ),
    Measurement(
        "l06-stable-first",
        {"first_ms": 740, "rest_p50_ms": 36, "variable_first_ms": 744, "variable_rest_p50_ms": 712},
        "lesson 06's prefix_bench.py table (its target is not named): first call, then the median of "
        "the other 11, shared preamble first and variable part first",
    ),
    Measurement(
        "l13-llamacpp-spec",
        {
            "baseline_structured_tok_s": 62.0,
            "baseline_prose_tok_s": 61.5,
            "spec_structured_tok_s": 118.0,
            "spec_prose_tok_s": 70.0,
        },
        "lesson 13's llama.cpp run (its machine is not named): Llama 3.1 8B Q4_K_M, with and without "
        "a Llama 3.2 1B draft",
    ),
    Measurement(
        "practice-run",
        {f"c{row['conc']}_{key}": value for row in PUBLISHED for key, value in row.items() if key != "conc"},
        # Students read this line beside the figures, so it names the run, not the file.
        "the course's published run of lesson 03's practice server (8 slots, 128 max tokens)",
    ),
)

_BY_NAME = {measurement.name: measurement for measurement in MEASUREMENTS}


def measurement(name: str) -> Measurement:
    """The run called ``name``; KeyError lists the names there are."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no measurement {name!r} (there are {', '.join(_BY_NAME)})") from None
