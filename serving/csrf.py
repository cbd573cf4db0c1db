"""Templates' CSRF token, masked with one draw from the operating system instead of Django's 32.

Django masks the visitor's CSRF secret afresh for every page (so that a compressed response
cannot leak it, the BREACH attack) with ``get_random_string``, which asks the OS for randomness
once per character: 32 system calls and about a hundred Python calls a page, on every signed-in
page of the site (the header's Log out form). The same mask, uniform over the same 62
characters, is drawn here from one ``secrets.token_bytes``. Django's CsrfViewMiddleware checks
the tokens as it checks its own; the secret and its cookie are still Django's.
"""

from __future__ import annotations

import secrets

from django.http import HttpRequest
from django.middleware.csrf import CSRF_ALLOWED_CHARS, get_token
from django.utils.functional import SimpleLazyObject

_CHARACTERS = CSRF_ALLOWED_CHARS
_POSITION = {character: position for position, character in enumerate(_CHARACTERS)}
# A byte below this is kept and read modulo 62, which leaves every character equally likely.
_UNBIASED_BELOW = 256 - 256 % len(_CHARACTERS)


def random_characters(count: int) -> str:
    """``count`` characters drawn uniformly and independently from the CSRF alphabet."""
    drawn: list[str] = []
    while len(drawn) < count:
        drawn += [
            _CHARACTERS[byte % len(_CHARACTERS)]
            for byte in secrets.token_bytes(2 * count)
            if byte < _UNBIASED_BELOW
        ]
    return "".join(drawn[:count])


def masked(secret: str) -> str:
    """The token for ``secret`` as Django builds one: a random mask, then the secret shifted
    character by character by the mask."""
    mask = random_characters(len(secret))
    size = len(_CHARACTERS)
    cipher = "".join(
        _CHARACTERS[(_POSITION[character] + _POSITION[shift]) % size]
        for character, shift in zip(secret, mask, strict=True)
    )
    return mask + cipher


def csrf_token(request: HttpRequest) -> str:
    """What ``django.middleware.csrf.get_token`` returns, for a visitor whose secret is known."""
    secret = request.META.get("CSRF_COOKIE")
    if secret is None:  # a first visit: Django draws the secret and sets its cookie
        return get_token(request)
    request.META["CSRF_COOKIE_NEEDS_UPDATE"] = True  # as get_token: the cookie's expiry renews
    return masked(secret)


def csrf(request: HttpRequest) -> dict[str, object]:
    """A context processor that replaces Django's built-in one (it runs after it)."""
    return {"csrf_token": SimpleLazyObject(lambda: csrf_token(request))}
