"""Facts card text states, each read from its one table: ``{{hw.…}}``, ``{{model.…}}``,
``{{price.…}}`` and ``{{measured.…}}``.

The same tables the calculators use: hardware (``hardware.py``), model shapes (``model_presets.py``
read by ``model_config.py``), prices (``prices.py``) and the course's published measurements
(``measurements.py``). A card writes ``{{hw.m4-max-32c.bandwidth_gbs}}`` and the page prints 410,
so a corrected table corrects every card. Pure Python: no Django. See docs/architecture.md,
"Named parameter sets and card citations".

| name | value |
| --- | --- |
| ``hw.PRESET.bandwidth_gbs`` | memory bandwidth, 10⁹ bytes a second |
| ``hw.PRESET.memory_gb`` | memory as the vendor prints it (``memory_unit`` says GB or GiB) |
| ``hw.PRESET.memory_decimal_gb`` | the memory an engine sees, in 10⁹ bytes |
| ``hw.PRESET.bf16_tflops``, ``hw.PRESET.fp8_tflops`` | dense peak compute |
| ``hw.PRESET.link_gbs`` | the link to its peers, 10⁹ bytes a second each way |
| ``model.NAME.FIELD`` | ``layers``, ``hidden_size``, ``attention_heads``, ``kv_heads``, ``head_dim``, ``intermediate_size``, ``vocab_size``, ``params_b``, ``active_params_b``, ``sliding_window``, ``sliding_layers``, ``full_layers``, ``kv_kib_per_token`` (16-bit, every layer), ``kv_kib_per_token_long`` (16-bit, past the sliding window: full layers only), ``routed_experts``, ``experts_per_token``, ``published_total_b``, ``published_active_b`` (the publisher's counts), ``stored_gb`` and ``stored_gb_per_token`` (the published file's weights, and what one token reads of them, each tensor at the precision its config states: only where it states one) |
| ``price.NAME.usd`` | a price of ``prices.py`` |
| ``measured.RUN.FIELD`` | a number of one of ``measurements.py``'s runs |
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from ..core.numbers import format_money, format_number
from ..hardware.hardware import HARDWARE, Hardware, hardware_preset
from ..hardware.prices import PRICES, price
from ..models.model_kv_cache import kv_bytes_per_token
from ..models.model_presets import PRESETS, ModelPreset, preset
from ..models.model_shapes import AttentionKind
from ..models.model_weights import stored_bytes
from ..sweep.measurements import MEASUREMENTS, measurement

KINDS = ("hw", "model", "price", "measured")
# The name's last dotted part is the field; the entry's own name may hold dots ("Qwen2.5-7B").
PLACEHOLDER = re.compile(r"\{\{\s*((?:hw|model|price|measured)\.[A-Za-z0-9_.\-]+)\s*\}\}")
_NAME = re.compile(r"(hw|model|price|measured)\.([A-Za-z0-9_.\-]+)\.([a-z][a-z0-9_]*)")


class UnknownFact(ValueError):
    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.name = name


@dataclass(frozen=True)
class Fact:
    name: str  # "hw.m4-max-32c.bandwidth_gbs"
    value: float
    entry: str  # the table entry's own name: "m4-max-32c", "Qwen2.5-7B"
    field: str
    source: str

    @property
    def text(self) -> str:
        """The value as a card prints it; a price to the cent (the card writes its "$")."""
        return format_money(self.value) if self.name.startswith("price.") else format_number(self.value)


def _hw_fields(hardware: Hardware) -> dict[str, float | None]:
    return {
        "bandwidth_gbs": hardware.memory_bandwidth / 1e9,
        "memory_gb": hardware.memory_gb,
        "memory_decimal_gb": hardware.memory_bytes / 1e9,
        "bf16_tflops": None if hardware.bf16_flops is None else hardware.bf16_flops / 1e12,
        "fp8_tflops": None if hardware.fp8_flops is None else hardware.fp8_flops / 1e12,
        "link_gbs": hardware.interconnect.bytes_per_s / 1e9,
    }


def _model_fields(model: ModelPreset) -> dict[str, float | None]:
    shape = model.shape
    per_token = kv_bytes_per_token(shape, 2.0)
    stored = stored_bytes(shape)
    experts_used = (
        0 if shape.experts is None else shape.experts.experts_per_token * len(shape.experts.moe_layers)
    )
    return {
        "layers": shape.layers,
        "hidden_size": shape.hidden_size,
        "attention_heads": shape.attention_heads,
        "kv_heads": shape.kv_heads,
        "head_dim": shape.head_dim,
        "intermediate_size": shape.intermediate_size,
        "vocab_size": shape.vocab_size,
        "params_b": shape.total_params / 1e9,
        "active_params_b": shape.active_params / 1e9,
        "sliding_window": shape.sliding_window,
        "sliding_layers": shape.layers_of_kind(AttentionKind.SLIDING),
        "full_layers": shape.layers_of_kind(AttentionKind.FULL),
        "kv_kib_per_token": sum(per_token.values()) / 1024,
        "routed_experts": None if shape.experts is None else shape.experts.routed_experts,
        "experts_per_token": None if shape.experts is None else shape.experts.experts_per_token,
        "published_total_b": None if model.published is None else model.published.total_b,
        "published_active_b": None if model.published is None else model.published.active_b,
        "stored_gb": None if stored is None else stored.total / 1e9,
        "stored_gb_per_token": None if stored is None else stored.read_per_token(experts_used) / 1e9,
        "kv_kib_per_token_long": sum(
            bytes_ for kind, bytes_ in per_token.items() if kind is not AttentionKind.SLIDING
        )
        / 1024,
    }


def _entry(kind: str, entry: str) -> tuple[dict[str, float | None], str]:
    """One table entry's fields and its source; KeyError when the table has no such entry."""
    if kind == "hw":
        hardware = hardware_preset(entry)
        return _hw_fields(hardware), hardware.source
    if kind == "model":
        model = preset(entry)
        return _model_fields(model), model.source
    if kind == "price":
        found = price(entry)
        return {"usd": found.usd}, found.source
    run = measurement(entry)
    return dict(run.values), run.source


def parse(name: str) -> Fact:
    """The fact a name stands for; UnknownFact says why a name cannot be read."""
    match = _NAME.fullmatch(name.strip())
    if match is None:
        raise UnknownFact(name, "write it KIND.ENTRY.FIELD, KIND one of " + ", ".join(KINDS))
    kind, entry, field = match.groups()
    try:
        fields, source = _entry(kind, entry)
    except KeyError as error:
        raise UnknownFact(name, str(error.args[0])) from None
    if field not in fields:
        raise UnknownFact(name, f"'{field}' is not a field; use one of {', '.join(fields)}")
    value = fields[field]
    if value is None:
        raise UnknownFact(name, f"{entry} has no {field}")
    return Fact(name, float(value), entry, field, source)


def names_in(text: str) -> list[str]:
    return PLACEHOLDER.findall(text)


def problems(texts: Iterable[str]) -> list[str]:
    """Every fact named in the texts that cannot be read, with the reason; empty when all are fine."""
    found = []
    for name in dict.fromkeys(name for text in texts for name in names_in(text)):
        try:
            parse(name)
        except UnknownFact as error:
            found.append(str(error))
    return found


def text_of(name: str) -> str:
    """A fact as the site prints it; a dash when it cannot be read, never an exception."""
    try:
        return parse(name).text
    except UnknownFact:
        return format_number(None)


def fill(text: str, wrap: Callable[[str, str], str] | None = None) -> str:
    """Every fact placeholder replaced by its printed value."""

    def replace(match: re.Match[str]) -> str:
        value = text_of(match[1])
        return wrap(match[1], value) if wrap else value

    return PLACEHOLDER.sub(replace, text)


def every_fact() -> Iterator[Fact]:
    """Every fact of every table (fields with no value left out): what a card may cite."""
    entries = [("hw", hardware.name) for hardware in HARDWARE]
    entries += [("model", model.name) for model in PRESETS]
    entries += [("price", found.name) for found in PRICES]
    entries += [("measured", run.name) for run in MEASUREMENTS]
    for kind, entry in entries:
        fields, source = _entry(kind, entry)
        for field, value in fields.items():
            if value is not None:
                yield Fact(f"{kind}.{entry}.{field}", float(value), entry, field, source)
