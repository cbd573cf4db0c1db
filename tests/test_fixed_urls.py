"""{% fixed_url %} (serving/templatetags/fixed_urls.py): what {% url %} gives, under any script prefix."""

from django.template import engines
from django.urls import get_script_prefix, set_script_prefix


def rendered(source: str) -> str:
    return engines["django"].from_string(source).render({})


def test_it_gives_what_url_gives():
    names = ["logout", "login", "progress", "review_next", "practice_index"]
    for name in names:
        assert rendered(f"{{% load fixed_urls %}}{{% fixed_url '{name}' %}}") == rendered(
            f"{{% url '{name}' %}}"
        )


def test_a_site_mounted_under_a_path_gets_addresses_under_it():
    before = get_script_prefix()
    try:
        assert rendered("{% load fixed_urls %}{% fixed_url 'progress' %}") == "/progress/"
        set_script_prefix("/felab/")
        assert rendered("{% load fixed_urls %}{% fixed_url 'progress' %}") == "/felab/progress/"
    finally:
        set_script_prefix(before)
    assert rendered("{% load fixed_urls %}{% fixed_url 'progress' %}") == "/progress/"
