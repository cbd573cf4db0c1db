"""Lesson 07 against the practice server: constrained JSON always parses and fits its schema;
JSON asked for only in the prompt comes back broken for about 12% of prompts, the same ones
every time. Checked through the official openai client, and the schema filler on its own
against an independent validator (jsonschema)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Literal

import httpx
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai import AsyncOpenAI, OpenAI
from pydantic import BaseModel, Field

from felab_sim.engine.sweep.sweep_params import ServerParams
from felab_sim.practice import MODEL_ID, PracticeApp
from felab_sim.practice.structured import (
    BASE_MODEL_ACCURACY,
    BROKEN_PREFIX,
    LABELS,
    LORA_ACCURACY,
    SchemaError,
    breaks_json,
    classify,
    fill_schema,
    true_label,
)

from .conftest import serving

TICKET_SCHEMA = {
    "type": "object",
    "properties": {
        "category": {"type": "string", "enum": ["abuse", "billing", "outage", "how_to"]},
        "severity": {"type": "integer", "minimum": 1, "maximum": 5},
        "next_action": {"type": "string", "maxLength": 60},
    },
    "required": ["category", "severity", "next_action"],
    "additionalProperties": False,
}
SYSTEM = (
    "Classify the support ticket. Reply with a JSON object: category (abuse, billing, outage "
    "or how_to), severity (1 to 5) and next_action (a short string)."
)
TICKET_SUBJECTS = (
    "My card was declined",
    "The API is down for all users",
    "How do I configure a webhook",
    "Someone is sending phishing mail from my account",
    "I was charged twice, please refund",
    "Latency spike since this morning",
    "Where can I find the docs for batching",
    "Scraping bots are hammering our endpoint",
)


def tickets(n: int) -> list[str]:
    """n distinct tickets: the subjects above, numbered so no two prompts are the same."""
    return [f"Ticket {i}: {TICKET_SUBJECTS[i % len(TICKET_SUBJECTS)]}." for i in range(n)]


def messages(ticket: str, system: str = SYSTEM) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": ticket}]


def parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@pytest.fixture
def client(server) -> OpenAI:
    return OpenAI(base_url=server.api, api_key="x", max_retries=0)


def ask_all(server, prompts: list[list[dict[str, str]]], **extra: object) -> list[str]:
    """Every prompt's reply text, a few at a time over reused connections (the server has 8 slots).

    Opening hundreds of connections at once would test the machine's accept queue under load,
    not the server's replies.
    """

    async def run() -> list[str]:
        gate = asyncio.Semaphore(8)
        client = AsyncOpenAI(base_url=server.api, api_key="x", max_retries=0, timeout=120)

        async def one(m: list[dict[str, str]]) -> str:
            async with gate:
                reply = await client.chat.completions.create(model=MODEL_ID, messages=m, **extra)
            return reply.choices[0].message.content

        async with client:
            return await asyncio.gather(*(one(m) for m in prompts))

    return asyncio.run(run())


# --------------------------------------------------------------------------- through the client


def test_json_asked_in_the_prompt_breaks_for_about_12_percent(server):
    texts = ask_all(server, [messages(t) for t in tickets(300)])
    broken = [not parses(text) for text in texts]
    share = sum(broken) / len(broken)
    assert 0.08 <= share <= 0.16, share
    for text, is_broken in zip(texts, broken, strict=True):
        if is_broken:
            # The course's way of breaking it: a chatty preamble and the last 3 characters cut.
            assert text.startswith(BROKEN_PREFIX)
            assert parses(text.removeprefix(BROKEN_PREFIX) + 'e"}')
        else:
            assert set(json.loads(text)) == {"category", "severity", "next_action"}


def test_which_prompts_break_is_the_same_every_time(server):
    prompts = [messages(t) for t in tickets(60)]
    first = ask_all(server, prompts)
    second = ask_all(server, prompts)
    assert first == second
    # And it is the seeded draw from the prompt text, nothing about the order they arrived in.
    expected = [breaks_json(f"{SYSTEM}\n{t}") for t in tickets(60)]
    assert [not parses(text) for text in first] == expected
    assert any(expected)


def test_json_object_always_parses_and_the_category_is_right_about_three_times_in_four(server):
    ticket_texts = tickets(300)
    texts = ask_all(server, [messages(t) for t in ticket_texts], response_format={"type": "json_object"})
    replies = [json.loads(text) for text in texts]
    assert all(set(r) == {"category", "severity", "next_action"} for r in replies)
    right = sum(r["category"] == true_label(t) for r, t in zip(replies, ticket_texts, strict=True))
    assert 0.68 <= right / len(replies) <= 0.82


def test_json_schema_always_fits_the_schema(server):
    texts = ask_all(
        server,
        [messages(t) for t in tickets(150)],
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "ticket", "schema": TICKET_SCHEMA, "strict": True},
        },
    )
    for text in texts:
        jsonschema.validate(json.loads(text), TICKET_SCHEMA)


def test_json_asked_without_the_word_json_still_gets_json(server):
    """Constrained output does not depend on the prompt saying "json"."""
    prompt = [{"role": "user", "content": "Classify: my invoice is wrong."}]
    [text] = ask_all(server, [prompt], response_format={"type": "json_object"})
    assert json.loads(text)["category"] in LABELS
    [prose] = ask_all(server, [prompt])
    assert not parses(prose)


class Item(BaseModel):
    sku: str
    quantity: int = Field(ge=1, le=3)
    price: float = Field(gt=0, lt=100)


class Order(BaseModel):
    customer: str
    email: str
    items: list[Item]
    status: Literal["open", "shipped", "cancelled"]
    note: str | None
    rush: bool


def test_the_clients_parse_helper_gets_a_pydantic_model(client):
    """The client's own schema (refs, anyOf with null, strict) filled and parsed by pydantic."""
    reply = client.chat.completions.parse(
        model=MODEL_ID, messages=[{"role": "user", "content": "Invent an order."}], response_format=Order
    )
    order = reply.choices[0].message.parsed
    assert isinstance(order, Order)
    assert order.items
    assert all(1 <= item.quantity <= 3 and 0 < item.price < 100 for item in order.items)


def test_a_streamed_json_reply_is_the_same_text_one_word_per_chunk(client):
    fmt = {"type": "json_schema", "json_schema": {"name": "ticket", "schema": TICKET_SCHEMA}}
    whole = client.chat.completions.create(
        model=MODEL_ID, messages=messages("Ticket: refund please"), response_format=fmt
    )
    stream = client.chat.completions.create(
        model=MODEL_ID,
        messages=messages("Ticket: refund please"),
        response_format=fmt,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert "".join(pieces) == whole.choices[0].message.content
    assert len(pieces) == whole.usage.completion_tokens == chunks[-1].usage.completion_tokens
    assert whole.choices[0].finish_reason == "stop"


def test_max_tokens_shorter_than_the_json_cuts_it_and_says_so(client):
    reply = client.chat.completions.create(
        model=MODEL_ID,
        messages=messages("Ticket: refund please"),
        response_format={"type": "json_object"},
        max_tokens=3,
    )
    assert reply.choices[0].finish_reason == "length"
    assert reply.usage.completion_tokens == 3
    assert not parses(reply.choices[0].message.content)


# --------------------------------------------------------------------------- the rules themselves


def test_the_break_draw_is_about_12_percent_over_many_prompts():
    draws = [breaks_json(f"Reply in JSON: ticket {i}") for i in range(20_000)]
    assert 0.11 <= sum(draws) / len(draws) <= 0.13
    assert draws == [breaks_json(f"Reply in JSON: ticket {i}") for i in range(20_000)]


@pytest.mark.parametrize(
    ("ticket", "label"),
    [
        ("Phishing mail asking for a refund", "abuse"),  # abuse is checked before billing
        ("My invoice shows two charges", "billing"),
        ("Refunds never arrive", "billing"),
        ("I discard old logs; how do I keep them?", "how-to"),  # "discard" is not "card"
        ("Requests time out since noon", "outage"),
        ("Error rate above 5%", "outage"),
        ("Hello there", "how-to"),
    ],
)
def test_true_labels_follow_the_keyword_order(ticket, label):
    assert true_label(ticket) == label


@pytest.mark.parametrize(
    ("accuracy", "low", "high"), [(BASE_MODEL_ACCURACY, 0.73, 0.77), (LORA_ACCURACY, 0.915, 0.945)]
)
def test_the_classifier_is_right_at_its_accuracy_and_the_same_every_time(accuracy, low, high):
    ticket_texts = tickets(4_000)
    answers = [classify(t, "m", accuracy).category for t in ticket_texts]
    right = sum(a == true_label(t) for a, t in zip(answers, ticket_texts, strict=True))
    assert low <= right / len(answers) <= high
    assert answers == [classify(t, "m", accuracy).category for t in ticket_texts]


def test_a_lora_model_id_classifies_better(server):
    """The course's mock serves a LoRA model that is right 93% of the time; so does a server
    started with a model id that says lora."""
    params = server.params
    with serving(params, PracticeApp(params, model_id="felab-practice-lora")) as lora:
        client = OpenAI(base_url=lora.api, api_key="x", max_retries=0)
        ticket_texts = tickets(40)
        right = 0
        for t in ticket_texts:
            reply = client.chat.completions.create(
                model="felab-practice-lora", messages=messages(t), response_format={"type": "json_object"}
            )
            right += json.loads(reply.choices[0].message.content)["category"] == true_label(t)
    expected = sum(
        classify(t, "felab-practice-lora", LORA_ACCURACY).category == true_label(t) for t in ticket_texts
    )
    assert right == expected >= 34


def test_severity_follows_the_predicted_label_plus_one_when_urgent():
    for i in range(200):
        calm = classify(f"Ticket {i}: the API is down")
        urgent = classify(f"Ticket {i}: the API is down, urgent, production")
        base = {"outage": 4, "abuse": 4, "billing": 3, "how-to": 2}
        assert calm.severity == base[calm.category]
        assert urgent.severity == min(5, base[urgent.category] + 1)


# --------------------------------------------------------------------------- the schema filler


FILLABLE = [
    TICKET_SCHEMA,
    {
        "type": "array",
        "items": {"type": "integer", "multipleOf": 5, "minimum": 3, "maximum": 12},
        "minItems": 3,
    },
    {"type": "string", "minLength": 50, "maxLength": 60},
    {"type": "string", "format": "date-time"},
    {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.01},
    {"type": "integer", "exclusiveMinimum": 4, "exclusiveMaximum": 6},
    {"type": ["null", "boolean"]},
    {"const": {"fixed": [1, 2]}},
    {"enum": [None, 3, "x"]},
    {
        "$defs": {
            "node": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        },
        "type": "object",
        "properties": {
            "root": {"$ref": "#/$defs/node"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
        },
        "required": ["root", "children"],
    },
    {
        "allOf": [
            {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"b": {"type": "string"}}, "required": ["b"]},
        ]
    },
    {
        "anyOf": [
            {"type": "null"},
            {
                "type": "object",
                "properties": {
                    "deep": {"type": "array", "items": {"type": "array", "items": {"type": "boolean"}}}
                },
            },
        ]
    },
    {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2},
]


@pytest.mark.parametrize("schema", FILLABLE)
def test_the_filler_satisfies_the_schema(schema):
    value = fill_schema(schema, "seed")
    jsonschema.Draft202012Validator(schema).validate(value)
    assert fill_schema(schema, "seed") == value


def test_the_filler_reads_draft_4_exclusive_bounds():
    schema = {
        "type": "integer",
        "minimum": 1,
        "exclusiveMinimum": True,
        "maximum": 3,
        "exclusiveMaximum": True,
    }
    assert fill_schema(schema, "seed") == 2
    jsonschema.Draft4Validator(schema).validate(fill_schema(schema, "seed"))


def test_the_classifiers_answer_fills_the_fields_it_names():
    hints = {"category": "how-to", "severity": 9, "next_action": "route to how-to queue"}
    value = fill_schema(TICKET_SCHEMA, "seed", hints)
    assert value == {"category": "how_to", "severity": 5, "next_action": "route to how-to queue"}


@pytest.mark.parametrize(
    "schema",
    [
        False,
        {"$ref": "#/$defs/missing"},
        {"$ref": "https://example.com/schema.json"},
        {"$defs": {"list": [{"type": "string"}]}, "$ref": "#/$defs/list/²"},
        {"$defs": {"list": [{"type": "string"}]}, "$ref": "#/$defs/list/" + "9" * 5000},
        {"type": "array", "items": {"type": "string"}, "minItems": 1_000},
        {"type": "integer", "minimum": 5, "maximum": 4},
        {"type": "integer", "minimum": 1, "maximum": 4, "multipleOf": 5},
        {"type": "decimal"},
        # Requires itself forever.
        {
            "$defs": {"n": {"type": "object", "properties": {"n": {"$ref": "#/$defs/n"}}, "required": ["n"]}},
            "$ref": "#/$defs/n",
        },
    ],
)
def test_a_schema_that_cannot_be_filled_is_an_error_not_a_crash(schema):
    with pytest.raises(SchemaError):
        fill_schema(schema, "seed")


def test_the_server_refuses_an_unfillable_schema_with_a_422(client):
    import openai

    with pytest.raises(openai.UnprocessableEntityError) as refused:
        client.chat.completions.create(
            model=MODEL_ID,
            messages=messages("hi"),
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "x", "schema": {"$ref": "#/nowhere"}},
            },
        )
    assert refused.value.param == "response_format.json_schema.schema"
    assert "nowhere" in refused.value.message


# Random schemas from a grammar of the keywords the filler knows: whatever it builds must validate.
_leaf = st.one_of(
    st.builds(
        lambda lo, span: {"type": "integer", "minimum": lo, "maximum": lo + span},
        st.integers(-50, 50),
        st.integers(0, 20),
    ),
    st.builds(
        lambda lo, span: {"type": "number", "minimum": lo, "maximum": lo + span},
        st.floats(-1e3, 1e3),
        st.floats(0.5, 100),
    ),
    st.builds(
        lambda lo, extra: {"type": "string", "minLength": lo, "maxLength": lo + extra},
        st.integers(0, 40),
        st.integers(0, 40),
    ),
    st.just({"type": "boolean"}),
    st.just({"type": "null"}),
    st.lists(st.one_of(st.text(max_size=10), st.integers()), min_size=1, max_size=4, unique=True).map(
        lambda e: {"enum": e}
    ),
)


def _extend(children):
    return st.one_of(
        st.dictionaries(
            st.text("abcdefgh_", min_size=1, max_size=8), children, min_size=1, max_size=4
        ).flatmap(
            lambda props: st.lists(st.sampled_from(sorted(props)), unique=True).map(
                lambda req: {"type": "object", "properties": props, "required": req}
            )
        ),
        st.builds(
            lambda items, lo: {"type": "array", "items": items, "minItems": lo, "maxItems": lo + 3},
            children,
            st.integers(0, 3),
        ),
        st.lists(children, min_size=1, max_size=3).map(lambda options: {"anyOf": options}),
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=st.recursive(_leaf, _extend, max_leaves=12), seed=st.text(max_size=20))
def test_any_schema_of_known_keywords_is_filled_validly(schema, seed):
    jsonschema.Draft202012Validator(schema).validate(fill_schema(schema, seed))


# --------------------------------------------------------------------------- hostile schemas


class TooMuchWork(Exception):
    pass


def lines_run(call, limit: int):
    """(call's result, Python lines it ran); stops it with TooMuchWork past ``limit`` lines.

    Counting lines rather than seconds: the bound holds on a loaded machine and a runaway
    fill is stopped at once instead of hanging the suite.
    """
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
            if count > limit:
                raise TooMuchWork(f"more than {limit} lines")
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        result = call()
    finally:
        sys.settrace(previous)
    return result, count


def severity_schema(**bounds: object) -> dict[str, object]:
    return {
        "type": "object",
        "properties": {"severity": {"type": "integer", **bounds}, "n": {"type": "integer", **bounds}},
        "required": ["severity", "n"],
    }


@pytest.mark.parametrize(
    "bounds",
    [
        {"maximum": 1e8},
        {"maximum": 1e18},
        {"minimum": -1e300, "maximum": 1e300},
        {"minimum": 3, "maximum": 10**30, "multipleOf": 7},
    ],
)
def test_a_wide_integer_range_costs_no_more_than_a_narrow_one(bounds):
    schema = severity_schema(**bounds)
    _, narrow = lines_run(lambda: fill_schema(severity_schema(maximum=10), "seed", {"severity": 4}), 10_000)
    value, wide = lines_run(lambda: fill_schema(schema, "seed", {"severity": 4}), 10_000)
    jsonschema.Draft202012Validator(schema).validate(value)
    assert wide < 2 * narrow
    assert value["severity"] == (7 if "multipleOf" in bounds else 4)


def test_a_long_min_length_costs_lines_in_proportion_to_the_text():
    schema = {"type": "string", "minLength": 200_000}
    value, lines = lines_run(lambda: fill_schema(schema, "seed"), 500_000)
    assert len(value) == 200_000
    # Each filler word (about 6 characters) costs a few lines, once.
    assert lines < 200_000


def test_a_min_length_beyond_max_tokens_is_refused_without_building_it():
    schema = {"type": "object", "properties": {"notes": {"type": "string", "minLength": 2_000_000}}}
    with pytest.raises(SchemaError) as refused:
        lines_run(lambda: fill_schema(schema, "seed", max_tokens=128), 10_000)
    assert "/properties/notes" in str(refused.value)
    assert "max_tokens 128" in str(refused.value)


def test_an_integer_bound_beyond_any_float_is_refused():
    with pytest.raises(SchemaError):
        fill_schema({"type": "integer", "maximum": 10**400}, "seed")


def test_the_server_names_a_min_length_that_max_tokens_cannot_hold(client):
    import openai

    with pytest.raises(openai.UnprocessableEntityError) as refused:
        client.chat.completions.create(
            model=MODEL_ID,
            messages=messages("hi"),
            max_tokens=128,
            response_format={
                "type": "json_schema",
                "json_schema": {
                    "name": "x",
                    "schema": {
                        "type": "object",
                        "properties": {"notes": {"type": "string", "minLength": 2_000_000}},
                    },
                },
            },
        )
    assert refused.value.param == "response_format.json_schema.schema"
    assert "/properties/notes" in refused.value.message
    assert "minLength of 2000000" in refused.value.message


def test_health_answers_while_a_hostile_schema_request_streams():
    """A schema with a 10**18-wide range is filled at once, so the server stays free for others."""
    hostile = {
        "model": MODEL_ID,
        "messages": messages("Ticket: the API is down"),
        "stream": True,
        "max_tokens": 200,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "t", "schema": severity_schema(maximum=1e18)},
        },
    }
    with serving(ServerParams(step_ms=50.0)) as slow:
        # The timeout only ends a run that hangs (a filler that never returns); nothing
        # here depends on how long the fill takes.
        with httpx.Client(base_url=slow.url, timeout=30) as http:
            with http.stream("POST", "/v1/chat/completions", json=hostile) as stream:
                assert stream.status_code == 200
                lines = stream.iter_lines()
                next(line for line in lines if '"content":' in line)
                status = http.get("/health").json()
                assert (status["active"], status["waiting"]) == (1, 0)
        slow.wait_idle()
