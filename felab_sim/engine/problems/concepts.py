"""The ideas practice problems exercise, across lessons: one list, and which of them each bundled
template's worked steps and each named mistake exercise, declared here once.

A template's concepts are those of its solution's steps (one tuple a step, in order; a step that
only comments has none). A named mistake's are those its slip gets wrong, looked up by
"template-slug/mistake-slug" first, for a slug that means another thing in that template, then
by the mistake's slug alone. /progress/ (quiz.concept_stats) reads a learner's attempts through
these; tests/lessons/test_concepts.py holds every bundled template and mistake to at least one
concept and every concept to some use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Concept:
    slug: str
    name: str
    says: str  # one line: what a learner who holds it does right


CONCEPTS: tuple[Concept, ...] = (
    Concept(
        "bytes-per-value",
        "Bytes per value",
        "bits ÷ 8 is bytes; f16 and bf16 take 2 bytes, FP8 1, 4-bit 0.5, about 0.56 with its block scales",
    ),
    Concept(
        "k-and-v",
        "K and V in every layer",
        "the KV cache keeps a key and a value, per layer, per KV head, per token",
    ),
    Concept("gb-and-gib", "GB and GiB", "a GB is 10⁹ bytes; a GiB, 2³⁰ bytes, is 7.4% more"),
    Concept(
        "unit-prefixes",
        "Unit prefixes",
        "k, M, G and T are 10³, 10⁶, 10⁹ and 10¹²: put both sides in the same before dividing",
    ),
    Concept(
        "per-item-and-total", "Per item and in total", "one token, task, ticket or epoch against all of them"
    ),
    Concept(
        "decode-ceiling",
        "Decode reads the weights",
        "a token's ceiling is bandwidth ÷ the bytes read per token",
    ),
    Concept(
        "roofline-ridge", "Roofline ridge", "peak FLOP ÷ bandwidth against the FLOP a byte of weights gives"
    ),
    Concept(
        "active-parameters",
        "Active parameters",
        "a mixture of experts reads its active parameters, stores them all",
    ),
    Concept(
        "time-units",
        "Time units and rates",
        "seconds, milliseconds, minutes and hours; per token against per second",
    ),
    Concept(
        "token-prices",
        "Prices per million tokens",
        "÷ 1,000,000, input and output at their own prices, each discount once",
    ),
    Concept(
        "after-over-before",
        "What changes: after ÷ before",
        "work out both sides; only the part that scales changes",
    ),
    Concept(
        "sizing-for-the-peak", "Sizing for the peak", "users ÷ capacity, headroom on top, whole replicas"
    ),
    Concept(
        "whole-units",
        "Rounding the right way",
        "round replicas up, whole conversations down, a fraction left as printed",
    ),
    Concept(
        "fixed-overhead", "A fixed overhead", "the server's per-request time stays when the work changes"
    ),
    Concept(
        "prefix-blocks", "Prefix caching by blocks", "only whole blocks of an identical prefix are reused"
    ),
    Concept(
        "training-memory",
        "Training memory per parameter",
        "16 B a trained parameter; a frozen base at its own width",
    ),
    Concept("adapters", "Adapter parameters", "r × (in + out) per adapted matrix, in every layer"),
    Concept(
        "speculative-acceptance", "Drafts and acceptance", "tokens per round from α, against the round's cost"
    ),
    Concept(
        "sigmoid-and-beta",
        "σ, β and the log",
        "σ turns a margin into a probability; β scales it; the loss is −ln",
    ),
    Concept(
        "shares-and-percents", "Shares and percents", "a share × 100 is a percent; which way a ratio goes"
    ),
)
CONCEPT_SLUGS = tuple(concept.slug for concept in CONCEPTS)
BY_SLUG: Mapping[str, Concept] = {concept.slug: concept for concept in CONCEPTS}

# Per bundled template, the concepts of each step of its worked solution, in order.
TEMPLATE_STEPS: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "l00-decode-ceiling": (("decode-ceiling",), ("decode-ceiling", "time-units", "bytes-per-value"), ()),
    "l00-bandwidth-not-cores": (
        ("roofline-ridge", "unit-prefixes"),
        ("roofline-ridge", "bytes-per-value"),
        ("roofline-ridge",),
    ),
    "l01-ttft-long-prompt": (("time-units",), ("fixed-overhead",)),
    "l01-prompt-doubles": (("fixed-overhead", "time-units"), ("fixed-overhead",), ("after-over-before",)),
    "l03-replicas-with-headroom": (
        ("sizing-for-the-peak", "whole-units"),
        ("sizing-for-the-peak", "whole-units"),
    ),
    "l03-capacity-halves": (
        ("sizing-for-the-peak", "whole-units"),
        ("sizing-for-the-peak", "whole-units", "after-over-before"),
    ),
    "l04-quant-ceiling": (("bytes-per-value",), ("bytes-per-value",), ("decode-ceiling", "time-units")),
    "l04-efficiency": (("decode-ceiling", "bytes-per-value"), ("shares-and-percents",)),
    "l05-kv-per-conversation": (("k-and-v", "bytes-per-value"), ("k-and-v",), ("per-item-and-total",)),
    "l05-context-doubles": (
        ("k-and-v", "bytes-per-value"),
        ("after-over-before", "per-item-and-total"),
        ("gb-and-gib", "whole-units"),
        ("after-over-before",),
    ),
    "l06-warm-ttft": (
        ("prefix-blocks",),
        ("prefix-blocks",),
        ("prefix-blocks",),
        ("fixed-overhead", "time-units"),
    ),
    "l06-speedup": (
        ("prefix-blocks",),
        ("prefix-blocks",),
        ("fixed-overhead",),
        ("fixed-overhead",),
        ("shares-and-percents",),
    ),
    "l06-variable-first": (("prefix-blocks",), ("fixed-overhead", "time-units"), ()),
    "l08-batch-per-1k": (("token-prices",), ("per-item-and-total",), ("token-prices",)),
    "l08-batch-and-cache": (
        ("token-prices", "shares-and-percents"),
        ("token-prices", "per-item-and-total"),
        ("token-prices",),
    ),
    "l09-cost-per-1k": (("token-prices",), ("per-item-and-total",)),
    "l09-output-doubles": (("token-prices",), ("token-prices",), ("after-over-before",)),
    "l10-training-bill": (("per-item-and-total",), ("token-prices",)),
    "l10-serving-bill": (("time-units",), ("time-units",)),
    "l11-qlora-memory": (("adapters",), ("training-memory", "bytes-per-value"), ("training-memory",)),
    "l11-full-memory": (("training-memory",), ()),
    "l12-moe-ceiling": (("active-parameters", "bytes-per-value"), ("decode-ceiling", "time-units")),
    "l12-moe-memory": (("active-parameters", "bytes-per-value"), ("active-parameters",)),
    "l13-speedup": (("speculative-acceptance",), ("speculative-acceptance",), ("speculative-acceptance",)),
    "l13-break-even": (("speculative-acceptance",), ("speculative-acceptance",), ()),
    "l14-max-concurrency": (
        ("k-and-v", "bytes-per-value"),
        ("per-item-and-total",),
        ("gb-and-gib",),
        ("whole-units",),
    ),
    "l14-fp8-kv": (
        ("k-and-v", "bytes-per-value"),
        ("per-item-and-total",),
        ("gb-and-gib",),
        ("whole-units",),
    ),
    "l15-serverless-month": (("token-prices",), ("per-item-and-total",)),
    "l15-crossover": (("time-units", "per-item-and-total"), ("token-prices",), ("per-item-and-total",)),
    "l16-lora-share": (("adapters",), ("shares-and-percents",)),
    "l16-preference-probability": (("sigmoid-and-beta",),),
    "l17-lora-memory": (("training-memory", "bytes-per-value", "adapters"), ()),
    "l17-adapter-file": (("adapters", "bytes-per-value"), ()),
    "l18-loss": (("sigmoid-and-beta",), ("sigmoid-and-beta",), ()),
    "l18-gradient-fade": (("sigmoid-and-beta",),),
}

# Per named mistake's slug, the concepts the slip gets wrong; "template/mistake" where a slug
# means another thing in that template.
MISTAKES: Mapping[str, tuple[str, ...]] = {
    "seconds-per-token": ("time-units", "decode-ceiling"),
    "ms-per-token": ("time-units",),
    "bits-for-bytes": ("bytes-per-value",),
    "flop-per-weight": ("roofline-ridge", "bytes-per-value"),
    "bytes-without-flop": ("roofline-ridge",),
    "tera-over-giga": ("unit-prefixes",),
    "thousand-too-many": ("unit-prefixes",),
    "in-seconds": ("time-units",),
    "seconds-plus-ms": ("time-units",),
    "new-time": ("after-over-before",),
    "exactly-twice": ("after-over-before", "fixed-overhead"),
    "l09-output-doubles/exactly-twice": ("after-over-before",),
    "before-over-after": ("after-over-before",),
    "no-headroom": ("sizing-for-the-peak",),
    "rounded-down": ("whole-units",),
    "headroom-on-users": ("sizing-for-the-peak", "whole-units"),
    "before-the-change": ("after-over-before",),
    # Where the context doubles, the count before it is also the count with K and V counted once.
    "l05-context-doubles/before-the-change": ("after-over-before", "k-and-v"),
    "halved-instead": ("after-over-before", "sizing-for-the-peak"),
    "f16-size": ("bytes-per-value",),
    "the-ceiling": ("shares-and-percents",),
    "fraction-as-percent": ("shares-and-percents",),
    "kv-once": ("k-and-v",),
    "f16-bytes": ("bytes-per-value",),
    "one-token": ("per-item-and-total",),
    "one-layer": ("k-and-v",),
    "l16-lora-share/one-layer": ("adapters",),
    "l17-adapter-file/one-layer": ("adapters",),
    "doubled-instead": ("after-over-before",),
    "gb-for-gib": ("gb-and-gib",),
    "gib-as-gb": ("gb-and-gib",),
    "not-rounded-down": ("whole-units",),
    "cold-time": ("prefix-blocks",),
    "no-overhead": ("fixed-overhead",),
    "question-left-out": ("prefix-blocks",),
    "all-cached": ("prefix-blocks",),
    "cached-share": ("shares-and-percents", "prefix-blocks"),
    "warm-over-cold": ("shares-and-percents",),
    "token-ratio": ("fixed-overhead",),
    "preamble-reused": ("prefix-blocks",),
    "list-price": ("token-prices",),
    "one-task": ("per-item-and-total",),
    "per-million-left-in": ("token-prices",),
    "discount-twice": ("token-prices",),
    "no-batch": ("token-prices",),
    "prefix-not-discounted": ("token-prices",),
    "input-price-for-output": ("token-prices",),
    "prices-swapped": ("token-prices",),
    "one-epoch": ("per-item-and-total",),
    "per-thousand": ("token-prices",),
    "minutes-as-hours": ("time-units",),
    "times-sixty": ("time-units",),
    "full-fine-tuning": ("training-memory",),
    "bf16-base": ("training-memory", "bytes-per-value"),
    "adapters-only": ("training-memory", "adapters"),
    "weights-and-gradients": ("training-memory",),
    "weights-only": ("training-memory",),
    "qlora": ("training-memory",),
    "l17-lora-memory/qlora": ("training-memory", "bytes-per-value"),
    "every-parameter": ("active-parameters",),
    "byte-a-weight": ("bytes-per-value",),
    "active-only": ("active-parameters",),
    "bf16-size": ("bytes-per-value",),
    "steps-per-token": ("speculative-acceptance",),
    "draft-free": ("speculative-acceptance",),
    "all-accepted": ("speculative-acceptance",),
    "speed-up-of-one": ("speculative-acceptance",),
    "the-draft-cost": ("speculative-acceptance",),
    "one-ticket": ("per-item-and-total",),
    "one-hour": ("per-item-and-total", "time-units"),
    "the-other-answer": ("sigmoid-and-beta",),
    "no-sigma": ("sigmoid-and-beta",),
    "training-bytes": ("bytes-per-value",),
    "whole-model": ("adapters",),
    "no-beta": ("sigmoid-and-beta",),
    "log-ten": ("sigmoid-and-beta",),
    "sigma-not-loss": ("sigmoid-and-beta",),
    "plus-sign": ("sigmoid-and-beta",),
    "with-beta": ("sigmoid-and-beta",),
}


def of_template(slug: str) -> tuple[str, ...]:
    """The concepts a template's steps exercise, in the list's order (none for one not bundled)."""
    found = {concept for step in TEMPLATE_STEPS.get(slug, ()) for concept in step}
    return tuple(concept for concept in CONCEPT_SLUGS if concept in found)


def of_mistake(template_slug: str, mistake_slug: str) -> tuple[str, ...]:
    """The concepts a named mistake gets wrong: () for one not declared here (named later, in
    the admin), which then counts against its template's concepts as any other wrong answer."""
    return MISTAKES.get(f"{template_slug}/{mistake_slug}", MISTAKES.get(mistake_slug, ()))


def templates_training(slugs: Iterable[str]) -> dict[str, list[str]]:
    """Per concept, the given templates whose steps exercise it, in the order given."""
    training: dict[str, list[str]] = {concept: [] for concept in CONCEPT_SLUGS}
    for slug in slugs:
        for concept in of_template(slug):
            training[concept].append(slug)
    return training
