"""A refused setting on the engine and chain pages at a phone's 375 px: the message sits under the
field that causes it, within one screen of it, with JavaScript (htmx redraws it in place) and
without (the plain form), and a summary at the top of the form links to the field."""

from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import new_page
from tests.browser.fields import type_and_leave
from tests.support.engine_runs import ON_A_4090, ON_A_4090_QUERY

PHONE = {"viewport": {"width": 375, "height": 740}, "is_mobile": True, "has_touch": True}


def _phone(browser: Browser, **options) -> Page:
    return new_page(browser, timeout_ms=30_000, **PHONE, **options)


@pytest.fixture
def phone(browser: Browser) -> Page:
    return _phone(browser)


@pytest.fixture
def phone_without_js(browser: Browser) -> Page:
    return _phone(browser, java_script_enabled=False)


def assert_within_a_screen(page: Page, field_id: str, words: str) -> None:
    """The field's message is under it, and field and message fit in one screen together."""
    message = page.locator(f"#{field_id}-errors .field-error")
    expect(message).to_contain_text(words)
    field_box = page.locator(f"#{field_id}").bounding_box()
    message_box = message.bounding_box()
    assert field_box and message_box
    assert message_box["y"] >= field_box["y"] + field_box["height"] - 1  # under it
    height = page.viewport_size["height"]
    assert message_box["y"] - (field_box["y"] + field_box["height"]) < height / 2, (field_box, message_box)


def test_with_htmx_max_num_seqs_1_is_refused_under_max_num_seqs_and_cleared_when_fixed(
    phone: Page, live_server
):
    phone.goto(f"{live_server.url}/sim/engine/?{ON_A_4090_QUERY}")
    expect(phone.locator("#engine-binding")).to_be_visible()
    type_and_leave(phone.locator("#id_max_num_seqs"), "1")
    assert_within_a_screen(phone, "id_max_num_seqs", "Max num seqs: at most 1 request decodes")
    expect(phone.locator("#id_max_num_seqs")).to_have_attribute("aria-invalid", "true")
    summary = phone.locator("#engine-form-errors")
    expect(summary).to_be_visible()
    expect(summary.locator('a[href="#id_max_num_seqs"]')).to_contain_text("Max num seqs")
    expect(phone.locator("#id_requests-errors .field-error")).to_have_count(0)  # not the requests'
    type_and_leave(phone.locator("#id_max_num_seqs"), "64")
    expect(phone.locator("#engine-binding")).to_be_visible()
    expect(phone.locator("#id_max_num_seqs-errors .field-error")).to_have_count(0)
    expect(phone.locator("#id_max_num_seqs")).not_to_have_attribute("aria-invalid", "true")
    expect(summary).to_be_hidden()


def test_without_javascript_a_model_too_big_is_the_model_s_and_the_summary_link_reaches_it(
    phone_without_js: Page, live_server
):
    page = phone_without_js
    page.goto(f"{live_server.url}/sim/engine/?{urlencode({**ON_A_4090, 'model': 'Llama-3.1-70B'})}")
    assert_within_a_screen(page, "id_model", "no GPU memory utilization can make room")
    expect(page.locator("#id_gpu_memory_utilization-errors .field-error")).to_have_count(0)
    page.goto(f"{live_server.url}/sim/engine/?{ON_A_4090_QUERY}&max_num_batched_tokens=1")
    page.locator('#engine-form-errors a[href="#id_max_num_batched_tokens"]').click()
    expect(page.locator("#id_max_num_batched_tokens")).to_be_in_viewport()
    assert_within_a_screen(page, "id_max_num_batched_tokens", "raise max_num_batched_tokens")


def test_on_the_chain_a_refused_split_is_shown_under_tensor_parallel(phone: Page, live_server):
    phone.goto(f"{live_server.url}/sim/chain/")
    expect(phone.locator("#chain-verdict")).to_be_visible()
    type_and_leave(phone.locator("#id_tensor_parallel"), "3")
    assert_within_a_screen(phone, "id_tensor_parallel", "does not divide")
    expect(phone.locator('#chain-form-errors a[href="#id_tensor_parallel"]')).to_be_visible()


# Each select whose chosen option's text is wider than the room the select leaves it: the text,
# measured in the select's own font, against its width less its padding and its arrow.
CUT_SELECTS = """(form) => {
  const canvas = document.createElement('canvas').getContext('2d');
  return [...document.querySelectorAll(form + ' select')].flatMap(select => {
    const style = getComputedStyle(select);
    canvas.font = style.font;
    const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
    return [...select.options].map(o => o.text).filter(t => canvas.measureText(t).width > room)
      .map(t => select.name + ': ' + t);
  });
}"""


@pytest.mark.parametrize(
    ("url", "form"),
    [
        ("/sim/chain/", ".chain-form"),
        ("/sim/engine/", ".engine-form"),
        ("/sim/calc/kv-cache/", "#calc-settings"),
    ],
)
def test_on_a_phone_no_select_cuts_off_its_options(phone: Page, live_server, url, form):
    phone.goto(live_server.url + url)
    cut = phone.evaluate(CUT_SELECTS, form)
    # The GPUs' full vendor names ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition") are
    # longer than a phone is wide; the start of each still names its card.
    assert [each for each in cut if not each.startswith("hardware: ")] == []
