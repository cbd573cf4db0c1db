"""The practice server: a raw ASGI app whose timing follows lesson 03's rules (docs/architecture.md, "The practice server and the sweep").

Why a hand-written ASGI app rather than Django views: the lesson measures this server's
timing to a few percent, and each streamed token is one scheduled send. A Django async view
would run every request through the middleware stack and, for any sync middleware, through
``sync_to_async`` thread hops that add jitter of their own, and it would need settings and an
app registry just to start. A small ASGI callable keeps the hot path to one coroutine per
request, a JSON dump per token and uvicorn's write, and can be imported without Django.

How a request is timed (the same :class:`~felab_sim.engine.sweep.sweep_params.ServerParams` as the simulator):

* A request takes a slot, first come first served (:class:`Slots`); the active count includes
  requests still prefilling, and queued requests do not count.
* Prefill lasts ``prefill_ms(uncached tokens)``, with the shared :class:`PrefixCache`; the
  prompt tokens it found cached are reported as ``usage.prompt_tokens_details.cached_tokens``.
* After each token is sent, the next one is due one decode step later, the step's length read
  from the active count at that moment; after the last token one more step passes before the
  slot is released and the stream closed.
* Steps are scheduled on the loop's monotonic clock against absolute deadlines (``deadline +=
  step``, then sleep until it), so a late wake-up shortens the next sleep instead of pushing
  every later token back: errors do not add up over a reply.
* A watcher task waits for ``http.disconnect`` beside each reply; a client that goes away
  cancels its reply at once, and the reply's ``finally`` frees its slot (or leaves the queue).
  Waiting for a failed send would not do: uvicorn drops sends to a closed connection silently,
  and a reply sleeping through a long step would hold its slot until then.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from felab_sim.engine.serving.pacing import EnginePacing
from felab_sim.engine.sweep.prefix_cache import PrefixCache
from felab_sim.engine.sweep.sweep_params import ServerParams

from .slots import Slots
from .wire import MAX_BODY_BYTES, MODEL_ID, ApiError, Job, Kind, Reply, dumps, parse_body, parse_request

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

JSON_HEADERS = [(b"content-type", b"application/json")]
SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
_MODEL_PREFIX = "/v1/models/"


class ClientGone(Exception):
    """The client disconnected before its request body was read."""


async def _send_json(
    send: Send, status: int, body: bytes, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*JSON_HEADERS, (b"content-length", str(len(body)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def read_body(scope: Scope, receive: Receive, limit: int = MAX_BODY_BYTES) -> bytes:
    """The whole request body, refused with 413 as soon as it is known to exceed ``limit``.

    A declared Content-Length over the limit is refused before reading anything; otherwise
    the count is checked after every piece, so at most one piece beyond the limit is held.
    uvicorn discards whatever the client still sends after the response.
    """
    too_large = ApiError(
        413,
        f"The request body is larger than the limit of {limit} bytes.",
        code="request_too_large",
    )
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                declared = int(value)
            except ValueError:
                declared = 0
            if declared > limit:
                raise too_large
    pieces: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        piece = message.get("body", b"")
        size += len(piece)
        if size > limit:
            raise too_large
        pieces.append(piece)
        if not message.get("more_body", False):
            return b"".join(pieces)


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _sleep_until(loop: asyncio.AbstractEventLoop, deadline: float) -> None:
    delay = deadline - loop.time()
    if delay > 0:
        await asyncio.sleep(delay)


class PracticeApp:
    """The ASGI application. One instance holds the server's state: slots and prefix cache."""

    def __init__(
        self, params: ServerParams | EnginePacing | None = None, *, model_id: str = MODEL_ID
    ) -> None:
        # ServerParams: lesson 03's fixed slots; EnginePacing: the continuous-batching engine's
        # step times (``practice_server --engine continuous``). Both answer the same questions.
        self.params = params if params is not None else ServerParams()
        self.model_id = model_id
        self.slots = Slots(self.params.slots)
        # Tokens of context the running requests hold (prompt and tokens so far): the engine's
        # step reads each one's KV; the fixed-slot step ignores it.
        self.context_tokens = 0
        self.cache = PrefixCache()
        # Decode steps that came more than a whole step late (a stalled loop: a busy machine, or a
        # client reading too slowly), each after which the schedule started again, and the
        # seconds they were late in all (a stall seen by two running replies counts twice). While
        # these stay put, the server kept its rules' pace; a measurement taken while they grew
        # by much did not.
        self.late_steps = 0
        self.late_s = 0.0
        self.started = int(time.time())
        self._routes: dict[str, tuple[str, Callable[[Scope, Receive, Send], Awaitable[None]]]] = {
            "/health": ("GET", self._health),
            "/v1/models": ("GET", self._models),
            "/v1/chat/completions": ("POST", self._chat),
            "/v1/completions": ("POST", self._completions),
        }

    def status(self) -> dict[str, object]:
        p = self.params
        return {
            "status": "ok",
            "active": self.slots.active,
            "waiting": self.slots.waiting,
            "slots": p.slots,
            "params": p.as_flat(),
        }

    def _model_card(self) -> dict[str, object]:
        return {"id": self.model_id, "object": "model", "created": self.started, "owned_by": "felab"}

    # ----------------------------------------------------------------------- ASGI entry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "websocket":
            await receive()
            await send({"type": "websocket.close", "code": 1003})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope["path"]
        method: str = scope["method"]
        try:
            route = self._routes.get(path)
            if route is None and path.startswith(_MODEL_PREFIX) and len(path) > len(_MODEL_PREFIX):
                route = ("GET", self._model)
            if route is None:
                raise ApiError(404, f"Invalid URL ({method} {path}).", code="unknown_url")
            allowed, handler = route
            if method != allowed:
                raise ApiError(
                    405,
                    f"Method {method} is not allowed for {path}; use {allowed}.",
                    code="method_not_allowed",
                    headers=[(b"allow", allowed.encode())],
                )
            await handler(scope, receive, send)
        except ApiError as err:
            await _send_json(send, err.status, dumps(err.payload()), err.headers)
        except ClientGone:
            pass

    # ----------------------------------------------------------------------- small endpoints

    async def _health(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _send_json(send, 200, dumps(self.status()))

    async def _models(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _send_json(send, 200, dumps({"object": "list", "data": [self._model_card()]}))

    async def _model(self, scope: Scope, receive: Receive, send: Send) -> None:
        model = scope["path"].removeprefix(_MODEL_PREFIX)
        if model != self.model_id:
            raise ApiError(
                404, f"The model '{model[:100]}' does not exist.", param="model", code="model_not_found"
            )
        await _send_json(send, 200, dumps(self._model_card()))

    # ----------------------------------------------------------------------- completions

    async def _chat(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._complete("chat", scope, receive, send)

    async def _completions(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._complete("completion", scope, receive, send)

    async def _complete(self, kind: Kind, scope: Scope, receive: Receive, send: Send) -> None:
        job = parse_request(kind, parse_body(await read_body(scope, receive)), self.model_id)
        reply = Reply(job, self.model_id, int(time.time()))

        if job.stream:
            await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})

            async def emit(index: int) -> None:
                await send(
                    {"type": "http.response.body", "body": reply.token_event(index), "more_body": True}
                )

        else:

            async def emit(index: int) -> None:
                pass

        generating = asyncio.create_task(self._generate(job, emit))
        watching = asyncio.create_task(_until_disconnect(receive))
        try:
            await asyncio.wait((generating, watching), return_when=asyncio.FIRST_COMPLETED)
        finally:
            watching.cancel()
            generating.cancel()  # a no-op once it is done
            # Let the reply run its `finally` (the slot's release) before the handler returns.
            with contextlib.suppress(asyncio.CancelledError):
                await generating
        if generating.cancelled():
            return  # the client left; its slot is already free
        cached_tokens = generating.result()
        if job.stream:
            await send(
                {
                    "type": "http.response.body",
                    "body": reply.closing_events(cached_tokens),
                    "more_body": False,
                }
            )
        else:
            await _send_json(send, 200, reply.whole(cached_tokens))

    async def _generate(self, job: Job, emit: Callable[[int], Awaitable[None]]) -> int:
        """Hold a slot for the reply's prefill, its tokens and the step after the last one.

        Returns how many of the prompt's tokens the prefix cache held.
        """
        loop = asyncio.get_running_loop()
        params = self.params
        slots = self.slots
        granted = await slots.acquire()
        held = job.prompt_tokens
        self.context_tokens += held
        try:
            # The cache is read when the slot is granted, as a server reads it when prefill starts:
            # a twin request queued behind the first finds its blocks already there.
            uncached = self.cache.uncached_tokens(job.prompt)
            deadline = granted + params.prefill_ms(uncached) / 1000.0
            await _sleep_until(loop, deadline)
            for index in range(job.n_tokens):
                await emit(index)
                held += 1
                self.context_tokens += 1
                step = params.decode_step_ms(slots.active, self.context_tokens) / 1000.0
                deadline += step
                now = loop.time()
                if deadline <= now:
                    # More than a whole step late (a stalled loop, or a client reading so slowly
                    # that the send waited): start the clock again rather than burst tokens out
                    # back to back to catch up, which no real server would do.
                    self.late_steps += 1
                    self.late_s += now - deadline + step
                    deadline = now + step
                await asyncio.sleep(deadline - now)
        finally:
            self.context_tokens -= held
            slots.release()
        return job.prompt_tokens - uncached
