from typing import Any

from django import template

from accounts.instructors import is_instructor as _is_instructor

register = template.Library()


@register.filter
def is_instructor(user: Any) -> bool:
    return _is_instructor(user)
