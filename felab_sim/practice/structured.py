"""JSON replies for lesson 07: constrained output always parses, JSON asked for in words often not.

The course's mock server (lesson 07) answers in JSON when the request's
``response_format`` is ``json_object`` or ``json_schema`` (constrained decoding: always valid)
or when the prompt only mentions "json" (no guarantee: about 12% of prompts come back with
``Sure! Here is the JSON:`` in front and the last 3 characters cut, so they do not parse).
Which prompts break is a seeded draw from the prompt text, so a prompt always gets the same
answer and a lab's numbers repeat run after run.

What the JSON says comes from the course's ticket classifier (lessons 07-09): the true label
is the first keyword group the ticket matches, the "model" predicts it right 75% of the time
(deterministically per ticket), and severity follows the predicted label. A ``json_schema``
gets exactly the shape it asks for: its required properties, each filled with a value of the
right type within the schema's bounds and enums, the classifier's answer wherever a property
is recognisably the category, the severity or the next action.

Pure Python, no Django, like the rest of the practice server.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass

from felab_sim.engine.sweep.prompts import CHARS_PER_TOKEN

__all__ = [
    "BROKEN_PREFIX",
    "PROMPT_ONLY_BREAK_SHARE",
    "SchemaError",
    "Ticket",
    "asks_for_json",
    "breaks_json",
    "classify",
    "fill_schema",
    "prompt_only_reply",
]

PROMPT_ONLY_BREAK_SHARE = 0.12
BROKEN_PREFIX = "Sure! Here is the JSON:\n"
BROKEN_CUT_CHARS = 3
BASE_MODEL_ACCURACY = 0.75
LORA_ACCURACY = 0.93  # any model id with "lora" in it: lesson 11's fine-tuned classifier

# Checked in this order; a ticket matching none is a how-to question.
LABEL_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("abuse", ("spam", "phishing", "abuse", "fraud", "stolen", "scraping")),
    ("billing", ("invoice", "card", "charge", "refund", "billing", "payment", "declined")),
    (
        "outage",
        ("down", "500", "timeout", "time out", "outage", "unreachable", "latency spike", "error rate"),
    ),
    ("how-to", ("how do i", "how to", "where can i", "docs", "configure", "set up")),
)
LABELS = tuple(label for label, _ in LABEL_KEYWORDS)
DEFAULT_LABEL = "how-to"
SEVERITY = {"outage": 4, "abuse": 4, "billing": 3, "how-to": 2}
URGENT_WORDS = ("urgent", "tomorrow", "all users", "production")
MAX_SEVERITY = 5

# A keyword counts at the start of a word ("refunds" is billing, "discard" is not "card").
_KEYWORD_PATTERNS = tuple(
    (label, re.compile("|".join(r"\b" + re.escape(word) for word in words)))
    for label, words in LABEL_KEYWORDS
)

# Bounds on what a schema may ask for, so that one request cannot make the server build a
# reply of millions of values. OpenAI's own limits are of the same order (10 levels of nesting).
MAX_DEPTH = 10
MAX_VALUES = 2_000
MAX_ARRAY_ITEMS = 100
DEFAULT_ARRAY_ITEMS = 2

_FILLER_TEXT = (
    "the request waits for a free slot while the cache keeps the shared prefix and the reply "
    "streams one token per step to the client"
)
_FILLER_WORDS = tuple(_FILLER_TEXT.split())
_NAMED_STRINGS = {
    "name": "Ada Lovelace",
    "firstname": "Ada",
    "lastname": "Lovelace",
    "city": "Lyon",
    "country": "France",
    "language": "English",
    "title": "Slow first token after a deploy",
    "summary": "The first token takes seconds because every prompt starts cold.",
    "reason": "The ticket mentions the keyword of its category.",
    "description": "A short description of the ticket.",
    "answer": "Put the stable part of the prompt first.",
    "id": "t-000",
    "customer": "Ada Lovelace",
    "user": "ada",
    "username": "ada",
    "email": "student@example.com",
    "phone": "+44 20 7946 0000",
    "url": "https://example.com/ticket/1",
    "sku": "SKU-1024",
    "status": "open",
    "date": "2026-01-15",
}
_FORMATTED_STRINGS = {
    "date": "2026-01-15",
    "date-time": "2026-01-15T09:30:00Z",
    "time": "09:30:00",
    "email": "student@example.com",
    "uri": "https://example.com/ticket/1",
    "url": "https://example.com/ticket/1",
    "uuid": "6f1c2b1e-8f3a-4c57-9b0d-2a4e5c6d7e8f",
    "hostname": "api.example.com",
    "ipv4": "192.0.2.10",
    "ipv6": "2001:db8::10",
}


class SchemaError(ValueError):
    """A JSON schema the server cannot fill; ``where`` is the JSON pointer of the bad part."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{message} (at {where or '/'})")
        self.where = where


# --------------------------------------------------------------------------- the classifier


@dataclass(frozen=True)
class Ticket:
    """The course's ticket classifier's answer for one ticket text."""

    true_label: str
    category: str
    severity: int

    @property
    def next_action(self) -> str:
        return f"route to {self.category} queue"

    def as_dict(self) -> dict[str, object]:
        return {"category": self.category, "severity": self.severity, "next_action": self.next_action}


def true_label(text: str) -> str:
    lowered = text.lower()
    for label, pattern in _KEYWORD_PATTERNS:
        if pattern.search(lowered):
            return label
    return DEFAULT_LABEL


def classify(text: str, model_id: str = "", accuracy: float = BASE_MODEL_ACCURACY) -> Ticket:
    """The label a model with ``accuracy`` predicts for ``text``: the same answer every time."""
    truth = true_label(text)
    draw = random.Random(f"label\x00{model_id}\x00{text}")
    if draw.random() < accuracy:
        predicted = truth
    else:
        predicted = draw.choice([label for label in LABELS if label != truth])
    lowered = text.lower()
    urgent = any(word in lowered for word in URGENT_WORDS)
    severity = min(MAX_SEVERITY, SEVERITY[predicted] + (1 if urgent else 0))
    return Ticket(true_label=truth, category=predicted, severity=severity)


# --------------------------------------------------------------------------- which mode


def asks_for_json(prompt: str) -> bool:
    """Whether a prompt asks for JSON in words (the course's rule: it says "json", any case)."""
    return "json" in prompt.lower()


def breaks_json(prompt: str) -> bool:
    """Whether JSON asked for only in the prompt comes back broken: a seeded draw, ~12% true."""
    # Seeded by the prompt under a prefix of its own, so the draw is independent of the
    # reply's length, which the model draws from the bare prompt text.
    return random.Random(f"json-in-prompt\x00{prompt}").random() < PROMPT_ONLY_BREAK_SHARE


def compact(value: object) -> str:
    """JSON text with one space after each separator: it streams as one word per chunk."""
    return json.dumps(value, ensure_ascii=False)


def prompt_only_reply(prompt: str, ticket: Ticket) -> str:
    """The reply to JSON asked for in words: the classifier's object, broken for ~12% of prompts."""
    text = compact(ticket.as_dict())
    if breaks_json(prompt):
        return BROKEN_PREFIX + text[:-BROKEN_CUT_CHARS]
    return text


# --------------------------------------------------------------------------- filling a schema


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


_HINT_NAMES = {
    "category": "category",
    "label": "category",
    "class": "category",
    "classification": "category",
    "severity": "severity",
    "priority": "severity",
    "nextaction": "next_action",
    "action": "next_action",
}


class _Filler:
    """One schema's value; ``rng`` is seeded by the request so a prompt gets the same reply."""

    def __init__(
        self,
        root: Mapping[str, object],
        rng: random.Random,
        hints: Mapping[str, object],
        max_tokens: int | None = None,
    ) -> None:
        self.root = root
        self.rng = rng
        self.hints = hints
        self.values = 0
        self.max_tokens = max_tokens
        # Characters the schema's minLengths demand so far: a reply of max_tokens tokens holds
        # about max_tokens × CHARS_PER_TOKEN of them (the course's characters ÷ 4 rule).
        self.demanded_chars = 0

    # -- schema plumbing

    def resolve(self, schema: object, where: str) -> tuple[object, str]:
        seen = 0
        while isinstance(schema, Mapping) and "$ref" in schema:
            ref = schema["$ref"]
            if not isinstance(ref, str) or not ref.startswith("#"):
                raise SchemaError(where, "only local references ($ref starting with #) are supported")
            target: object = self.root
            for part in (p for p in ref[1:].split("/") if p):
                part = part.replace("~1", "/").replace("~0", "~")
                if isinstance(target, Mapping) and part in target:
                    target = target[part]
                # ASCII digits, no longer than the list's length: "²" is a digit to isdigit() and
                # no number to int(), which also refuses more than 4,300 digits.
                elif (
                    isinstance(target, list)
                    and part.isascii()
                    and part.isdigit()
                    and len(part) <= len(str(len(target)))
                    and int(part) < len(target)
                ):
                    target = target[int(part)]
                else:
                    raise SchemaError(where, f"the reference {ref[:80]!r} points at nothing")
            schema, where = target, ref[1:]
            seen += 1
            if seen > MAX_DEPTH:
                raise SchemaError(where, "references that never end")
        return schema, where

    def value(self, schema: object, where: str, depth: int, name: str = "") -> object:
        if depth > MAX_DEPTH:
            raise SchemaError(where, f"a schema nested deeper than {MAX_DEPTH} levels")
        self.values += 1
        if self.values > MAX_VALUES:
            raise SchemaError(where, f"a schema that asks for more than {MAX_VALUES} values")
        schema, where = self.resolve(schema, where)
        if schema is True or schema == {}:
            return self.string({}, where, name)
        if not isinstance(schema, Mapping):
            raise SchemaError(
                where, "a schema that no value satisfies" if schema is False else "not a schema"
            )
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.enum(schema["enum"], where, name)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.value(self.choose_option(schema[key], where + "/" + key), where, depth + 1, name)
        if "allOf" in schema:
            return self.value(self.merge(schema, where), where, depth + 1, name)
        kind = self.kind(schema, where)
        if kind == "object":
            return self.object(schema, where, depth)
        if kind == "array":
            return self.array(schema, where, depth, name)
        if kind == "string":
            return self.string(schema, where, name)
        if kind == "integer":
            return self.integer(schema, where, name)
        if kind == "number":
            return self.number(schema, where)
        if kind == "boolean":
            return self.rng.random() < 0.5
        return None

    def kind(self, schema: Mapping[str, object], where: str) -> str:
        kind = schema.get("type")
        if isinstance(kind, list):
            named = [k for k in kind if k != "null"]
            kind = named[0] if named else "null"
        if kind is None:
            if "properties" in schema or "required" in schema:
                return "object"
            if "items" in schema or "prefixItems" in schema:
                return "array"
            return "string"
        if kind not in ("object", "array", "string", "integer", "number", "boolean", "null"):
            raise SchemaError(where, f"unknown type {str(kind)[:40]!r}")
        return str(kind)

    def choose_option(self, options: object, where: str) -> object:
        """The first option that is not just null: a real model fills a field when it can."""
        if not isinstance(options, list) or not options:
            raise SchemaError(where, "a list of schemas is needed")
        for option in options:
            resolved, _ = self.resolve(option, where)
            if not (isinstance(resolved, Mapping) and resolved.get("type") == "null"):
                return option
        return options[0]

    def merge(self, schema: Mapping[str, object], where: str) -> dict[str, object]:
        parts = schema["allOf"]
        if not isinstance(parts, list):
            raise SchemaError(where + "/allOf", "a list of schemas is needed")
        merged: dict[str, object] = {k: v for k, v in schema.items() if k != "allOf"}
        properties: dict[str, object] = dict(merged.get("properties") or {})  # type: ignore[call-overload]
        required: list[object] = list(merged.get("required") or [])  # type: ignore[call-overload]
        for i, part in enumerate(parts):
            resolved, _ = self.resolve(part, f"{where}/allOf/{i}")
            if not isinstance(resolved, Mapping):
                continue
            properties.update(resolved.get("properties") or {})  # type: ignore[call-overload]
            required.extend(resolved.get("required") or [])  # type: ignore[call-overload]
            merged.update({k: v for k, v in resolved.items() if k not in ("properties", "required")})
        if properties:
            merged["properties"] = properties
        if required:
            merged["required"] = list(dict.fromkeys(required))
        return merged

    # -- values

    def hint(self, name: str) -> object:
        key = _HINT_NAMES.get(_norm(name))
        return self.hints.get(key) if key else None

    def enum(self, options: object, where: str, name: str) -> object:
        if not isinstance(options, list) or not options:
            raise SchemaError(where + "/enum", "an enum needs at least one value")
        hint = self.hint(name)
        if hint is not None:
            for option in options:
                if option == hint or (isinstance(option, str) and _norm(option) == _norm(str(hint))):
                    return option
        return self.rng.choice(options)

    def object(self, schema: Mapping[str, object], where: str, depth: int) -> dict[str, object]:
        properties = schema.get("properties") or {}
        if not isinstance(properties, Mapping):
            raise SchemaError(where + "/properties", "properties must be an object")
        required = schema.get("required")
        if required is None:
            names = list(properties)  # nothing marked required: a model fills what it is shown
        elif isinstance(required, list) and all(isinstance(n, str) for n in required):
            names = list(dict.fromkeys(required))
        else:
            raise SchemaError(where + "/required", "required must be a list of names")
        return {
            str(n): self.value(properties.get(n, {}), f"{where}/properties/{n}", depth + 1, str(n))
            for n in names
        }

    def array(self, schema: Mapping[str, object], where: str, depth: int, name: str) -> list[object]:
        low = _count(schema, "minItems", 0, where)
        high = _count(schema, "maxItems", MAX_ARRAY_ITEMS, where)
        if low > min(high, MAX_ARRAY_ITEMS):
            raise SchemaError(where, f"an array of {low} items or more (at most {MAX_ARRAY_ITEMS} here)")
        n = min(max(low, DEFAULT_ARRAY_ITEMS), high)
        prefix = schema.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        items = schema.get("items", {})
        return [
            self.value(prefix[i] if i < len(prefix) else items, f"{where}/items", depth + 1, name)
            for i in range(n)
        ]

    def string(self, schema: Mapping[str, object], where: str, name: str) -> str:
        low = _count(schema, "minLength", 0, where)
        self.demanded_chars += low
        if self.max_tokens is not None and self.demanded_chars > self.max_tokens * CHARS_PER_TOKEN:
            raise SchemaError(
                where,
                f"a minLength of {low}, more text than max_tokens {self.max_tokens} can hold "
                f"(about {self.max_tokens * CHARS_PER_TOKEN} characters in all)",
            )
        hint = self.hint(name)
        fmt = schema.get("format")
        if hint is not None:
            text = str(hint)
        elif isinstance(fmt, str) and fmt in _FORMATTED_STRINGS:
            text = _FORMATTED_STRINGS[fmt]
        elif _norm(name) in _NAMED_STRINGS:
            text = _NAMED_STRINGS[_norm(name)]
        else:
            start = self.rng.randrange(len(_FILLER_WORDS))
            text = " ".join(_FILLER_WORDS[(start + i) % len(_FILLER_WORDS)] for i in range(4))
        high = _count(schema, "maxLength", max(low, len(text)), where)
        if len(text) < low:
            # Whole filler words, built in one pass: the work follows the length of the text.
            more = [text]
            size = len(text)
            while size < low:
                word = _FILLER_WORDS[size % len(_FILLER_WORDS)]
                more.append(word)
                size += 1 + len(word)
            text = " ".join(more)
        text = text[:high].rstrip() if high < len(text) else text
        return text if len(text) >= low else text.ljust(low, "x")

    def integer(self, schema: Mapping[str, object], where: str, name: str) -> int:
        low, high = _bounds(schema, where, integer=True)
        lo = int(low) if low is not None else (int(high) - 9 if high is not None and high < 1 else 1)
        hi = int(high) if high is not None else lo + 9
        step = schema.get("multipleOf")
        if not (isinstance(step, int) and not isinstance(step, bool) and step > 0):
            step = 1
        # The allowed values are first, first + step, ... (count of them), worked out by
        # arithmetic: a range of 10**18 costs what a range of 10 does (a list would not).
        first = -(-lo // step) * step
        count = (hi - first) // step + 1 if first <= hi else 0
        if count <= 0:
            raise SchemaError(where, "an integer range that holds no value")
        hint = self.hint(name)
        if isinstance(hint, int) and not isinstance(hint, bool):
            # The allowed value nearest the hint, the lower one on a tie.
            k = min(max((hint - first) // step, 0), count - 1)
            below = first + k * step
            above = below + step
            return above if k + 1 < count and abs(above - hint) < abs(below - hint) else below
        return first + self.rng.randrange(count) * step

    def number(self, schema: Mapping[str, object], where: str) -> float:
        low, high = _bounds(schema, where)
        lo = low if low is not None else (high - 10.0 if high is not None else 0.0)
        hi = high if high is not None else lo + 10.0
        if lo > hi:
            raise SchemaError(where, "a number range that holds no value")
        value = round(lo + (hi - lo) * self.rng.uniform(0.25, 0.75), 2)
        return value if lo < value < hi or lo == hi else (lo + hi) / 2


def _count(schema: Mapping[str, object], key: str, default: int, where: str) -> int:
    value = schema.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SchemaError(where, f"{key} must be a whole number of at least 0")
    return value


def _bounds(
    schema: Mapping[str, object], where: str, *, integer: bool = False
) -> tuple[float | None, float | None]:
    """The tightest lower and upper bounds; for integers, the lowest and highest whole values.

    Both spellings of exclusive bounds are read: a number (JSON Schema 6 and later) and a
    boolean beside ``minimum``/``maximum`` (draft 4).
    """

    def number(key: str) -> float | None:
        value = schema.get(key)
        if value is None or isinstance(value, bool):
            return None
        try:
            if not isinstance(value, int | float) or not math.isfinite(value):
                raise SchemaError(where, f"{key} must be a number")
            return float(value)
        except OverflowError:  # an integer beyond any float, such as 10**400
            raise SchemaError(where, f"a {key} too large for a number") from None

    def exclusive(key: str, bound: str) -> tuple[float | None, bool]:
        if schema.get(key) is True:
            return number(bound), True
        value = number(key)
        return (value, True) if value is not None else (number(bound), False)

    lows: list[float] = []
    highs: list[float] = []
    for key, bound, into, up in (
        ("exclusiveMinimum", "minimum", lows, True),
        ("exclusiveMaximum", "maximum", highs, False),
    ):
        for value, strict in (exclusive(key, bound), (number(bound), False)):
            if value is None:
                continue
            if integer:
                whole = math.floor(value) + 1 if strict else math.ceil(value)
                if not up:
                    whole = math.ceil(value) - 1 if strict else math.floor(value)
                into.append(float(whole))
            else:
                into.append(value)
    low = max(lows) if lows else None
    high = min(highs) if highs else None
    if low is not None and high is not None and low > high:
        raise SchemaError(where, "a range whose minimum is above its maximum")
    return low, high


def fill_schema(
    schema: object,
    seed: str,
    hints: Mapping[str, object] | None = None,
    max_tokens: int | None = None,
) -> object:
    """A value that satisfies ``schema`` (its types, bounds, enums, required properties).

    ``hints`` (the classifier's ``category``, ``severity``, ``next_action``) fill properties of
    those names where the schema allows them; everything else is drawn from ``seed``.
    Raises :class:`SchemaError` for a schema it cannot fill, and, given ``max_tokens``, for
    minLengths that demand more text than that many tokens hold. The work is in proportion to
    the value built (at most MAX_VALUES values), never to a range's width or a length asked for.
    """
    root = schema if isinstance(schema, Mapping) else {}
    return _Filler(root, random.Random(seed), hints or {}, max_tokens).value(schema, "", 0)


def words(text: str) -> tuple[str, ...]:
    """The reply's chunks: split at single spaces, so joining them with spaces gives it back."""
    return tuple(text.split(" "))
