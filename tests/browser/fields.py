"""Typing into a field as a student does: fill it, then leave it with Tab.

The browser fires `change` when a field whose value was typed loses focus. A test that dispatched
a synthetic `change` after `fill()` left the real one pending: the next click elsewhere blurred the
field, fired it, and the forms' `hx-trigger="change"` sent a second request whose swap could land
between that click's mousedown and mouseup, so the click never happened (seen in CI: an "Explore
this chart" click lost). Leaving with Tab fires the one real `change` and no other.
"""

from playwright.sync_api import Locator


def type_and_leave(field: Locator, value: str) -> None:
    field.fill(value)
    field.press("Tab")
