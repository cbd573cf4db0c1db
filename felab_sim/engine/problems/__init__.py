"""Practice problems: how a learner's answer is read and graded (``answers``, ``step_check``), the
drills drawn from the calculators (``drills``; a template read in ``drill_specs``, a drawn problem
in ``drill_problems``), the mistakes the class makes (``mistakes``, ``formulas``,
``unnamed_mistakes``) and the ideas each problem exercises (``concepts``). Imports the calculators
and what is below them, never ``course``.
"""
