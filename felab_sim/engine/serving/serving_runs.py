"""Published measured serving runs (engine/measured/serving_runs.csv) and which of them a fit may
see (engine/measured/serving_split.csv): the validation set for the engine's TTFT, TPOT and
throughput. engine/measured/README.md says where each group of rows came from and how it was run.

A run is one fixed-concurrency benchmark: ``concurrency`` requests in flight until
``request_count`` have finished, prompts and outputs of the stated lengths. The split was chosen
before any fit: a fit reads ``runs(group=FIT)`` only, and everything in ``runs(group=PREDICT)`` is
predicted. Pure Python: no Django.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

MEASURED = Path(__file__).resolve().parents[1] / "measured"
RUNS_FILE = MEASURED / "serving_runs.csv"
SPLIT_FILE = MEASURED / "serving_split.csv"
FIT, PREDICT = "fit", "predict"
MODEL_KINDS = ("dense", "MoE")


class ServingRunsError(ValueError):
    """A file that does not read as the format says: names the file, line and column."""


@dataclass(frozen=True)
class ServingRun:
    run_id: str
    source_group: str  # "inferencex" or "nim": the README's section for it
    engine: str
    engine_version: str
    image: str
    date: str  # the run's date (ISO) where its source records it, else ""
    model: str  # as the source names it
    model_kind: str  # "dense" or "MoE"
    total_params_b: float | None
    active_params_b: float | None
    gpu: str  # as the source names it
    gpus: int
    tp: int
    ep: int
    dp: int
    precision: str  # the weights'
    kv_precision: str  # "" where the source does not say
    input_len: int
    output_len: int
    length_distribution: str
    concurrency: int
    request_count: int | None  # None where the source does not say
    ttft_mean_ms: float
    ttft_median_ms: float | None
    tpot_mean_ms: float
    tpot_median_ms: float | None
    total_tok_s_per_gpu: float | None  # input and output tokens; None where not published
    output_tok_s_per_gpu: float
    felab_model: str  # felab's model preset of the same shape, "" if felab has none
    felab_gpu: str  # felab's hardware preset, "" if felab has none or the part is ambiguous
    launch: str  # how the server was started (script or method, with its commit)
    source: str  # the address the numbers were read at
    date_read: str


def _text(value: str) -> str:
    return value


def _required_text(value: str) -> str:
    if not value.strip():
        raise ValueError("is empty")
    return value


def _positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(f"{number} is not a positive integer")
    return number


def _optional_int(value: str) -> int | None:
    return None if value == "" else _positive_int(value)


def _positive_float(value: str) -> float:
    number = float(value)
    if not number > 0:
        raise ValueError(f"{number} is not above zero")
    return number


def _optional_float(value: str) -> float | None:
    return None if value == "" else _positive_float(value)


def _model_kind(value: str) -> str:
    if value not in MODEL_KINDS:
        raise ValueError(f"{value!r} is not one of {', '.join(MODEL_KINDS)}")
    return value


PARSERS: dict[str, Callable[[str], Any]] = {
    "run_id": _required_text,
    "source_group": _required_text,
    "engine": _required_text,
    "engine_version": _required_text,
    "image": _required_text,
    "date": _text,
    "model": _required_text,
    "model_kind": _model_kind,
    "total_params_b": _optional_float,
    "active_params_b": _optional_float,
    "gpu": _required_text,
    "gpus": _positive_int,
    "tp": _positive_int,
    "ep": _positive_int,
    "dp": _positive_int,
    "precision": _required_text,
    "kv_precision": _text,
    "input_len": _positive_int,
    "output_len": _positive_int,
    "length_distribution": _required_text,
    "concurrency": _positive_int,
    "request_count": _optional_int,
    "ttft_mean_ms": _positive_float,
    "ttft_median_ms": _optional_float,
    "tpot_mean_ms": _positive_float,
    "tpot_median_ms": _optional_float,
    "total_tok_s_per_gpu": _optional_float,
    "output_tok_s_per_gpu": _positive_float,
    "felab_model": _text,
    "felab_gpu": _text,
    "launch": _required_text,
    "source": _required_text,
    "date_read": _required_text,
}


def _rows(text: str, where: str, columns: Iterable[str]) -> list[tuple[int, dict[str, str]]]:
    reader = csv.DictReader(text.splitlines())
    header = reader.fieldnames or []
    missing = [name for name in columns if name not in header]
    unknown = [name for name in header if name not in columns]
    if missing or unknown:
        raise ServingRunsError(
            f"{where}, line 1: the header lacks {missing or 'nothing'} and has unknown {unknown or 'nothing'}"
        )
    rows = []
    for row in reader:
        if None in row or None in row.values():
            raise ServingRunsError(f"{where}, line {reader.line_num}: {len(header)} cells expected")
        rows.append((reader.line_num, row))
    return rows


def parse_runs(text: str, where: str = "serving_runs.csv") -> tuple[ServingRun, ...]:
    """Every row of the runs file, checked: a ServingRunsError names the line and column."""
    runs = []
    seen: set[str] = set()
    for line, row in _rows(text, where, PARSERS):
        values = {}
        for name, parse in PARSERS.items():
            try:
                values[name] = parse(row[name])
            except ValueError as error:
                raise ServingRunsError(f"{where}, line {line}, {name} {row[name]!r}: {error}") from None
        run = ServingRun(**values)
        if run.run_id in seen:
            raise ServingRunsError(f"{where}, line {line}: run_id {run.run_id!r} appears twice")
        # One server holds tp × dp GPUs; experts are spread over some of those, never more.
        if run.gpus != run.tp * run.dp or run.gpus % run.ep:
            raise ServingRunsError(
                f"{where}, line {line}: {run.gpus} GPUs do not hold TP {run.tp} × DP {run.dp} with EP {run.ep}"
            )
        seen.add(run.run_id)
        runs.append(run)
    return tuple(runs)


def parse_split(text: str, run_ids: Iterable[str], where: str = "serving_split.csv") -> dict[str, str]:
    """run_id → FIT or PREDICT, one line for every run and none for a run that does not exist."""
    known = set(run_ids)
    split: dict[str, str] = {}
    for line, row in _rows(text, where, ("run_id", "group")):
        run_id, group = row["run_id"], row["group"]
        if group not in (FIT, PREDICT):
            raise ServingRunsError(f"{where}, line {line}, group {group!r}: not {FIT!r} or {PREDICT!r}")
        if run_id not in known:
            raise ServingRunsError(f"{where}, line {line}: no run {run_id!r} in the runs file")
        if run_id in split:
            raise ServingRunsError(f"{where}, line {line}: run_id {run_id!r} appears twice")
        split[run_id] = group
    unsplit = sorted(known - set(split))
    if unsplit:
        raise ServingRunsError(f"{where}: no group for {', '.join(unsplit)}")
    return split


@cache
def all_runs() -> tuple[ServingRun, ...]:
    return parse_runs(RUNS_FILE.read_text(encoding="utf-8"), RUNS_FILE.name)


@cache
def split() -> Mapping[str, str]:
    text = SPLIT_FILE.read_text(encoding="utf-8")
    return MappingProxyType(parse_split(text, (run.run_id for run in all_runs()), SPLIT_FILE.name))


def runs(group: str | None = None) -> tuple[ServingRun, ...]:
    """The runs, all of them or those of one group (FIT or PREDICT), in the file's order."""
    if group is None:
        return all_runs()
    if group not in (FIT, PREDICT):
        raise ValueError(f"group {group!r} is not {FIT!r} or {PREDICT!r}")
    groups = split()
    return tuple(run for run in all_runs() if groups[run.run_id] == group)
