"""The glossary defines the terms the cards use (issue 20 item 6).

A term-like word is one of:

- an acronym or a mixed-case technical word, anything written with two capitals or more (TTFT,
  MoE, QLoRA, NVFP4), found in the cards automatically;
- one of COURSE_TERMS, the course's lower-case terms: words that read as English but that a card
  uses in a sense it must define (a "knee", a "loss", a "policy").

Each one a card uses must be a glossary term, one of its bracketed forms ("TTFT" in "Time to
first token (TTFT)"), a word of a term ("KV" of "KV cache") or one of its OTHER_FORMS; ALLOWED
holds the few names that are not terms at all. Read from the bundled files: no database.
"""

from __future__ import annotations

import re

import yaml

from lessons.content_format import CONTENT_DIR
from lessons.models import Card

COURSE_TERMS = (
    "all-reduce",
    "all-to-all",
    "base model",
    "chunked prefill",
    "goodput",
    "gradient",
    "gradient checkpointing",
    "KL divergence",
    "knee",
    "loss",
    "margin",
    "policy",
    "ridge point",
    "router",
    "temperature",
    "throughput",
)
OTHER_FORMS = {"GB and GiB": ("KB", "KiB", "MB", "MiB", "TB", "TiB")}
# Names of products, files and everyday words, not terms a card must define.
ALLOWED = frozenset(
    {
        "AI", "GB10", "GeForce", "JPEG", "LLMServingSim", "MIT", "NVIDIA", "POC", "PRO", "PyTorch",
        "RAM", "RTX", "SXM", "TODO", "TRL", "cuDNN", "macOS",
    }
)  # fmt: skip
_HIDDEN = re.compile(r"\{\{[^}]*\}\}|`[^`]*`|\]\([^)]*\)")  # live numbers, code, link targets
_CAPITALS = re.compile(r"(?<![\w./-])([A-Za-z]*[A-Z][A-Za-z]*[A-Z][A-Za-z0-9]*)(?![\w/-])")


def glossary_forms(terms: list[str]) -> set[str]:
    """Every way the glossary writes a term, lower-cased: its name, its bracketed forms, its words."""
    forms: set[str] = set()
    for term in terms:
        match = re.fullmatch(r"(.*?)\s*\((.*)\)", term)
        names = [match[1], *match[2].split(", ")] if match else [term]
        names += OTHER_FORMS.get(term, ())
        forms.update(name.lower() for name in names)
        forms.update(word.lower() for name in names for word in re.split(r"[\s/]+|-(?=[a-z])", name))
    return forms


def term_like_words(text: str) -> set[str]:
    text = _HIDDEN.sub(" ", text)
    found = set(_CAPITALS.findall(text))
    found.update(
        term for term in COURSE_TERMS if re.search(rf"(?<![\w-]){re.escape(term)}s?(?![\w-])", text, re.I)
    )
    return found


def missing_from(glossary: list[str], texts: list[str]) -> set[str]:
    forms = glossary_forms(glossary)
    missing = set()
    for word in set().union(*(term_like_words(text) for text in texts)):
        singular = word[:-1] if word.endswith("s") and len(word) > 2 else word
        if word in ALLOWED or word.lower() in forms or singular.lower() in forms:
            continue
        missing.add(word)
    return missing


def _glossary() -> list[str]:
    return [entry["term"] for entry in yaml.safe_load((CONTENT_DIR / "glossary.yaml").read_text())]


def _card_texts() -> list[str]:
    texts = []
    for path in sorted(CONTENT_DIR.glob("*/lesson-*.yaml")):
        for card in yaml.safe_load(path.read_text())["cards"]:
            texts += [str(card.get(name) or "") for name in Card.TEXT_FIELDS]
    return texts


def test_the_glossary_defines_every_term_like_word_the_cards_use():
    assert sorted(missing_from(_glossary(), _card_texts())) == []


def test_every_course_term_and_allowed_name_is_still_used():
    # An entry no card uses any more is dead weight: the lists stay short.
    used = set().union(*(term_like_words(text) for text in _card_texts()))
    assert {term for term in COURSE_TERMS if term.lower() not in {word.lower() for word in used}} == set()
    assert ALLOWED - used == set()


def test_the_check_lists_what_the_glossary_lacks():
    texts = ["Past the knee the TTFT climbs; GPUs share the KV cache, 128 KiB per token; NVIDIA's PCIe."]
    glossary = ["Time to first token (TTFT)", "KV cache", "GPU-hour", "GB and GiB"]
    assert missing_from(glossary, texts) == {"knee", "PCIe"}
