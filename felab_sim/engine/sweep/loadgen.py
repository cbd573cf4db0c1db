"""Real measurements over HTTP against any OpenAI-compatible server: lesson 03's concurrency
sweep, and the client lesson 06's prefix-cache run streams its requests through
(felab_sim/engine/sweep/prefix_cache_run.py).

The procedure is docs/architecture.md's ("The practice server and the sweep"), and the
metrics are :func:`felab_sim.engine.sweep.metrics.level_metrics` itself, so a measured sweep and a
simulated one differ only in where their timings come from:

* one warm-up request first, then per level C: ``requests_at_level(C)`` requests with the
  unique prompts ``sweep_prompt(i)``, all queued at once, at most C in flight (a semaphore);
* streamed chat completions with ``max_tokens``; ``time.perf_counter()`` when a request is
  sent and when each content chunk (non-empty ``delta.content``) arrives;
* a level's wall time runs from its first send to its last stream's end.

Pure asyncio and httpx, no Django: the management command, the web page's worker and the
benchmark all call it. Expected failures (nothing listening, HTTP errors, timeouts, a stream
that is not OpenAI's format) raise :class:`LoadgenError` with a one-line message.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import socket
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from .metrics import LevelResult, RequestTiming, SweepResult, capacity, level_metrics
from .prompts import WARMUP_PROMPT, requests_at_level, sweep_prompt
from .sweep_params import SweepParams

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "LevelRun",
    "LoadgenError",
    "ProgressCallback",
    "SweepClient",
    "measure_sweep",
    "run_real_sweep",
]

# How long to wait for any one read: at high C against few slots a request can queue for
# minutes before its first token, and that wait is what the sweep measures.
DEFAULT_TIMEOUT_S = 600.0
CONNECT_TIMEOUT_S = 10.0
WARMUP_MAX_TOKENS = 16

# on_progress(level_index, conc, done_requests, total_requests): once with done = 0 as a level
# starts, then after each request of the level finishes.
ProgressCallback = Callable[[int, int, int, int], None]


class LoadgenError(Exception):
    """A sweep that could not be measured; the message says why, in one line."""


@dataclass(frozen=True)
class LevelRun:
    """One measured level before its metrics: per request its timing and when its stream ended."""

    conc: int
    timings: tuple[RequestTiming, ...]
    ended: tuple[float, ...]
    wall_s: float

    def metrics(self, slo_ms: float) -> LevelResult:
        return level_metrics(self.conc, self.timings, self.wall_s, slo_ms)


def _error_message(response: httpx.Response) -> str:
    """The server's own words from an error response, OpenAI's shape first."""
    try:
        data: Any = response.json()
    except ValueError:
        text = response.text.strip().replace("\n", " ")
        return text[:200] or response.reason_phrase
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        if isinstance(error, str):
            return error
        if isinstance(data.get("detail"), str):
            return data["detail"]
    return json.dumps(data)[:200]


def _root_cause(exc: BaseException) -> str:
    """The innermost OS error's words ("Connection refused"), else the exception's own."""
    reason = str(exc) or type(exc).__name__
    seen = 0
    cause: BaseException | None = exc
    while cause is not None and seen < 10:
        if isinstance(cause, OSError) and cause.strerror:
            # asyncio words a refused connection "Connect call failed (addr)"; the errno says more.
            known = (
                isinstance(cause.errno, int) and cause.errno > 0 and not isinstance(cause, socket.gaierror)
            )
            reason = os.strerror(cause.errno) if known else cause.strerror
        cause = cause.__cause__ or cause.__context__
        seen += 1
    return reason


class SweepClient:
    """Connections to one OpenAI-compatible server, and the sweep's requests over them.

    ``base_url`` is the API root, e.g. ``http://127.0.0.1:8001/v1``. Without ``model``, the
    first model the server lists at ``/models`` is used. Use as ``async with``.

    Each request in flight borrows an httpx client of its own, holding one connection, from a
    free list, and gives it back for the next request: connections are opened once and kept
    between levels, and at most C exist at level C. One shared client with C connections would
    be simpler, but httpx's pool re-examines every connection for every waiting request each
    time a request starts or ends; at C = 128 that took 5 of 6.6 s of the client's CPU, sent
    the level's requests over 0.7 s instead of at once, and put seconds into every TTFT.
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        base_url = base_url.strip().rstrip("/")
        try:
            url = httpx.URL(base_url)
        except (httpx.InvalidURL, TypeError) as exc:
            raise LoadgenError(f"invalid server URL {base_url!r}: {exc}") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise LoadgenError(f"the server URL must look like http://HOST:PORT/v1 (got {base_url!r})")
        self.base_url = base_url
        self.model = model
        self.timeout_s = timeout_s
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # Built once: each client would otherwise load the CA bundle again (~20 ms).
        self._ssl = httpx.create_ssl_context() if url.scheme == "https" else False
        self._idle: list[httpx.AsyncClient] = []
        self._clients: list[httpx.AsyncClient] = []

    async def __aenter__(self) -> SweepClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        clients, self._clients, self._idle = self._clients, [], []
        await asyncio.gather(*(client.aclose() for client in clients), return_exceptions=True)

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[httpx.AsyncClient]:
        """A client with one connection, for one request at a time."""
        if self._idle:
            client = self._idle.pop()
        else:
            client = httpx.AsyncClient(
                headers=self._headers,
                timeout=httpx.Timeout(self.timeout_s, connect=CONNECT_TIMEOUT_S),
                limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
                verify=self._ssl,
                # A proxy from the environment would put its own timing into every number.
                trust_env=False,
            )
            self._clients.append(client)
        try:
            yield client
        finally:
            self._idle.append(client)

    # ----------------------------------------------------------------------- one request

    def _describe(self, exc: httpx.HTTPError, what: str) -> LoadgenError:
        if isinstance(exc, httpx.ConnectTimeout):
            reason = f"no connection within {CONNECT_TIMEOUT_S:g} s"
        elif isinstance(exc, httpx.TimeoutException):
            reason = f"no answer within {self.timeout_s:g} s"
        elif isinstance(exc, httpx.ConnectError):
            reason = f"cannot connect ({_root_cause(exc)}); is the server running?"
        elif isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
            reason = f"the server closed the connection ({exc or type(exc).__name__})"
        else:
            reason = str(exc) or type(exc).__name__
        return LoadgenError(f"{what} {self.base_url}: {reason}")

    async def discover_model(self) -> str:
        """The model to ask for: the one given, or the first the server lists."""
        if self.model:
            return self.model
        url = f"{self.base_url}/models"
        try:
            async with self._connection() as client:
                response = await client.get(url)
        except httpx.HTTPError as exc:
            raise self._describe(exc, "listing models at") from None
        if response.status_code != 200:
            raise LoadgenError(f"GET {url} returned HTTP {response.status_code}: {_error_message(response)}")
        try:
            self.model = str(response.json()["data"][0]["id"])
        except (ValueError, KeyError, IndexError, TypeError):
            raise LoadgenError(f"GET {url} did not list any model in OpenAI's format") from None
        return self.model

    async def stream_chat(self, prompt: str, max_tokens: int) -> tuple[RequestTiming, float]:
        """One streamed chat completion: its timing, and the time its stream ended."""
        timing, ended, _ = await self._stream_chat(prompt, max_tokens, include_usage=False)
        return timing, ended

    async def stream_chat_usage(
        self, prompt: str, max_tokens: int
    ) -> tuple[RequestTiming, dict[str, Any] | None]:
        """One streamed chat completion that asks for usage (``stream_options.include_usage``):
        its timing and the usage object of its last chunk, None if the server sent none."""
        timing, _, usage = await self._stream_chat(prompt, max_tokens, include_usage=True)
        return timing, usage

    async def _stream_chat(
        self, prompt: str, max_tokens: int, *, include_usage: bool
    ) -> tuple[RequestTiming, float, dict[str, Any] | None]:
        model = self.model or await self.discover_model()
        url = f"{self.base_url}/chat/completions"
        payload: dict[str, object] = {
            "model": model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
            "stream": True,
        }
        if include_usage:
            payload["stream_options"] = {"include_usage": True}
        clock = time.perf_counter
        chunks: list[float] = []
        ended: float | None = None
        usage: dict[str, Any] | None = None
        sent = clock()
        try:
            async with self._connection() as client, client.stream("POST", url, json=payload) as response:
                if response.status_code != 200:
                    await response.aread()
                    raise LoadgenError(
                        f"POST {url} returned HTTP {response.status_code}: {_error_message(response)}"
                    )
                # Read to the end of the body even after [DONE]: a response closed early takes its
                # connection with it, and the next request would pay for a new one.
                async for line in response.aiter_lines():
                    now = clock()
                    if ended is not None or not line.startswith("data:"):
                        continue  # blank separators, comments, event names, anything after [DONE]
                    data = line[5:].strip()
                    if data == "[DONE]":
                        ended = now
                        continue
                    event = _stream_event(data, url)
                    if _has_content(event):
                        chunks.append(now)
                    if isinstance(event.get("usage"), dict):
                        usage = event["usage"]
        except httpx.HTTPError as exc:
            raise self._describe(exc, "streaming from") from None
        return RequestTiming(sent, tuple(chunks)), clock() if ended is None else ended, usage

    # ----------------------------------------------------------------------- the sweep

    async def warm_up(self, max_tokens: int = WARMUP_MAX_TOKENS) -> None:
        await self.stream_chat(WARMUP_PROMPT, max_tokens)

    async def run_level(
        self,
        conc: int,
        max_tokens: int,
        n_requests: int | None = None,
        on_done: Callable[[int, int], None] | None = None,
    ) -> LevelRun:
        """Queue all of a level's requests at once, at most ``conc`` in flight.

        ``on_done(k, n)`` is called as the k-th of the n requests (k from 1) finishes.
        """
        n = requests_at_level(conc) if n_requests is None else n_requests
        await self.discover_model()
        gate = asyncio.Semaphore(conc)
        done = 0

        async def one(i: int) -> tuple[RequestTiming, float]:
            nonlocal done
            async with gate:
                result = await self.stream_chat(sweep_prompt(i), max_tokens)
            done += 1
            if on_done is not None:
                on_done(done, n)
            return result

        tasks = [asyncio.create_task(one(i)) for i in range(n)]
        try:
            results = await asyncio.gather(*tasks)
        except BaseException:
            # One failure ends the level: stop the other requests rather than leave them running.
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        timings = tuple(r[0] for r in results)
        ended = tuple(r[1] for r in results)
        wall = max(ended) - min(t.sent for t in timings)
        return LevelRun(conc=conc, timings=timings, ended=ended, wall_s=wall)

    async def sweep(self, params: SweepParams, on_progress: ProgressCallback | None = None) -> SweepResult:
        """The whole sweep of ``params.levels``; the server's own settings are whatever it runs with.

        ``params`` also names the SLO, and is stored in the result as the settings the sweep
        was meant to reproduce (its overheads are the simulator's and play no part here).
        """
        await self.discover_model()
        await self.warm_up(min(WARMUP_MAX_TOKENS, params.max_tokens))
        levels: list[LevelResult] = []
        for index, conc in enumerate(params.levels):
            total = requests_at_level(conc)
            report = None
            if on_progress is not None:
                on_progress(index, conc, 0, total)
                report = functools.partial(on_progress, index, conc)
            run = await self.run_level(conc, params.max_tokens, total, on_done=report)
            levels.append(run.metrics(params.slo_ms))
        results = tuple(levels)
        return SweepResult(params=params, levels=results, capacity=capacity(results, params.slo_ms))


def _stream_event(data: str, url: str) -> dict[str, Any]:
    """One ``data:`` payload of a chat stream as an object; LoadgenError for anything else."""
    try:
        event = json.loads(data)
    except ValueError:
        raise LoadgenError(f"POST {url} streamed something that is not JSON: {data[:80]!r}") from None
    if not isinstance(event, dict):
        raise LoadgenError(f"POST {url} streamed an unexpected value: {data[:80]!r}")
    if "error" in event:
        error = event["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise LoadgenError(f"POST {url} reported an error mid-stream: {message}")
    return event


def _has_content(event: dict[str, Any]) -> bool:
    """Whether one event of a chat stream carries content."""
    for choice in event.get("choices") or ():
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if isinstance(delta, dict) and delta.get("content"):
            return True
    return False


async def measure_sweep(
    base_url: str,
    params: SweepParams | None = None,
    *,
    model: str | None = None,
    api_key: str | None = None,
    on_progress: ProgressCallback | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> SweepResult:
    """Measure the sweep against the server at ``base_url`` (its API root, ending in /v1)."""
    params = params if params is not None else SweepParams()
    async with SweepClient(base_url, model=model, api_key=api_key, timeout_s=timeout_s) as client:
        return await client.sweep(params, on_progress)


def run_real_sweep(
    base_url: str,
    params: SweepParams | None = None,
    *,
    model: str | None = None,
    api_key: str | None = None,
    on_progress: ProgressCallback | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> SweepResult:
    """:func:`measure_sweep` for synchronous callers (a management command, a worker thread)."""
    return asyncio.run(
        measure_sweep(
            base_url, params, model=model, api_key=api_key, on_progress=on_progress, timeout_s=timeout_s
        )
    )
