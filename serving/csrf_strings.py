"""CSRF secrets and masks from one read of the OS's random source, not one per character.

Django draws each CSRF string (a first-time visitor's secret, and the mask of every token a
page renders) with get_random_string, which asks the OS for randomness once per character:
32 system calls, about 0.2 ms on a busy machine, on every page with a form. This draws the
same 32 characters of the same alphabet, each equally likely, from one os.urandom call.
ServingConfig.ready installs it in django.middleware.csrf.
"""

import os

from django.middleware import csrf

ALPHABET = csrf.CSRF_ALLOWED_CHARS
LENGTH = csrf.CSRF_SECRET_LENGTH
# 62 characters fit 4 times in a byte's 256 values; the 8 bytes above 247 are dropped so that
# every character is equally likely.
_USABLE = 256 - 256 % len(ALPHABET)
# Enough bytes that one read almost always suffices (8 of 256 are dropped on average).
_READ = LENGTH + 16


def new_csrf_string() -> str:
    characters: list[str] = []
    while len(characters) < LENGTH:
        characters += [ALPHABET[byte % len(ALPHABET)] for byte in os.urandom(_READ) if byte < _USABLE]
    return "".join(characters[:LENGTH])


def install() -> None:
    """Django's csrf module looks the function up by name each time it draws a string."""
    csrf._get_new_csrf_string = new_csrf_string
