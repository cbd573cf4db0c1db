"""One limit on every view that checks a password, per client address and per account tried."""

import functools
import hashlib
import unicodedata

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from serving.ratelimit import View, address_key, refusal

# The longest username or address Django's forms accept (EmailField's 254; usernames 150).
_LONGEST_ACCOUNT = 254


def _submitted_account(request: HttpRequest) -> str:
    """Whose password this request tries: the username or e-mail typed into a log-in or
    reset form, else the signed-in user's (changing a password, deleting an account), spelled
    as Django looks it up. The log-in forms' UsernameField strips the username and normalises it
    to NFKC before the backend's exact match, so `ｆrank` (a full-width f) is `frank`; the reset
    form matches an address by NFKC then case-folding (django.contrib.auth.forms.
    _unicode_ci_compare). Case is folded for usernames too: sign-up refuses a username that
    differs from another only in case, so each spelling is one account, and one count."""
    typed = request.POST.get("username") or request.POST.get("email") or ""
    if not typed and request.user.is_authenticated:
        typed = request.user.get_username()
    # Bounded as Django bounds it: a longer value fails the form before any lookup.
    return unicodedata.normalize("NFKC", typed.strip()[:_LONGEST_ACCOUNT]).casefold()


def limit_password_attempts(view: View) -> View:
    """Every view that checks a password goes through this one limit.

    settings.RATE_LIMITS["login"] = (attempts, window) counts POSTs twice, per client address
    and per account tried, so neither one address guessing many accounts nor many addresses
    guessing one account gets past it; a request over either count is a 429 that never reaches
    the password check. The address count is the one ``rate_limited("login")`` keeps, so the
    views still wrapped that way (sign-up) share it.
    """

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        limit, window = settings.RATE_LIMITS["login"]
        if request.method == "POST" and limit > 0:
            keys = [address_key("login", request)]
            if account := _submitted_account(request):
                keys.append(f"ratelimit:login-account:{hashlib.sha256(account.encode()).hexdigest()[:32]}")
            refused = refusal(request, keys, limit, window, "password attempts")
            if refused is not None:
                return refused
        return view(request, *args, **kwargs)

    return wrapper
