"""Lesson Markdown written to attack students renders inert: nothing in it runs."""

from playwright.sync_api import Page, expect

from lessons.models import Card, GlossaryTerm
from tests.conftest import SEED_CARD_URL

PAYLOADS = "\n\n".join(
    [
        "Plain text survives.",
        "<script>window.pwned = 'script'</script>",
        '<img src="x" onerror="window.pwned = \'onerror\'">',
        "<iframe src=\"javascript:parent.pwned='iframe'\"></iframe>",
        '<svg onload="window.pwned = \'svg\'"><script>window.pwned = "svg script"</script></svg>',
        "[click me](javascript:window.pwned='link')",
        '<a href="javascript:window.pwned=\'anchor\'" id="evil-link">anchor</a>',
        '<div onmouseover="window.pwned = \'hover\'" id="evil-hover">hover me</div>',
        "<object data=\"javascript:window.pwned='object'\"></object>",
        # Last: an unclosed <style> swallows what follows it, as a sanitizer should.
        "<math><mtext><table><mglyph><style><img src=x onerror=\"window.pwned='mxss'\">",
    ]
)


def test_hostile_markdown_runs_nothing(page: Page, live_lessons):
    card = Card.objects.get(lesson__slug="concurrency-sweep", step=1)
    for field in ("question", "plain_words", "picture_it", "real_numbers", "more_detail"):
        setattr(card, field, PAYLOADS)
    card.save()
    term = GlossaryTerm.objects.get(term="Decode")
    term.definition = term.example = PAYLOADS
    term.save()

    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(live_lessons + SEED_CARD_URL + "?answer=shown")
    page.get_by_text("Go deeper: the engineer version").click()
    expect(page.get_by_text("Plain text survives.").first).to_be_visible()
    for selector in ("#evil-link", "#evil-hover"):
        assert page.locator(selector).count() == 0  # ids are stripped with the handlers
    page.get_by_text("hover me").first.hover()
    page.get_by_text("click me").first.click()
    page.get_by_text("anchor").first.click()
    # A javascript: link runs in a task its click queues; two turns of the page's event loop
    # later it would have run.
    page.evaluate("() => new Promise(done => setTimeout(() => setTimeout(done)))")
    assert page.evaluate("window.pwned") is None
    assert dialogs == []
    # The only scripts, SVGs and frames on the card are the app's own: the live chart's JSON
    # island and plotly's drawing, both inside the "Computed live" panel.
    stray = page.evaluate(
        """() => Array.from(document.querySelectorAll('article script, article iframe, article svg, article object'))
            .filter(e => !e.closest('.layer-live')).map(e => e.outerHTML.slice(0, 80))"""
    )
    assert stray == []
