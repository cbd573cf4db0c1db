"""Bad requests get OpenAI-style error objects with a fitting status, and leave the server idle."""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from openai import OpenAI

from felab_sim.engine.sweep.prompts import prompt_tokens
from felab_sim.practice import MAX_BODY_BYTES, MODEL_ID

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
OK_MESSAGES = [{"role": "user", "content": "hello"}]
# httpx gives up after 5 s by default; on a machine shared with other test runs a reply can
# stall that long without anything being wrong with the server.
PATIENT_S = 60.0


def chat(**fields: object) -> bytes:
    return json.dumps({"model": MODEL_ID, "messages": OK_MESSAGES, **fields}).encode()


def without(key: str) -> bytes:
    body = {"model": MODEL_ID, "messages": OK_MESSAGES}
    del body[key]
    return json.dumps(body).encode()


def assert_error(response: httpx.Response, status: int, code: str | None, param: str | None) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"}
    error = body["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error"
    assert isinstance(error["message"], str)
    assert error["message"]
    assert error["code"] == code
    assert error["param"] == param
    return error


BAD_BODIES = [
    # (path, body, status, code, param)
    pytest.param(CHAT, b"{not json", 400, "invalid_json", None, id="malformed-json"),
    pytest.param(CHAT, b"", 400, "invalid_json", None, id="empty-body"),
    pytest.param(CHAT, b"\xff\xfe{}", 400, "invalid_json", None, id="not-utf8"),
    pytest.param(CHAT, b"[" * 100_000, 400, "invalid_json", None, id="nested-too-deep"),
    pytest.param(
        CHAT, b'{"model": "felab-practice", "max_tokens": NaN}', 400, "invalid_json", None, id="nan"
    ),
    pytest.param(CHAT, b"[1, 2]", 400, "invalid_request_body", None, id="array-body"),
    pytest.param(CHAT, b'"hi"', 400, "invalid_request_body", None, id="string-body"),
    pytest.param(CHAT, without("messages"), 422, "missing_required_parameter", "messages", id="no-messages"),
    pytest.param(CHAT, without("model"), 422, "missing_required_parameter", "model", id="no-model"),
    pytest.param(CHAT, chat(model=5), 422, "invalid_type", "model", id="model-number"),
    pytest.param(CHAT, chat(model="gpt-4o"), 404, "model_not_found", "model", id="unknown-model"),
    pytest.param(CHAT, chat(messages="hi"), 422, "invalid_type", "messages", id="messages-string"),
    pytest.param(CHAT, chat(messages=[]), 422, "empty_array", "messages", id="messages-empty"),
    pytest.param(CHAT, chat(messages=[1]), 422, "invalid_type", "messages[0]", id="message-number"),
    pytest.param(
        CHAT,
        chat(messages=[{"content": "hi"}]),
        422,
        "missing_required_parameter",
        "messages[0].role",
        id="message-no-role",
    ),
    pytest.param(
        CHAT,
        chat(messages=[{"role": "user", "content": 5}]),
        422,
        "invalid_type",
        "messages[0].content",
        id="content-number",
    ),
    pytest.param(
        CHAT,
        chat(messages=[{"role": "user", "content": [{"type": "text", "text": 1}]}]),
        422,
        "invalid_type",
        "messages[0].content[0].text",
        id="content-part-text-number",
    ),
    pytest.param(CHAT, chat(max_tokens=0), 422, "integer_below_min_value", "max_tokens", id="max-tokens-0"),
    pytest.param(
        CHAT, chat(max_tokens=-5), 422, "integer_below_min_value", "max_tokens", id="max-tokens-neg"
    ),
    pytest.param(
        CHAT, chat(max_tokens=4097), 422, "integer_above_max_value", "max_tokens", id="max-tokens-huge"
    ),
    pytest.param(CHAT, chat(max_tokens="10"), 422, "invalid_type", "max_tokens", id="max-tokens-string"),
    pytest.param(CHAT, chat(max_tokens=True), 422, "invalid_type", "max_tokens", id="max-tokens-bool"),
    pytest.param(CHAT, chat(max_tokens=2.5), 422, "invalid_type", "max_tokens", id="max-tokens-float"),
    pytest.param(
        CHAT,
        chat(max_completion_tokens=0),
        422,
        "integer_below_min_value",
        "max_completion_tokens",
        id="max-completion-tokens-0",
    ),
    pytest.param(CHAT, chat(stream="yes"), 422, "invalid_type", "stream", id="stream-string"),
    pytest.param(
        CHAT,
        chat(stream_options={"include_usage": True}),
        422,
        "invalid_value",
        "stream_options",
        id="stream-options-without-stream",
    ),
    pytest.param(
        CHAT,
        chat(stream=True, stream_options=[1]),
        422,
        "invalid_type",
        "stream_options",
        id="stream-options-list",
    ),
    pytest.param(
        CHAT,
        chat(stream=True, stream_options={"include_usage": "yes"}),
        422,
        "invalid_type",
        "stream_options.include_usage",
        id="include-usage-string",
    ),
    pytest.param(CHAT, chat(n=2), 422, "invalid_value", "n", id="n-2"),
    pytest.param(
        COMPLETIONS,
        json.dumps({"model": MODEL_ID}).encode(),
        422,
        "missing_required_parameter",
        "prompt",
        id="completions-no-prompt",
    ),
    pytest.param(
        COMPLETIONS,
        json.dumps({"model": MODEL_ID, "prompt": 5}).encode(),
        422,
        "invalid_type",
        "prompt",
        id="completions-prompt-number",
    ),
    pytest.param(
        COMPLETIONS,
        json.dumps({"model": MODEL_ID, "prompt": ["a", "b"]}).encode(),
        422,
        "invalid_type",
        "prompt",
        id="completions-several-prompts",
    ),
    pytest.param(
        COMPLETIONS,
        json.dumps({"model": MODEL_ID, "prompt": "hi", "max_tokens": 0}).encode(),
        422,
        "integer_below_min_value",
        "max_tokens",
        id="completions-max-tokens-0",
    ),
    pytest.param(
        CHAT,
        chat(response_format="json"),
        422,
        "invalid_type",
        "response_format",
        id="response-format-string",
    ),
    pytest.param(
        CHAT,
        chat(response_format={}),
        422,
        "missing_required_parameter",
        "response_format.type",
        id="response-format-no-type",
    ),
    pytest.param(
        CHAT,
        chat(response_format={"type": "yaml"}),
        422,
        "invalid_value",
        "response_format.type",
        id="response-format-unknown-type",
    ),
    pytest.param(
        CHAT,
        chat(response_format={"type": "json_schema"}),
        422,
        "missing_required_parameter",
        "response_format.json_schema",
        id="json-schema-missing",
    ),
    pytest.param(
        CHAT,
        chat(response_format={"type": "json_schema", "json_schema": {"schema": {}}}),
        422,
        "missing_required_parameter",
        "response_format.json_schema.name",
        id="json-schema-no-name",
    ),
    pytest.param(
        CHAT,
        chat(response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": [1]}}),
        422,
        "invalid_type",
        "response_format.json_schema.schema",
        id="json-schema-not-an-object",
    ),
    pytest.param(
        CHAT,
        chat(response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": False}}),
        422,
        "invalid_json_schema",
        "response_format.json_schema.schema",
        id="json-schema-unsatisfiable",
    ),
    pytest.param(
        CHAT,
        chat(
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "x", "schema": {"type": "array", "minItems": 10**9}},
            }
        ),
        422,
        "invalid_json_schema",
        "response_format.json_schema.schema",
        id="json-schema-too-large",
    ),
    pytest.param(
        CHAT,
        chat(response_format={"type": [[[]]]}),
        422,
        "invalid_value",
        "response_format.type",
        id="response-format-type-array",
    ),
    # A lone surrogate escape is valid JSON syntax but not text: once a 500 (issue 13).
    pytest.param(
        CHAT,
        chat(messages=[{"role": "user", "content": "hi \ud800 there"}]),
        400,
        "invalid_unicode",
        "messages[0].content",
        id="lone-high-surrogate-in-message",
    ),
    pytest.param(
        CHAT,
        chat(messages=[{"role": "user", "content": [{"type": "text", "text": "\udc00"}]}], stream=True),
        400,
        "invalid_unicode",
        "messages[0].content[0].text",
        id="lone-low-surrogate-in-content-part-streamed",
    ),
    pytest.param(
        CHAT, chat(model="mod\ud800el"), 400, "invalid_unicode", "model", id="lone-surrogate-in-model"
    ),
    pytest.param(
        CHAT,
        chat(messages=[{"role": "user", "content": "hi", "\udfff": 1}]),
        400,
        "invalid_unicode",
        "messages[0].\\udfff",
        id="lone-surrogate-in-a-key",
    ),
    pytest.param(
        COMPLETIONS,
        json.dumps({"model": MODEL_ID, "prompt": "\ud83d"}).encode(),
        400,
        "invalid_unicode",
        "prompt",
        id="completions-lone-surrogate",
    ),
]


@pytest.mark.parametrize(("path", "body", "status", "code", "param"), BAD_BODIES)
def test_bad_request_bodies(server, path, body, status, code, param):
    response = httpx.post(
        server.url + path, content=body, headers={"content-type": "application/json"}, timeout=PATIENT_S
    )
    assert_error(response, status, code, param)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/"),
        ("GET", "/v1"),
        ("GET", "/v1/nothing"),
        ("POST", "/v2/chat/completions"),
        ("POST", "/v1/chat/completions/"),
        ("GET", "/health/"),
    ],
)
def test_unknown_paths_are_404(server, method, path):
    error = assert_error(
        httpx.request(method, server.url + path, timeout=PATIENT_S), 404, "unknown_url", None
    )
    assert path in error["message"]


def test_unknown_model_card_is_404(server):
    assert_error(httpx.get(f"{server.api}/models/gpt-4o", timeout=PATIENT_S), 404, "model_not_found", "model")


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("GET", CHAT, "POST"),
        ("PUT", COMPLETIONS, "POST"),
        ("POST", "/health", "GET"),
        ("DELETE", "/v1/models", "GET"),
        ("POST", f"/v1/models/{MODEL_ID}", "GET"),
    ],
)
def test_wrong_methods_are_405(server, method, path, allowed):
    response = httpx.request(method, server.url + path, timeout=PATIENT_S)
    assert_error(response, 405, "method_not_allowed", None)
    assert response.headers["allow"] == allowed


def test_declared_body_over_1_mib_is_413(server):
    body = b" " * (MAX_BODY_BYTES + 1)
    assert_error(
        httpx.post(server.url + CHAT, content=body, timeout=PATIENT_S), 413, "request_too_large", None
    )


def test_streamed_body_over_1_mib_is_413(server):
    """Without a Content-Length the limit is enforced while reading, piece by piece."""

    def pieces():
        for _ in range(40):
            yield b" " * 65_536  # 2.5 MiB in all

    response = httpx.post(server.url + CHAT, content=pieces(), timeout=PATIENT_S)
    assert "content-length" not in response.request.headers
    assert_error(response, 413, "request_too_large", None)


def test_body_of_exactly_1_mib_is_accepted(server):
    body = chat(max_tokens=2)
    padded = body[:-1] + b" " * (MAX_BODY_BYTES - len(body)) + b"}"
    assert len(padded) == MAX_BODY_BYTES
    response = httpx.post(server.url + CHAT, content=padded, timeout=PATIENT_S)
    assert response.status_code == 200
    assert response.json()["usage"]["completion_tokens"] == 2


@pytest.mark.parametrize("depth", [900, 990, 1_100])
def test_a_schema_nested_as_deep_as_the_parser_goes_is_never_a_500(server, depth):
    """Deep nesting where the filler never looks (an unknown keyword): answered, or refused."""
    schema = b'{"type": "string", "x": ' + b"[" * depth + b"]" * depth + b"}"
    body = b'{"model": "felab-practice", "messages": [{"role": "user", "content": "hi"}], '
    body += (
        b'"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": '
        + schema
        + b"}}}"
    )
    response = httpx.post(server.url + CHAT, content=body, timeout=PATIENT_S)
    if response.status_code == 200:
        assert isinstance(json.loads(response.json()["choices"][0]["message"]["content"]), str)
    else:
        assert_error(response, 400, "invalid_json", None)


def test_a_whole_surrogate_pair_is_text_and_accepted(server):
    body = json.dumps({"model": MODEL_ID, "messages": [{"role": "user", "content": "smile \U0001f600"}]})
    assert "\\ud83d\\ude00" in body  # escaped as a pair, as JSON encoders do
    response = httpx.post(server.url + CHAT, content=body.encode(), timeout=PATIENT_S)
    assert response.status_code == 200, response.text
    assert response.json()["usage"]["prompt_tokens"] == prompt_tokens("smile \U0001f600")


def test_the_connection_is_still_usable_after_an_error(server):
    with httpx.Client(base_url=server.url, timeout=PATIENT_S) as client:
        assert client.post(CHAT, content=b"{").status_code == 400
        assert client.post(CHAT, content=b" " * (MAX_BODY_BYTES + 10)).status_code == 413
        assert client.post(CHAT, content=chat(max_tokens=1)).status_code == 200


def test_the_official_client_raises_its_typed_errors(server):
    client = OpenAI(base_url=server.api, api_key="x", max_retries=0)
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="gpt-4o", messages=OK_MESSAGES)
    assert missing.value.code == "model_not_found"
    with pytest.raises(openai.UnprocessableEntityError) as out_of_range:
        client.chat.completions.create(model=MODEL_ID, messages=OK_MESSAGES, max_tokens=0)
    assert out_of_range.value.param == "max_tokens"
    with pytest.raises(openai.UnprocessableEntityError):
        client.chat.completions.create(model=MODEL_ID, messages=[])


def test_errors_leave_the_server_idle(server):
    for body in (b"{", chat(max_tokens=0), chat(model="nope")):
        httpx.post(server.url + CHAT, content=body, timeout=PATIENT_S)
    assert server.health()["active"] == 0
    assert server.health()["waiting"] == 0
