"""The help the admin shows under the content fields that share it or need a long one: how to
write Markdown, cite a live number or a table's fact, check a derived number, draw a practice
problem's inputs. Each text is frozen into the migrations, so a change here needs one.
"""

# Django's admin shows help text as HTML, unescaped: say everything here without markup
# (a literal tag here once swallowed the rest of the admin's form). A test checks it.
MARKDOWN_HELP = (
    "Markdown: a blank line starts a new paragraph, a line starting with '- ' is a bullet, "
    "**bold**, *italic*, `code`, [link text](https://example.org). "
    "Raw HTML tags such as scripts and frames are removed when the page is shown."
)
CARD_TEXT_HELP = (
    MARKDOWN_HELP + " A live number goes in the text, never in a link target: "
    "{{sim.c8.agg_tok_s}} from the card's scenario (names in felab_sim/engine/course/live_numbers.py), "
    "{{calc.SET_SLUG.OUTPUT_KEY}} from a parameter set (outputs in docs/calculators.md). "
    "A hardware, model, price or published figure is cited from its table, never typed: "
    "{{hw.m4-max-32c.bandwidth_gbs}}, {{model.Llama-3.1-8B.layers}}, {{price.dedicated-gpu-hour.usd}}, "
    "{{measured.l01-mac-ollama-8b.short_tok_s}} (names in felab_sim/engine/course/facts.py)."
)

NUMBER_CHECKS_HELP = (
    "How each number the text works out is checked: a list such as "
    '[{"number": "29%", "expr": "(1 - 38.9 / 54.9) * 100"}, '
    '{"number": "12%", "source": "the course\'s lesson 07 run"}]. '
    "expr is arithmetic over the numbers it comes from (+ - * / ^, brackets, ceil, round, min, max) "
    'and must give the number to the digits the text writes; add "tolerance": 0.05 for an '
    '"about". A measured number gets its source instead and is never recomputed. Numbers the '
    "text works out that are neither live nor checked are listed below when the card is saved."
)

PRACTICE_DRAWS_HELP = (
    "How each input is drawn, a list in question order: "
    '[{"name": "prompt_tokens", "range": [1000, 8000], "step": 1000}, '
    '{"name": "context_tokens", "log": [1024, 131072]}, {"name": "kv_dtype", "values": ["f16", "fp8"]}, '
    '{"name": "gpu", "presets": [{"label": "an H100 SXM (3,350 GB/s)", "inputs": {"bandwidth_gbs": 3350}}]}]. '
    "A log range draws two significant digits. Each name is a placeholder in the question."
)
