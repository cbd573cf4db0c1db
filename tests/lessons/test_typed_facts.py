"""No card types a fact that one of the engine's tables holds: it cites it.

A hardware fact (bandwidth, memory, compute), a model's shape (layers, KV heads, head size, hidden
size) or a price is a live figure from the table the calculators read ({{hw.…}}, {{model.…}},
{{price.…}}; felab_sim/engine/course/facts.py), so a corrected table corrects every card. This test
reads every card's text and every glossary entry in lessons/content/ and fails on a number,
written in the unit of a table's field, in a sentence that names that table entry, whose value is
the entry's (to the digits written: "989" for 989.4 TFLOP/s). Numbers inside a placeholder are
not typed. Names and units keep it precise: "3,350 GB/s" alone, or "32 layers" of a model the
sentence does not name, are not flagged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from felab_sim.engine.course import facts
from lessons.content_format import CONTENT_DIR
from lessons.models import Card

_NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n")

# How a sentence names a table entry. Longer names first where one contains another.
HARDWARE_NAMES = {
    "h100-pcie": ("H100 PCIe",),
    "h100-sxm": ("H100",),
    "h200": ("H200",),
    "b200": ("B200",),
    "a100-80gb": ("A100",),
    "l40s": ("L40S",),
    "mi300x": ("MI300X",),
    "rtx-4090": ("RTX 4090",),
    "rtx-pro-6000": ("RTX PRO 6000",),
    "dgx-spark": ("Spark",),
    "m4-pro": ("M4 Pro",),
    "m4-max-32c": ("M4 Max", "course's Mac", "course’s Mac", "36 GB Mac"),
    "m4-max-40c": ("M4 Max",),
    "m3-ultra": ("M3 Ultra",),
}
MODEL_NAMES = {
    "Llama-3.1-8B": ("Llama 3.1 8B", "Llama-3.1-8B", "llama3.1:8b", "8B model", "8-billion-parameter"),
    "Llama-3.1-70B": ("Llama 3.1 70B", "Llama-3.1-70B", "70B"),
    "Llama-3.2-1B": ("Llama 3.2 1B", "Llama-3.2-1B"),
    "Qwen2.5-0.5B": ("Qwen2.5-0.5B", "0.5B"),
    "Qwen2.5-7B": ("Qwen2.5-7B", "Qwen2.5 7B"),
    "Qwen3-30B-A3B": ("Qwen3-30B-A3B", "qwen3:30b"),
    "gpt-oss-20b": ("gpt-oss-20b", "gpt-oss:20b"),
    "gpt-oss-120b": ("gpt-oss-120b", "gpt-oss:120b"),
    "DeepSeek-V3": ("DeepSeek-V3", "DeepSeek V3"),
    "Mixtral-8x7B": ("Mixtral",),
    "Mistral-7B-v0.3": ("Mistral-7B", "Mistral 7B"),
    "Gemma-2-9B": ("Gemma",),
}
# The unit a field's number is written in, as a pattern around the number (group "n").
N = rf"(?P<n>{_NUMBER})"
FIELD_PATTERNS = {
    ("hw", "bandwidth_gbs"): rf"{N}\s*(?:GB/s|GB (?:per|a) second)",
    ("hw", "memory_gb"): rf"{N}\s*Gi?B(?!/| (?:per|a) second)",
    ("hw", "memory_decimal_gb"): rf"{N}\s*GB(?!/| (?:per|a) second)",
    ("hw", "bf16_tflops"): rf"{N}\s*(?:TFLOP|trillion)",
    ("hw", "fp8_tflops"): rf"{N}\s*(?:TFLOP|trillion)",
    ("model", "layers"): rf"{N}\s+(?:transformer\s+)?layers",
    ("model", "kv_heads"): rf"{N}\s+(?:KV |key-value )?heads",
    ("model", "head_dim"): rf"heads of {N}",
    ("model", "hidden_size"): rf"hidden(?: size)?(?: of)? {N}",
    ("model", "kv_kib_per_token"): rf"{N}\s*KiB",
    ("price", "usd"): rf"\${N}",
}
# A price is named by what it buys.
PRICE_NAMES = {
    "dedicated-gpu-hour": ("hour", "GPU-hour"),
    "gpt-oss-20b-input": ("million", "in ", "input"),
    "gpt-oss-20b-output": ("million", "out", "output"),
    "capstone-serverless-input": ("million", "in ", "input"),
    "capstone-serverless-output": ("million", "out", "output"),
}


@dataclass(frozen=True)
class Typed:
    where: str
    fact: str
    written: str
    sentence: str

    def __str__(self) -> str:
        return f"{self.where}: types {self.written!r} where {{{{{self.fact}}}}} belongs: “{self.sentence.strip()[:160]}”"


def _names(fact: facts.Fact) -> tuple[str, ...]:
    kind = fact.name.split(".", 1)[0]
    if kind == "hw":
        return HARDWARE_NAMES.get(fact.entry, ())
    if kind == "model":
        return MODEL_NAMES.get(fact.entry, ())
    if kind == "price":
        return PRICE_NAMES.get(fact.entry, ())
    return ()


def _is(value: float, written: str) -> bool:
    """The written number is the value, to the digits written."""
    stated = float(written.replace(",", ""))
    digits = len(written.partition(".")[2])
    return abs(round(value, digits) - stated) < 1e-9


def _names_in(sentence: str, names: tuple[str, ...]) -> bool:
    return any(re.search(rf"(?<![\w.-]){re.escape(name)}", sentence) for name in names)


CHECKED = [fact for fact in facts.every_fact() if (fact.name.split(".")[0], fact.field) in FIELD_PATTERNS]


def typed_facts(where: str, text: str) -> list[Typed]:
    """Every table fact the text types instead of citing."""
    prose = facts.PLACEHOLDER.sub(" ", re.sub(r"\{\{[^}]*\}\}", " ", text))
    found: list[Typed] = []
    for sentence in _SENTENCE.split(prose):
        for fact in CHECKED:
            names = _names(fact)
            if not names or not _names_in(sentence, names):
                continue
            pattern = FIELD_PATTERNS[(fact.name.split(".")[0], fact.field)]
            for match in re.finditer(pattern, sentence):
                if _is(fact.value, match["n"]):
                    found.append(Typed(where, fact.name, match[0], sentence))
    return found


def _bundled_texts() -> Iterator[tuple[str, str]]:
    for path in sorted(CONTENT_DIR.glob("*/lesson-*.yaml")):
        lesson = yaml.safe_load(path.read_text(encoding="utf-8"))
        for card in lesson.get("cards") or []:
            for field in Card.TEXT_FIELDS:
                yield f"{path.stem} step {card['step']} {field}", str(card.get(field) or "")
    for term in yaml.safe_load((CONTENT_DIR / "glossary.yaml").read_text(encoding="utf-8")):
        for field in ("definition", "example"):
            yield f"glossary {term['term']!r} {field}", str(term.get(field) or "")


def test_no_card_or_glossary_entry_types_a_table_fact():
    texts = list(_bundled_texts())
    assert len(texts) > 500  # every card's every text, and the glossary
    found = [str(typed) for where, text in texts for typed in typed_facts(where, text)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # The kind of sentence lesson 00 had: the course's Mac with a typed bandwidth.
        (
            "The course's Mac moves 410 GB/s, so 4.9 GB is read 84 times a second.",
            "hw.m4-max-32c.bandwidth_gbs",
        ),
        ("NVIDIA's H100 SXM: 989 TFLOP/s dense BF16 and 3,350 GB/s.", "hw.h100-sxm.bf16_tflops"),
        ("NVIDIA's H100 SXM: 989 TFLOP/s dense BF16 and 3,350 GB/s.", "hw.h100-sxm.bandwidth_gbs"),
        ("Qwen2.5-7B has 28 layers and 4 KV heads of 128.", "model.Qwen2.5-7B.kv_heads"),
        ("A dedicated GPU costs $8 an hour.", "price.dedicated-gpu-hour.usd"),
    ],
)
def test_a_planted_typed_fact_fails(text, fact):
    assert fact in {typed.fact for typed in typed_facts("planted", text)}


@pytest.mark.parametrize(
    "text",
    [
        "The course's Mac moves {{hw.m4-max-32c.bandwidth_gbs}} GB/s.",  # cited, not typed
        "Memory delivers 3,350 GB/s.",  # no entry named
        "An H100 serves 3,350 tokens a second.",  # a number, but not in the field's unit
        "A 160 GB model on two H100s.",  # named, in the unit, but not the entry's value
        "The Mac read 28 layers of the file.",  # a model's number, no model named
    ],
)
def test_cited_unnamed_or_other_numbers_pass(text):
    assert typed_facts("fine", text) == []


def test_content_dir_is_the_bundled_one():
    assert Path(__file__).resolve().parents[2] / "lessons" / "content" == CONTENT_DIR


def _bandwidths_named(text: str) -> set[float]:
    """The bandwidths of the hardware entries a parameter set's name or description names."""
    named = [entry for entry, names in HARDWARE_NAMES.items() if _names_in(text, names)]
    return {facts.parse(f"hw.{entry}.bandwidth_gbs").value for entry in named}


def parameter_set_problems(sets: list[dict]) -> list[str]:
    """A parameter set that names a machine reads memory at that machine's bandwidth."""
    problems = []
    for entry in sets:
        bandwidth = (entry.get("params") or {}).get("bandwidth_gbs")
        named = _bandwidths_named(f"{entry.get('name', '')} {entry.get('description', '')}")
        if bandwidth is not None and named and float(bandwidth) not in named:
            problems.append(
                f"{entry['slug']}: {bandwidth} GB/s, but it names hardware at {', '.join(f'{b:g}' for b in sorted(named))} GB/s"
            )
    return problems


def test_a_parameter_set_that_names_a_machine_uses_its_bandwidth():
    sets = yaml.safe_load((CONTENT_DIR / "parameter_sets.yaml").read_text(encoding="utf-8"))
    assert not (problems := parameter_set_problems(sets)), "\n".join(problems)


def test_a_planted_parameter_set_at_another_machine_s_bandwidth_fails():
    # Lesson 00's set as it was: the course's 36 GB Mac, at the M4 Pro's 273 GB/s.
    planted = {
        "slug": "l00-mac-36gb-llama8b-q4km",
        "name": "Llama 3.1 8B at Q4_K_M on the course's 36 GB Mac",
        "description": "Lesson 00's first model on a Mac whose memory delivers about 273 GB/s.",
        "params": {"bandwidth_gbs": 273, "model_gb": 4.9},
    }
    assert parameter_set_problems([planted]) == [
        "l00-mac-36gb-llama8b-q4km: 273 GB/s, but it names hardware at 410 GB/s"
    ]
