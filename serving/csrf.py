"""Templates' CSRF token, masked with one draw from the operating system instead of Django's 32.

Django masks the visitor's CSRF secret afresh for every page (so that a compressed response
cannot leak it, the BREACH attack) with ``get_random_string``, which asks the OS for randomness
once per character: 32 system calls and about a hundred Python calls a page, on every signed-in
page of the site (the header's Log out form). The same mask, uniform over the same 62
characters, is drawn here from one ``secrets.token_bytes``. Django's CsrfViewMiddleware checks
the tokens as it checks its own; the secret and its cookie are still Django's.

Django also sets the CSRF cookie again on every response whose page used the token, only to
push its expiry (a year) back: about 30 µs of every signed-in page, for a header that changes
nothing the visitor can tell. :func:`renew_csrf_cookie_hourly` renews a cookie the visitor sent at
most once an hour in each process (``RENEW_EVERY_S``), so a visitor who comes back within the
year still has it; a new or rotated secret (a first visit, a log in) is set at once, as Django does.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import CSRF_ALLOWED_CHARS, get_token

from .vary import vary_on

_CHARACTERS = CSRF_ALLOWED_CHARS
_SIZE = len(_CHARACTERS)
# A byte below this is kept and read modulo 62, which leaves every character equally likely.
_UNBIASED_BELOW = 256 - 256 % _SIZE
# bytes.translate does the drawing's per-byte work in C: each kept byte to its character, the
# biased ones (248 to 255) deleted.
_BYTE_TO_CHARACTER = bytes(ord(_CHARACTERS[byte % _SIZE]) for byte in range(256))
_BIASED_BYTES = bytes(range(_UNBIASED_BELOW, 256))
# The masked character of each (secret character, mask character) pair, so the cipher is a
# lookup per character done by map() in C.
_SHIFTED = {
    character + shift: _CHARACTERS[(position + shift_position) % _SIZE]
    for position, character in enumerate(_CHARACTERS)
    for shift_position, shift in enumerate(_CHARACTERS)
}


def random_characters(count: int) -> str:
    """``count`` characters drawn uniformly and independently from the CSRF alphabet."""
    drawn = ""
    while len(drawn) < count:
        drawn += secrets.token_bytes(2 * count).translate(_BYTE_TO_CHARACTER, _BIASED_BYTES).decode("ascii")
    return drawn[:count]


def masked(secret: str) -> str:
    """The token for ``secret`` as Django builds one: a random mask, then the secret shifted
    character by character by the mask."""
    mask = random_characters(len(secret))
    return mask + "".join(map(_SHIFTED.__getitem__, map(str.__add__, secret, mask)))


def csrf_token(request: HttpRequest) -> str:
    """What ``django.middleware.csrf.get_token`` returns, for a visitor whose secret is known."""
    secret = request.META.get("CSRF_COOKIE")
    if secret is None:  # a first visit: Django draws the secret and sets its cookie
        return get_token(request)
    request.META["CSRF_COOKIE_NEEDS_UPDATE"] = True  # as get_token: the cookie's expiry renews
    return masked(secret)


class _PageToken:
    """The context's ``csrf_token``: drawn on first use (a page without a form sets no CSRF
    cookie), then the same text for every use on the page.

    A small class of its own rather than ``SimpleLazyObject``: ``{% csrf_token %}`` asks its
    value for truth, equality and ``__html__``, and each is a proxied lookup on a lazy object,
    about forty Python calls a token on pages that carry two or three.
    """

    __slots__ = ("_request", "_text")

    def __init__(self, request: HttpRequest) -> None:
        self._request = request
        self._text: str | None = None

    def __str__(self) -> str:
        if self._text is None:
            self._text = csrf_token(self._request)
        return self._text

    # Letters and digits only (CSRF_ALLOWED_CHARS): nothing in it for HTML to escape.
    __html__ = __str__

    def __bool__(self) -> bool:
        return bool(str(self))

    def __eq__(self, other: object) -> bool:
        return str(self) == other

    def __hash__(self) -> int:
        return hash(str(self))


def hidden_token_input(token: object) -> str:
    """What ``{% csrf_token %}`` writes for the page's token, for tags that build a form's fields
    in Python. The token is letters and digits only: nothing in it to escape."""
    return f'<input type="hidden" name="csrfmiddlewaretoken" value="{token}">'


def csrf(request: HttpRequest) -> dict[str, object]:
    """A context processor that replaces Django's built-in one (it runs after it)."""
    return {"csrf_token": _PageToken(request)}


RENEW_EVERY_S = 3600.0
# Secrets whose cookie this process renewed, and when (most recent last): a few hundred bytes
# per visitor of the last hour, the oldest dropped first past this many.
RENEWALS_KEPT = 20_000
# The renewals' clock; the tests move it.
clock: Callable[[], float] = time.monotonic


class _Renewals:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._at: OrderedDict[str, float] = OrderedDict()

    def due(self, secret: str) -> bool:
        """Whether the cookie holding ``secret`` is to be set again now; if so, noted as done."""
        now = clock()
        with self._lock:
            last = self._at.get(secret)
            if last is not None and now - last < RENEW_EVERY_S:
                return False
            self._at[secret] = now
            self._at.move_to_end(secret)
            if len(self._at) > RENEWALS_KEPT:
                self._at.popitem(last=False)
            return True


_renewals = _Renewals()


def renew_csrf_cookie_hourly(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable:
    """Stands just inside Django's CsrfViewMiddleware (config/settings.py), whose response step
    runs after this one: where the cookie the visitor sent already holds the secret and this
    process renewed it within the hour, it tells Django the cookie needs no update."""

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        meta = request.META
        if (
            meta.get("CSRF_COOKIE_NEEDS_UPDATE")
            and not settings.CSRF_USE_SESSIONS
            and request.COOKIES.get(settings.CSRF_COOKIE_NAME) == meta.get("CSRF_COOKIE")
            and not _renewals.due(meta["CSRF_COOKIE"])
        ):
            meta["CSRF_COOKIE_NEEDS_UPDATE"] = False
            vary_on(response, "Cookie")  # the page still varies with the cookie
        return response

    return middleware
