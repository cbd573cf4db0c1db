"""The OpenAI wire format as the practice server speaks it: request checks, chunks and replies.

Status codes: 400 when the body is not a JSON object at all or holds text that is not Unicode
(a lone surrogate escape such as ``"\\ud800"``), 422 when it is one but a field is
missing, of the wrong type or out of range, 404 for unknown paths and models, 405 for a wrong
method, 413 for a body over 1 MiB. Every error carries OpenAI's ``{"error": {"message", "type",
"param", "code"}}`` object, so the official client raises its usual typed exceptions.
"""

from __future__ import annotations

import json
import re
import sys
import uuid
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from felab_sim.engine.sweep.prompts import output_tokens, prompt_tokens
from felab_sim.engine.sweep.sweep_params import MAX_MAX_TOKENS

from . import structured

MODEL_ID = "felab-practice"
MAX_BODY_BYTES = 1 << 20
# OpenAI's legacy completions endpoint stops at 16 tokens unless told otherwise; chat has no
# such default, so a chat reply runs to its drawn length.
COMPLETIONS_DEFAULT_MAX_TOKENS = 16

Kind = Literal["chat", "completion"]

# Filler for the replies: any deterministic words will do, since only their count and timing
# matter to the lesson. A prompt picks where in the list its reply starts.
_FILLER = (
    "tokens batch prefill decode cache slot queue latency throughput stream kernel memory "
    "bandwidth attention weights prompt reply request server client step block prefix median "
    "percentile goodput capacity load sweep level warm steady scale budget model layer head "
    "vector matrix tile fused chunk window context output input rate time"
)
WORDS = tuple(_FILLER.split())


class ApiError(Exception):
    """A request the server refuses, with the HTTP status and OpenAI's error object."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        headers: Sequence[tuple[bytes, bytes]] = (),
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.headers = tuple(headers)

    def payload(self) -> dict[str, object]:
        return {
            "error": {
                "message": self.message,
                "type": "invalid_request_error",
                "param": self.param,
                "code": self.code,
            }
        }


@dataclass(frozen=True)
class Job:
    """One accepted request: what to reply and how."""

    kind: Kind
    prompt: str
    n_tokens: int
    finish_reason: str
    stream: bool
    include_usage: bool
    word_start: int = 0
    # The reply's words when it is not filler prose (a JSON reply), one per streamed chunk.
    words: tuple[str, ...] = ()

    @property
    def prompt_tokens(self) -> int:
        return prompt_tokens(self.prompt)

    def word(self, index: int) -> str:
        word = self.words[index] if self.words else WORDS[(self.word_start + index) % len(WORDS)]
        return word if index == 0 else " " + word

    def text(self) -> str:
        return "".join(self.word(i) for i in range(self.n_tokens))


# --------------------------------------------------------------------------- request checks


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


def parse_body(body: bytes) -> dict[str, object]:
    try:
        data = json.loads(body, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        # ValueError covers bad UTF-8 and bad syntax; RecursionError a deeply nested body.
        detail = str(exc) if isinstance(exc, json.JSONDecodeError) else "could not be decoded"
        raise ApiError(400, f"The request body is not valid JSON: {detail}.", code="invalid_json") from None
    if not isinstance(data, dict):
        raise ApiError(400, "The request body must be a JSON object.", code="invalid_request_body") from None
    if _SURROGATE_ESCAPE.search(body):
        _refuse_lone_surrogates(data)
    return data


# JSON may escape a UTF-16 surrogate (\\ud800 to \\udfff); only one outside a pair decodes to a
# Python string that is not Unicode, which then fails when a reply or the prompt's seed encodes
# it. Bodies without such an escape (nearly all) skip the walk.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown_path(path: str) -> str:
    return path.encode("utf-8", "backslashreplace").decode("utf-8")


def _refuse_lone_surrogates(data: dict[str, object]) -> None:
    """400 naming a field whose text (or a key) holds a lone surrogate."""
    pending: list[tuple[str, object]] = [("", data)]
    while pending:
        path, value = pending.pop()
        if isinstance(value, str) and not _is_unicode(value):
            where = _shown_path(path)
            raise ApiError(
                400,
                f"Invalid '{where}': the text holds a lone UTF-16 surrogate, which is not a "
                "character. Send UTF-8 text, and escape a character beyond U+FFFF as a whole "
                "surrogate pair.",
                param=where,
                code="invalid_unicode",
            )
        if isinstance(value, dict):
            for key, item in value.items():
                inner = f"{path}.{key}" if path else key
                if not _is_unicode(key):
                    where = _shown_path(inner)
                    raise ApiError(
                        400,
                        f"Invalid key '{where}': it holds a lone UTF-16 surrogate, which is not a character.",
                        param=where,
                        code="invalid_unicode",
                    )
                pending.append((inner, item))
        elif isinstance(value, list):
            pending.extend((f"{path}[{i}]", item) for i, item in enumerate(value))


def _type_name(value: object) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "integer" if isinstance(value, int) else "number"
    )


def _wrong_type(param: str, expected: str, value: object) -> ApiError:
    return ApiError(
        422,
        f"Invalid type for '{param}': expected {expected}, but got {_type_name(value)}.",
        param=param,
        code="invalid_type",
    )


def _missing(param: str) -> ApiError:
    return ApiError(
        422, f"Missing required parameter: '{param}'.", param=param, code="missing_required_parameter"
    )


def _optional_bool(data: Mapping[str, object], key: str, param: str | None = None) -> bool:
    value = data.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _wrong_type(param or key, "a boolean", value)
    return value


def _optional_token_cap(data: Mapping[str, object], param: str) -> int | None:
    value = data.get(param)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _wrong_type(param, "an integer", value)
    if value < 1:
        raise ApiError(
            422,
            f"Invalid '{param}': integer below minimum value. Expected a value >= 1, but got {value}.",
            param=param,
            code="integer_below_min_value",
        )
    if value > MAX_MAX_TOKENS:
        raise ApiError(
            422,
            f"Invalid '{param}': integer above maximum value. Expected a value <= {MAX_MAX_TOKENS}, "
            f"but got {value}.",
            param=param,
            code="integer_above_max_value",
        )
    return value


def _check_model(data: Mapping[str, object], model_id: str) -> None:
    if "model" not in data:
        raise _missing("model")
    model = data["model"]
    if not isinstance(model, str):
        raise _wrong_type("model", "a string", model)
    if model != model_id:
        raise ApiError(
            404,
            f"The model '{model[:100]}' does not exist; this server serves '{model_id}'.",
            param="model",
            code="model_not_found",
        )


def _message_text(index: int, message: object) -> str:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        raise _wrong_type(where, "an object", message)
    role = message.get("role")
    if role is None:
        raise _missing(f"{where}.role")
    if not isinstance(role, str):
        raise _wrong_type(f"{where}.role", "a string", role)
    content = message.get("content")
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise _wrong_type(f"{where}.content", "a string or an array of content parts", content)
    texts = []
    for j, part in enumerate(content):
        if not isinstance(part, dict):
            raise _wrong_type(f"{where}.content[{j}]", "an object", part)
        if part.get("type") == "text":
            text = part.get("text")
            if not isinstance(text, str):
                raise _wrong_type(f"{where}.content[{j}].text", "a string", text)
            texts.append(text)
    return "".join(texts)


def _chat_texts(data: Mapping[str, object]) -> tuple[str, str]:
    """The prompt (every message's text, joined by newlines) and the last user message's text."""
    if "messages" not in data:
        raise _missing("messages")
    messages = data["messages"]
    if not isinstance(messages, list):
        raise _wrong_type("messages", "an array", messages)
    if not messages:
        raise ApiError(
            422,
            "Invalid 'messages': empty array. Expected an array with minimum length 1.",
            param="messages",
            code="empty_array",
        )
    # One user message is the prompt itself, so a chat request draws the same output length
    # and prefix-cache blocks as the model does for that prompt text.
    texts = [_message_text(i, m) for i, m in enumerate(messages)]
    user_texts = [text for text, m in zip(texts, messages, strict=True) if m.get("role") == "user"]
    return "\n".join(texts), user_texts[-1] if user_texts else texts[-1]


def _response_format(data: Mapping[str, object]) -> tuple[str, object | None]:
    """The asked format ("text", "json_object" or "json_schema") and the schema, if one is given."""
    value = data.get("response_format")
    if value is None:
        return "text", None
    if not isinstance(value, dict):
        raise _wrong_type("response_format", "an object", value)
    if "type" not in value:
        raise _missing("response_format.type")
    kind = value["type"]
    if kind not in ("text", "json_object", "json_schema"):
        raise ApiError(
            422,
            "Invalid 'response_format.type': expected one of 'text', 'json_object', 'json_schema', "
            f"but got {repr(kind[:40]) if isinstance(kind, str) else 'a ' + _type_name(kind)}.",
            param="response_format.type",
            code="invalid_value",
        )
    if kind != "json_schema":
        return str(kind), None
    if "json_schema" not in value:
        raise _missing("response_format.json_schema")
    spec = value["json_schema"]
    if not isinstance(spec, dict):
        raise _wrong_type("response_format.json_schema", "an object", spec)
    if "name" not in spec:
        raise _missing("response_format.json_schema.name")
    if not isinstance(spec["name"], str):
        raise _wrong_type("response_format.json_schema.name", "a string", spec["name"])
    schema = spec.get("schema")
    if schema is not None and not isinstance(schema, dict | bool):
        raise _wrong_type("response_format.json_schema.schema", "an object", schema)
    if "strict" in spec and spec["strict"] is not None and not isinstance(spec["strict"], bool):
        raise _wrong_type("response_format.json_schema.strict", "a boolean", spec["strict"])
    return "json_schema", schema


def _json_reply(
    data: Mapping[str, object], prompt: str, ticket_text: str, model_id: str, max_tokens: int
) -> str | None:
    """The reply's text when it is JSON (lesson 07; see ``structured``), else None for prose.

    A schema whose minLengths need more than ``max_tokens`` is refused rather than filled and
    cut: the reply could never satisfy it, and filling it would cost the server time for text
    it would not send.
    """
    kind, schema = _response_format(data)
    if kind == "text" and not structured.asks_for_json(prompt):
        return None
    accuracy = structured.LORA_ACCURACY if "lora" in model_id.lower() else structured.BASE_MODEL_ACCURACY
    ticket = structured.classify(ticket_text, model_id, accuracy)
    if kind == "text":
        return structured.prompt_only_reply(prompt, ticket)
    if schema is None:
        return structured.compact(ticket.as_dict())
    try:
        # Seeded by the prompt and the schema: the same request always gets the same values.
        seed = f"{prompt}\x00{json.dumps(schema, sort_keys=True)}"
        value = structured.fill_schema(schema, seed, ticket.as_dict(), max_tokens)
    except (structured.SchemaError, RecursionError) as exc:
        reason = str(exc) if isinstance(exc, structured.SchemaError) else "a schema nested this deep"
        raise ApiError(
            422,
            f"Invalid 'response_format.json_schema.schema': this server cannot fill {reason}.",
            param="response_format.json_schema.schema",
            code="invalid_json_schema",
        ) from None
    return structured.compact(value)


def _completion_prompt(data: Mapping[str, object]) -> str:
    if "prompt" not in data:
        raise _missing("prompt")
    prompt = data["prompt"]
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        return prompt[0]
    if not isinstance(prompt, str):
        raise _wrong_type("prompt", "a string (one prompt per request)", prompt)
    return prompt


def parse_request(kind: Kind, data: Mapping[str, object], model_id: str = MODEL_ID) -> Job:
    """Check a chat or completions request body (already a JSON object) and plan its reply."""
    if kind == "chat":
        prompt, ticket_text = _chat_texts(data)
    else:
        prompt = ticket_text = _completion_prompt(data)
    _check_model(data, model_id)
    caps = [
        cap
        for cap in (
            _optional_token_cap(data, "max_tokens"),
            _optional_token_cap(data, "max_completion_tokens") if kind == "chat" else None,
        )
        if cap is not None
    ]
    if not caps and kind == "completion":
        caps = [COMPLETIONS_DEFAULT_MAX_TOKENS]
    n = data.get("n")
    if n is not None and (isinstance(n, bool) or n != 1):
        raise ApiError(
            422, "Invalid 'n': this server returns exactly one choice.", param="n", code="invalid_value"
        )
    stream = _optional_bool(data, "stream")
    options = data.get("stream_options")
    include_usage = False
    if options is not None:
        if not isinstance(options, dict):
            raise _wrong_type("stream_options", "an object", options)
        if not stream:
            raise ApiError(
                422,
                "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                param="stream_options",
                code="invalid_value",
            )
        include_usage = _optional_bool(options, "include_usage", "stream_options.include_usage")

    # JSON replies (chat only: response_format is a chat parameter) have the length of their
    # text; prose has the seeded draw. With both caps given, both are honoured. A cap shorter
    # than a JSON reply cuts it, with finish_reason "length", as OpenAI's servers do.
    json_text = (
        _json_reply(data, prompt, ticket_text, model_id, min(caps, default=MAX_MAX_TOKENS))
        if kind == "chat"
        else None
    )
    reply_words = structured.words(json_text) if json_text is not None else ()
    natural = len(reply_words) if reply_words else output_tokens(prompt, sys.maxsize)
    n_tokens = min([natural, *caps])
    return Job(
        kind=kind,
        prompt=prompt,
        n_tokens=n_tokens,
        finish_reason="length" if n_tokens < natural else "stop",
        stream=stream,
        include_usage=include_usage,
        word_start=zlib.crc32(prompt.encode("utf-8", "surrogatepass")) % len(WORDS),
        words=reply_words,
    )


# --------------------------------------------------------------------------- replies


def dumps(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


class Reply:
    """The chunks and the whole response for one job, in the wire format of its endpoint."""

    def __init__(self, job: Job, model_id: str, created: int) -> None:
        self.job = job
        self.chat = job.kind == "chat"
        prefix = "chatcmpl-" if self.chat else "cmpl-"
        self.head = {
            "id": prefix + uuid.uuid4().hex,
            "object": "chat.completion.chunk" if self.chat else "text_completion",
            "created": created,
            "model": model_id,
        }
        if job.include_usage:
            # OpenAI's convention: with include_usage every chunk has the key, null until the last.
            self.head["usage"] = None

    def usage(self, cached_tokens: int) -> dict[str, object]:
        """OpenAI's usage object; ``cached_tokens`` are the prompt tokens the prefix cache held."""
        prompt = self.job.prompt_tokens
        return {
            "prompt_tokens": prompt,
            "completion_tokens": self.job.n_tokens,
            "total_tokens": prompt + self.job.n_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        }

    def _choice(self, text: str, finish_reason: str | None, *, first: bool = False) -> dict[str, object]:
        if self.chat:
            delta = {"role": "assistant", "content": text} if first else {"content": text} if text else {}
            return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return {"index": 0, "text": text, "logprobs": None, "finish_reason": finish_reason}

    def token_event(self, index: int) -> bytes:
        choice = self._choice(self.job.word(index), None, first=index == 0)
        return b"data: " + dumps({**self.head, "choices": [choice]}) + b"\n\n"

    def closing_events(self, cached_tokens: int) -> bytes:
        """The finish chunk, the usage chunk if asked for, and the end marker."""
        events = [dumps({**self.head, "choices": [self._choice("", self.job.finish_reason)]})]
        if self.job.include_usage:
            events.append(dumps({**self.head, "choices": [], "usage": self.usage(cached_tokens)}))
        return b"".join(b"data: " + e + b"\n\n" for e in events) + b"data: [DONE]\n\n"

    def whole(self, cached_tokens: int) -> bytes:
        text = self.job.text()
        if self.chat:
            choice: dict[str, object] = {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "logprobs": None,
                "finish_reason": self.job.finish_reason,
            }
            obj = "chat.completion"
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": self.job.finish_reason}
            obj = "text_completion"
        head = {k: v for k, v in self.head.items() if k != "usage"}
        return dumps({**head, "object": obj, "choices": [choice], "usage": self.usage(cached_tokens)})
