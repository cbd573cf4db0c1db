"""Lesson 03's sweep and practice server, as parameters: declared once, checked on construction.

:class:`ServerParams` holds the practice server's rules, :class:`SweepParams` a sweep's
(levels, reply length, SLO, client-side overheads), both built from ``SWEEP_PARAMS``. Server
rules are in milliseconds, as the course states them. Pure Python, no Django.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import ClassVar

from ..core.params import MAX_TEXT, Param, ParamError, ParamValue

# The fixed part of every prefill (lesson 03): taking a slot before reading the prompt.
PREFILL_BASE_MS = 15.0

MAX_LEVEL = 1024
MAX_LEVELS = 12
MAX_SLOTS = 1024
MAX_MAX_TOKENS = 4096


# --------------------------------------------------------------------------- validation


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_int(name: str, value: object, lo: int, hi: int) -> int:
    rule = f"{name} must be an integer from {lo} to {hi}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParamError(name, f"{rule} (got {_shown(value)})")
    if not lo <= value <= hi:
        raise ParamError(name, f"{rule} (got {value})")
    return value


def _normalise_levels(value: object) -> tuple[int, ...]:
    rule = f"levels must be 1 to {MAX_LEVELS} concurrency levels, integers from 1 to {MAX_LEVEL}"
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_TEXT:
            raise ParamError("levels", f"{rule} (got a {len(text)}-character string)")
        items: list[object] = [part.strip() for part in text.split(",")] if text else []
    elif isinstance(value, int) and not isinstance(value, bool):
        items = [value]
    elif isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
        items = list(value)
    else:
        raise ParamError("levels", f"{rule} (got {_shown(value)})")
    if not items:
        raise ParamError("levels", f"{rule} (got none)")
    if len(items) > MAX_LEVELS:
        raise ParamError("levels", f"{rule} (got {len(items)})")
    out = set()
    for item in items:
        if isinstance(item, str):
            if not item.isascii() or not item.isdigit():
                raise ParamError("levels", f"{rule} (got {_shown(item)})")
            item = int(item)
        if isinstance(item, bool) or not isinstance(item, int) or not 1 <= item <= MAX_LEVEL:
            raise ParamError("levels", f"{rule} (got {_shown(item)})")
        out.add(item)
    # Sorted and deduplicated: the table, the plots and "user speed falls as C rises" read
    # levels in ascending order, and running a level twice would only repeat identical numbers.
    return tuple(sorted(out))


def check_level(conc: object) -> int:
    """One concurrency level, as the simulator takes it."""
    return _check_int("levels", conc, 1, MAX_LEVEL)


# --------------------------------------------------------------------------- parameters

# The sweep's flat parameters, declared once (docs/architecture.md, "Parameters: declared once").
# Everything else reads these: ServerParams' and SweepParams' defaults and checks, the /sim/ form,
# the sweep and practice_server commands' flags, the Scenario model's columns, its admin and the
# lesson content's scenarios. The order here is the order of sweep.json's "params", of the form
# and of scenarios.yaml: the server's rules first, then the sweep's.
SWEEP_PARAMS: tuple[Param, ...] = (
    Param(
        "levels",
        "text",
        "1,2,4,8,16,32",
        f"Comma-separated, up to {MAX_LEVELS}, each 1 to {MAX_LEVEL}.",
        label="Concurrency levels",
    ),
    Param(
        "slots",
        "int",
        8,
        "Requests the server batches at once; the rest queue.",
        label="Slots",
        low=1,
        high=MAX_SLOTS,
    ),
    Param(
        "step_ms",
        "float",
        18.0,
        "One decode step with one request.",
        "ms",
        label="Step time alone (ms)",
        low=0,
        low_open=True,
        high=10_000,
    ),
    Param(
        "growth",
        "float",
        0.06,
        "0.06 = each extra request adds 6%.",
        label="Step growth per extra request",
        low=0,
        high=1,
    ),
    Param(
        "prefill_tok_s",
        "float",
        2500.0,
        "How fast the prompt is read.",
        "tok/s",
        label="Prefill speed (tok/s)",
        # At least 1 tok/s: slower is no lesson, and a rate near zero pushes virtual time to
        # infinity (inf - inf is NaN in every metric).
        low=1,
        high=10_000_000,
    ),
    Param(
        "max_tokens",
        "int",
        128,
        "Replies are 60 to 200 tokens, cut here.",
        "tokens",
        label="Max tokens",
        low=1,
        high=MAX_MAX_TOKENS,
    ),
    Param(
        "slo_ms",
        "float",
        500.0,
        "Capacity: the highest C that meets it.",
        "ms",
        label="TTFT p95 target, SLO (ms)",
        low=0,
        low_open=True,
        high=600_000,
    ),
    Param(
        "request_overhead_ms",
        "float",
        4.0,
        "Time outside the server: HTTP.",
        "ms",
        label="Overhead per request (ms)",
        low=0,
        high=1000,
    ),
    Param(
        "token_overhead_ms",
        "float",
        0.2,
        "Parsing each streamed chunk.",
        "ms",
        label="Overhead per token (ms)",
        low=0,
        high=1000,
    ),
)
_DECLARED = {param.name: param for param in SWEEP_PARAMS}


def sweep_param(name: str) -> Param:
    """One of the sweep's declared parameters, by name."""
    return _DECLARED[name]


def _default(name: str) -> ParamValue:
    return _DECLARED[name].default


def _checked(name: str, value: object) -> ParamValue:
    """A constructor's value checked by its declaration. Text is refused here: it is parsed by
    ``from_flat`` (the constructors take numbers, so "8" is a caller's mistake, not a value)."""
    param = _DECLARED[name]
    if isinstance(value, str):
        raise ParamError(name, f"{param.rule()} (got {_shown(value)})")
    return param.parse(value)


@dataclass(frozen=True)
class ServerParams:
    """The practice server's rules (lesson 03). Also drives the real asyncio practice server.

    Its fields are the declared parameters of the same names (SERVER_PARAMS).
    """

    slots: int = _default("slots")  # type: ignore[assignment]
    step_ms: float = _default("step_ms")  # type: ignore[assignment]
    growth: float = _default("growth")  # type: ignore[assignment]
    prefill_tok_s: float = _default("prefill_tok_s")  # type: ignore[assignment]

    def __post_init__(self) -> None:
        for name in _SERVER_KEYS:
            object.__setattr__(self, name, _checked(name, getattr(self, name)))

    def decode_step_ms(self, active: int, kv_tokens: int = 0) -> float:
        """One decode step with ``active`` requests holding a slot (``kv_tokens``, their context,
        is the continuous-batching pacing's question: this model's step depends on the count alone)."""
        return self.step_ms * (1.0 + self.growth * (active - 1))

    def prefill_ms(self, uncached_tokens: int) -> float:
        """Time from taking a slot to having the first token."""
        return PREFILL_BASE_MS + uncached_tokens / self.prefill_tok_s * 1000.0

    def as_flat(self) -> dict[str, ParamValue]:
        """The server's rules by their declared names (the practice server's /health)."""
        return {name: getattr(self, name) for name in _SERVER_KEYS}


_SERVER_KEYS = tuple(f.name for f in fields(ServerParams))
# The practice server's own subset of the declarations: its command's flags and its /health.
SERVER_PARAMS: tuple[Param, ...] = tuple(param for param in SWEEP_PARAMS if param.name in _SERVER_KEYS)


def step_ms_at(params: SweepParams | ServerParams, active: int) -> float:
    server = params.server if isinstance(params, SweepParams) else params
    return server.decode_step_ms(active)


@dataclass(frozen=True)
class SweepParams:
    """A sweep: which levels, how long the replies, the SLO and the client-side overheads.

    ``levels`` may be given in any order and with repeats; it is stored sorted and deduplicated.
    Its fields, with the server's, are the declared parameters (SWEEP_PARAMS).
    """

    levels: tuple[int, ...] = tuple(int(level) for level in str(_default("levels")).split(","))
    max_tokens: int = _default("max_tokens")  # type: ignore[assignment]
    slo_ms: float = _default("slo_ms")  # type: ignore[assignment]
    request_overhead_ms: float = _default("request_overhead_ms")  # type: ignore[assignment]
    token_overhead_ms: float = _default("token_overhead_ms")  # type: ignore[assignment]
    server: ServerParams = field(default_factory=ServerParams)

    FLAT_KEYS: ClassVar[tuple[str, ...]] = tuple(param.name for param in SWEEP_PARAMS)

    def __post_init__(self) -> None:
        object.__setattr__(self, "levels", _normalise_levels(self.levels))
        for name in _SWEEP_KEYS:
            object.__setattr__(self, name, _checked(name, getattr(self, name)))
        if not isinstance(self.server, ServerParams):
            raise ParamError("server", f"server must be a ServerParams (got {_shown(self.server)})")

    @classmethod
    def from_flat(cls, data: Mapping[str, object]) -> SweepParams:
        """Build from flat names (query string, form, JSON, CLI); missing keys take defaults."""
        for key in data:
            if key not in cls.FLAT_KEYS:
                raise ParamError(
                    str(key),
                    f"unknown parameter {_shown(key)}; known: {', '.join(cls.FLAT_KEYS)}",
                )
        # Text or JSON, each value checked by its declaration (levels has its own grammar).
        values = {
            key: _DECLARED[key].parse(data[key]) for key in cls.FLAT_KEYS if key != "levels" and key in data
        }
        server = ServerParams(**{k: values.pop(k) for k in _SERVER_KEYS if k in values})
        if "levels" in data:
            values["levels"] = data["levels"]
        return cls(server=server, **values)  # type: ignore[arg-type]

    def as_flat(self) -> dict[str, object]:
        """JSON-ready flat dict in the declarations' order; ``from_flat(p.as_flat()) == p``."""
        own = {"levels": list(self.levels), **{name: getattr(self, name) for name in _SWEEP_KEYS}}
        server = self.server.as_flat()
        return {name: server[name] if name in server else own[name] for name in self.FLAT_KEYS}


# The sweep's own declared fields (levels aside: it has its own grammar).
_SWEEP_KEYS = tuple(f.name for f in fields(SweepParams) if f.name not in ("levels", "server"))
