"""The practice server speaks OpenAI's wire format: the official client works against it unchanged."""

from __future__ import annotations

import asyncio
import json
import sys

import httpx
import pytest
from openai import AsyncOpenAI, OpenAI

from felab_sim.engine.sweep.prompts import output_tokens, prompt_tokens, sweep_prompt
from felab_sim.practice import MODEL_ID

PROMPT = "Explain in one paragraph why a decode step grows with the batch."


def natural_length(prompt: str) -> int:
    """The reply's seeded length when nothing caps it."""
    return output_tokens(prompt, sys.maxsize)


@pytest.fixture
def client(server) -> OpenAI:
    return OpenAI(base_url=server.api, api_key="x", max_retries=0)


def words(text: str) -> list[str]:
    return text.split(" ")


def test_models_lists_the_one_model(client):
    assert [m.id for m in client.models.list()] == [MODEL_ID]
    assert client.models.retrieve(MODEL_ID).id == MODEL_ID


def test_health_reports_the_slots(server):
    assert server.health() == {
        "status": "ok",
        "active": 0,
        "waiting": 0,
        "slots": 8,
        "params": {"slots": 8, "step_ms": 2.0, "growth": 0.06, "prefill_tok_s": 2500.0},
    }


def test_chat_not_streamed(client):
    reply = client.chat.completions.create(
        model=MODEL_ID, messages=[{"role": "user", "content": PROMPT}], max_tokens=5
    )
    assert reply.object == "chat.completion"
    assert reply.id.startswith("chatcmpl-")
    assert reply.model == MODEL_ID
    [choice] = reply.choices
    assert choice.message.role == "assistant"
    assert len(words(choice.message.content)) == 5
    assert choice.finish_reason == "length"
    assert reply.usage.completion_tokens == 5
    assert reply.usage.prompt_tokens == prompt_tokens(PROMPT)
    assert reply.usage.total_tokens == 5 + prompt_tokens(PROMPT)


def test_chat_streamed_one_word_per_chunk(client):
    chunks = list(
        client.chat.completions.create(
            model=MODEL_ID, messages=[{"role": "user", "content": PROMPT}], max_tokens=6, stream=True
        )
    )
    *content, last = chunks
    assert len(content) == 6
    assert len({c.id for c in chunks}) == 1
    assert {c.object for c in chunks} == {"chat.completion.chunk"}
    assert {c.model for c in chunks} == {MODEL_ID}
    # The assistant role comes with the first content, and only there.
    assert content[0].choices[0].delta.role == "assistant"
    assert all(c.choices[0].delta.role is None for c in content[1:])
    assert all(c.choices[0].delta.content for c in content)
    assert all(c.choices[0].finish_reason is None for c in content)
    assert last.choices[0].finish_reason == "length"
    assert not last.choices[0].delta.content
    assert all(c.usage is None for c in chunks)  # no usage chunk unless asked for
    streamed = "".join(c.choices[0].delta.content for c in content)
    assert len(words(streamed)) == 6

    whole = client.chat.completions.create(
        model=MODEL_ID, messages=[{"role": "user", "content": PROMPT}], max_tokens=6
    )
    assert whole.choices[0].message.content == streamed


def test_include_usage_adds_a_final_usage_chunk(client):
    chunks = list(
        client.chat.completions.create(
            model=MODEL_ID,
            messages=[{"role": "user", "content": PROMPT}],
            max_tokens=4,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    *rest, usage_chunk = chunks
    assert usage_chunk.choices == []
    assert usage_chunk.usage.completion_tokens == 4
    assert usage_chunk.usage.prompt_tokens == prompt_tokens(PROMPT)
    assert usage_chunk.usage.total_tokens == 4 + prompt_tokens(PROMPT)
    assert all(c.usage is None for c in rest)
    assert rest[-1].choices[0].finish_reason == "length"


def test_max_completion_tokens_is_honoured(client):
    reply = client.chat.completions.create(
        model=MODEL_ID, messages=[{"role": "user", "content": PROMPT}], max_completion_tokens=3
    )
    assert reply.usage.completion_tokens == 3
    assert reply.choices[0].finish_reason == "length"
    # Both caps given: both hold, so the smaller wins.
    for kwargs in (
        {"max_tokens": 7, "max_completion_tokens": 2},
        {"max_tokens": 2, "max_completion_tokens": 7},
    ):
        reply = client.chat.completions.create(
            model=MODEL_ID, messages=[{"role": "user", "content": PROMPT}], **kwargs
        )
        assert reply.usage.completion_tokens == 2


def test_finish_reason_is_stop_when_the_reply_ends_on_its_own(client):
    natural = natural_length(PROMPT)
    uncapped = client.chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": PROMPT}])
    assert uncapped.usage.completion_tokens == natural
    assert uncapped.choices[0].finish_reason == "stop"

    exact = client.chat.completions.create(
        model=MODEL_ID, messages=[{"role": "user", "content": PROMPT}], max_tokens=natural, stream=True
    )
    *content, last = list(exact)
    assert len(content) == natural
    assert last.choices[0].finish_reason == "stop"

    cut = client.chat.completions.create(
        model=MODEL_ID, messages=[{"role": "user", "content": PROMPT}], max_tokens=natural - 1
    )
    assert cut.usage.completion_tokens == natural - 1
    assert cut.choices[0].finish_reason == "length"


@pytest.mark.parametrize("i", [0, 5, 13])
def test_output_lengths_are_the_models(client, i):
    """A one-message chat draws its length from the message text, exactly as the simulator does."""
    prompt = sweep_prompt(i)
    reply = client.chat.completions.create(
        model=MODEL_ID, messages=[{"role": "user", "content": prompt}], max_tokens=128
    )
    assert reply.usage.completion_tokens == output_tokens(prompt, 128)


def test_completions_streamed_and_not(client):
    reply = client.completions.create(model=MODEL_ID, prompt=PROMPT)
    assert reply.object == "text_completion"
    assert reply.id.startswith("cmpl-")
    # OpenAI's legacy default: 16 tokens unless max_tokens says otherwise.
    assert reply.usage.completion_tokens == 16
    assert len(words(reply.choices[0].text)) == 16
    assert reply.choices[0].finish_reason == "length"

    chunks = list(
        client.completions.create(
            model=MODEL_ID,
            prompt=PROMPT,
            max_tokens=natural_length(PROMPT),
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    *content, last, usage_chunk = chunks
    assert {c.object for c in chunks} == {"text_completion"}
    assert all(c.choices[0].text and c.choices[0].finish_reason is None for c in content)
    assert len(content) == natural_length(PROMPT)
    assert last.choices[0].finish_reason == "stop"
    assert usage_chunk.choices == []
    assert usage_chunk.usage.completion_tokens == natural_length(PROMPT)
    assert "".join(c.choices[0].text for c in content).startswith(reply.choices[0].text)


def test_async_client_streamed_and_not(server):
    async def main() -> tuple[str, str, str | None]:
        client = AsyncOpenAI(base_url=server.api, api_key="x", max_retries=0)
        try:
            whole = await client.chat.completions.create(
                model=MODEL_ID, messages=[{"role": "user", "content": PROMPT}], max_tokens=5
            )
            stream = await client.chat.completions.create(
                model=MODEL_ID, messages=[{"role": "user", "content": PROMPT}], max_tokens=5, stream=True
            )
            parts = []
            finish = None
            async for chunk in stream:
                parts.append(chunk.choices[0].delta.content or "")
                finish = chunk.choices[0].finish_reason or finish
            return whole.choices[0].message.content, "".join(parts), finish
        finally:
            await client.close()

    whole, streamed, finish = asyncio.run(main())
    assert whole == streamed
    assert len(words(whole)) == 5
    assert finish == "length"


def test_stream_is_server_sent_events(server):
    body = {
        "model": MODEL_ID,
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": 3,
        "stream": True,
    }
    with httpx.stream("POST", f"{server.api}/chat/completions", json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        raw = response.read().decode()
    events = raw.split("\n\n")
    assert events[-1] == ""  # every event ends with a blank line
    events = events[:-1]
    assert all(e.startswith("data: ") and "\n" not in e for e in events)
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-1]]
    assert len(chunks) == 4
    assert chunks[0]["choices"][0]["delta"] == {
        "role": "assistant",
        "content": chunks[0]["choices"][0]["delta"]["content"],
    }
    assert [c["choices"][0]["finish_reason"] for c in chunks] == [None, None, None, "length"]
    assert chunks[-1]["choices"][0]["delta"] == {}
    assert all(set(c) == {"id", "object", "created", "model", "choices"} for c in chunks)


def test_content_parts_and_several_messages(client):
    """Content given as parts counts like the same text given as a string."""
    as_parts = client.chat.completions.create(
        model=MODEL_ID,
        messages=[{"role": "user", "content": [{"type": "text", "text": PROMPT}]}],
        max_tokens=4,
    )
    as_string = client.chat.completions.create(
        model=MODEL_ID, messages=[{"role": "user", "content": PROMPT}], max_tokens=4
    )
    assert as_parts.choices[0].message.content == as_string.choices[0].message.content
    assert as_parts.usage.prompt_tokens == as_string.usage.prompt_tokens

    conversation = client.chat.completions.create(
        model=MODEL_ID,
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": PROMPT}],
        max_tokens=4,
    )
    assert conversation.usage.prompt_tokens == prompt_tokens("Be brief.\n" + PROMPT)
