"""Replies report the prefix cache's hits as usage.prompt_tokens_details.cached_tokens.

The worked example is lesson 06's formula: a 12,200-character prompt whose first 12,120
characters were sent before has 47 whole 256-character blocks cached, 3,008 tokens.
"""

from __future__ import annotations

import uuid

import pytest
from openai import OpenAI

from felab_sim.engine.sweep.prefix_cache import PrefixCache
from felab_sim.engine.sweep.prompts import prompt_tokens
from felab_sim.practice import MODEL_ID


@pytest.fixture
def client(server) -> OpenAI:
    return OpenAI(base_url=server.api, api_key="x", max_retries=0)


def shared_text(chars: int) -> str:
    """Text no earlier test sent, so its blocks start cold on the session's shared server."""
    head = f"Preamble {uuid.uuid4().hex}. "
    body = "Tools: search, fetch, summarise. Policy: answer briefly and cite. "
    text = head + body * (chars // len(body) + 1)
    return text[:chars]


def ask(client: OpenAI, prompt: str, **extra: object):
    return client.chat.completions.create(
        model=MODEL_ID, messages=[{"role": "user", "content": prompt}], max_tokens=2, **extra
    )


def test_the_courses_worked_example_caches_3008_tokens(client):
    shared = shared_text(12_120)
    first = ask(client, shared + "Q" * 80)
    second = ask(client, shared + "R" * 80)
    assert len(shared + "R" * 80) == 12_200
    assert first.usage.prompt_tokens == second.usage.prompt_tokens == 3_050
    assert first.usage.prompt_tokens_details.cached_tokens == 0
    assert second.usage.prompt_tokens_details.cached_tokens == 3_008


def test_one_early_change_caches_nothing(client):
    shared = shared_text(4_000)
    ask(client, "Asked at 10:01. " + shared)
    again = ask(client, "Asked at 10:02. " + shared)
    assert again.usage.prompt_tokens_details.cached_tokens == 0
    # The same prompt once more is cached up to its last whole block.
    repeat = ask(client, "Asked at 10:02. " + shared)
    text = "Asked at 10:02. " + shared
    assert repeat.usage.prompt_tokens_details.cached_tokens == len(text) // 256 * 64


def test_cached_tokens_match_the_models_cache_over_a_conversation(client):
    """A growing conversation, as an agent sends it: every turn reuses all earlier whole blocks."""
    model_cache = PrefixCache()
    system = {"role": "system", "content": shared_text(1_500)}
    messages = [system]
    for turn in range(5):
        messages = [*messages, {"role": "user", "content": f"Question {turn}: " + "why? " * (40 + 13 * turn)}]
        reply = client.chat.completions.create(model=MODEL_ID, messages=messages, max_tokens=2)
        prompt = "\n".join(m["content"] for m in messages)
        expected = prompt_tokens(prompt) - model_cache.uncached_tokens(prompt)
        assert reply.usage.prompt_tokens_details.cached_tokens == expected
        messages.append({"role": "assistant", "content": reply.choices[0].message.content})
    assert expected > 0


def test_a_streamed_reply_reports_cached_tokens_in_its_usage_chunk(client):
    shared = shared_text(2_048)
    ask(client, shared)
    stream = client.chat.completions.create(
        model=MODEL_ID,
        messages=[{"role": "user", "content": shared + " and then?"}],
        max_tokens=3,
        stream=True,
        stream_options={"include_usage": True},
    )
    *_, usage_chunk = list(stream)
    assert usage_chunk.usage.prompt_tokens_details.cached_tokens == 2_048 // 4


def test_the_completions_endpoint_reports_cached_tokens_too(client):
    shared = shared_text(1_024)
    client.completions.create(model=MODEL_ID, prompt=shared, max_tokens=1)
    reply = client.completions.create(model=MODEL_ID, prompt=shared + "?", max_tokens=1)
    assert reply.usage.prompt_tokens_details.cached_tokens == 256
