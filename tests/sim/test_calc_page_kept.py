"""Calculator pages are kept per address and content version (issue 11's speed target), and
never show one visitor what belongs to another, or a list of settings from before an edit."""

import re

import pytest

from felab_sim.models import ParameterSet
from pagecache.content_cache import _Kept

pytestmark = pytest.mark.django_db
PAGE = "/sim/calc/decode-ceiling/"


def test_a_new_parameter_set_shows_on_the_page_at_once(client):
    assert "A set added a moment ago" not in client.get(PAGE).content.decode()
    ParameterSet.objects.create(
        slug="kept-new", calculator="decode-ceiling", name="A set added a moment ago", params={}
    )
    assert "A set added a moment ago" in client.get(PAGE).content.decode()


def test_bad_input_stays_a_400_and_htmx_still_gets_the_results_alone(client):
    for _ in range(2):
        assert client.get(PAGE, {"bandwidth_gbs": "abc"}).status_code == 400
    full = client.get(PAGE, {"bandwidth_gbs": "273"}).content.decode()
    for _ in range(2):
        partial = client.get(PAGE, {"bandwidth_gbs": "273"}, headers={"HX-Request": "true"})
        body = partial.content.decode()
        assert partial.status_code == 200 and body.lstrip().startswith('<section id="calc-results"')
        # The results, then the presets redrawn out of band beside them, and never the form.
        results, presets = body.split('<section id="calc-presets"')
        assert results.strip() in full and "<form" not in body
        assert presets.startswith(
            ' class="calc-presets" aria-labelledby="calc-presets-title" hx-swap-oob="true">'
        )


def test_the_prefix_cache_page_keeps_the_anonymous_page_but_not_a_students(client, student_client):
    page = "/sim/calc/prefix-cache/"
    assert "Log in to measure" in client.get(page).content.decode()
    mine = student_client.get(page).content.decode()
    assert "Log in to measure" not in mine and "Measure these settings on the practice server" in mine
    assert "Log in to measure" in client.get(page).content.decode()


def test_addresses_typed_by_visitors_are_kept_up_to_a_limit():
    kept = _Kept(limit=3)
    for n in range(10):
        assert kept.get_or_build("v1", ("page", n), lambda n=n: n * n) == n * n
    assert list(kept.values) == [("page", 7), ("page", 8), ("page", 9)]
    assert kept.get_or_build("v1", ("page", 8), lambda: "rebuilt") == 64  # kept, and now newest
    assert kept.get_or_build("v2", ("page", 8), lambda: "rebuilt") == "rebuilt"  # a new version
    assert list(kept.values) == [("page", 8)]


def without_tokens(page: str) -> str:
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', 'name="csrfmiddlewaretoken"', page)


def test_the_whole_page_is_kept_but_each_visitor_gets_their_own_header(client, student_client):
    address = PAGE + "?bandwidth_gbs=273"
    student = student_client.get(address).content.decode()
    anonymous = client.get(address).content.decode()
    assert "Log out" in student and "Log in" not in student
    assert "Log out" not in anonymous and 'href="/accounts/login/?next=' in anonymous
    # The next= is this visitor's own address, not the one the page was first built for.
    other = client.get(PAGE + "?bandwidth_gbs=274").content.decode()
    assert "next=/sim/calc/decode-ceiling/%3Fbandwidth_gbs%3D274" in other
    # The same page but each visitor's own CSRF token (a paste is posted: felab_sim/pages/pastes.py).
    assert without_tokens(student.split("</header>")[1]) == without_tokens(anonymous.split("</header>")[1])
