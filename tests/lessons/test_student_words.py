"""Student-facing text speaks the student's language: no code names outside the engineer layer."""

import pytest

from tests.conftest import SEED_CARD_URL
from tests.textutil import text_of

pytestmark = pytest.mark.django_db
ENGINEER_WORDS = ("felab_sim", "scenario", "showing", "mock_server", "_itl")
LESSON_03 = [SEED_CARD_URL.replace("step-1", f"step-{step}") for step in (1, 2, 3)]


@pytest.mark.parametrize(
    "url", [*(url + "?answer=shown" for url in LESSON_03), "/sim/", "/progress/", "/review/", "/"]
)
def test_pages_a_student_reads_name_no_code(client, lessons, url):
    html = client.get(url).content.decode()
    # The engineer layer ("Go deeper") may name the course kit's files; it explains them.
    text = text_of(html, "page", skip_classes=frozenset({"layer-deeper"}))
    assert text.strip()
    found = [word for word in ENGINEER_WORDS if word in text]
    assert not found, f"{url} shows {found}"


def test_the_engineer_layer_says_what_the_kit_and_its_file_names_are(client, lessons):
    html = client.get(SEED_CARD_URL, {"answer": "shown"}).content.decode()
    deeper = text_of(html, "layer-deeper", skip_classes=frozenset())
    assert "felab/mock_server.py" in deeper  # the seed card's own words, kept
    assert "From the course kit, the course's own lab materials" in deeper
    assert "that one is the practice server" in deeper
