"""What the course's pages and cards draw from the calculators: the serving chain (``chain``),
the calculator pages' presets, the facts and live numbers card text cites (``facts``,
``live_numbers``, ``citations``), the calculators' reference (``reference``) and the links that
carry one page's settings to another (``same_settings``). Imports the calculators and what is
below them, never ``problems``.
"""
