"""How the practice server runs under uvicorn; shared by the management command and the tests."""

from __future__ import annotations

import importlib.util
import logging
import socket
from collections.abc import Awaitable, Callable

import uvicorn

from .timing import new_event_loop

# On shutdown, streams still running are cut after this long instead of being waited for.
GRACEFUL_SHUTDOWN_S = 3
# Longer than uvicorn's 5 s default: a sweep's client keeps its connections between levels,
# and a connection closed under it mid-reuse would cost a retry and a skewed TTFT.
KEEP_ALIVE_S = 60


def http_implementation() -> str:
    return "httptools" if importlib.util.find_spec("httptools") else "h11"


def uvicorn_config(app: Callable[..., Awaitable[None]], *, log_level: int = logging.INFO) -> uvicorn.Config:
    """uvicorn settings for ``app`` (a :class:`PracticeApp`): one worker, asyncio's selector
    loop with fine-grained timers (see ``timing``), no access log.

    Serve with ``uvicorn.Server(config).run(sockets=[sock])`` on a socket already listening.
    """
    return uvicorn.Config(
        app,
        loop=new_event_loop,  # uvicorn takes a loop factory here as well as a name
        http=http_implementation(),
        lifespan="on",
        workers=1,
        access_log=False,
        log_level=log_level,
        timeout_keep_alive=KEEP_ALIVE_S,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )


def listen_socket(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A listening TCP socket for ``uvicorn.Server.run(sockets=...)``; raises OSError.

    Made with the protocol number spelled out: asyncio turns Nagle's algorithm off only on
    sockets whose ``proto`` is IPPROTO_TCP, accepted sockets copy it from the listener, and
    ``socket.create_server`` leaves it 0. With Nagle on, a token written while the previous
    write waits for the client's delayed ACK is held back up to 40 ms and arrives glued to the
    next one: the first token of every reply on a reused connection came one step late.
    """
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock
