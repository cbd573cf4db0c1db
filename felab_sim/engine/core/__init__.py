"""What every other part of the engine stands on: declared parameters and their checks
(``params``), how numbers are written (``numbers``), chart data (``chart``) and the calculator's
frame (``calculator``). Imports nothing else of the engine.
"""
