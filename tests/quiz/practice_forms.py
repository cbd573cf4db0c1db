"""What a practice problem's form carries, read off the page the server drew."""

import re

from django.test import Client


def hidden_fields(page: str) -> dict[str, str]:
    """The form's hidden fields (seed, shown_at, hints, tries) as the page holds them."""
    return dict(re.findall(r'<input type="hidden" name="(seed|shown_at|hints|tries)" value="([^"]*)"', page))


def shown_at(client: Client, url: str, seed: int) -> str:
    """The signed time the server drew this draw's page, as its form sends it back."""
    page = client.get(f"{url}?seed={seed}").content.decode()
    return hidden_fields(page)["shown_at"]
