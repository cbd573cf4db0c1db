"""A small arithmetic expression over a draw's named numbers: how an instructor writes a mistake
the class makes ("answer * 2", "answer / 1.073741824", "answer / context_tokens"). Pure Python.

Read strictly and boundedly, since an instructor types it in the admin and every practice draw
evaluates it: numbers, the names given, ``+ - * / **`` and brackets; no calls, attributes,
subscripts or comparisons; at most ``MAX_LENGTH`` characters and ``MAX_NODES`` parts; a power's
exponent a number from −``MAX_EXPONENT`` to ``MAX_EXPONENT``. Anything else is refused with a
sentence saying what to change.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

__all__ = ["Formula", "FormulaError", "parse_formula"]

MAX_LENGTH = 200
MAX_NODES = 60
MAX_EXPONENT = 12
NAME = re.compile(r"^[a-z][a-z0-9_]*$")

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


class FormulaError(ValueError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Formula:
    """A checked expression: its text and the names it reads."""

    text: str
    names: frozenset[str]
    _tree: ast.expr

    def value(self, numbers: Mapping[str, float]) -> float | None:
        """The expression at these numbers; None where a name it reads is missing, or it divides
        by zero, overflows or is not a finite number."""
        if not self.names <= numbers.keys():
            return None
        try:
            result = _evaluate(self._tree, numbers)
        except (ZeroDivisionError, OverflowError, ValueError, TypeError):
            return None
        if isinstance(result, complex) or not math.isfinite(result):
            return None
        return float(result)


def parse_formula(text: object, allowed: Collection[str] | None = None) -> Formula:
    """``text`` read as a formula; ``FormulaError`` saying why not. With ``allowed``, every name
    it reads must be one of them."""
    if not isinstance(text, str) or not text.strip():
        raise FormulaError("write a formula, e.g. answer * 2")
    text = text.strip()
    if len(text) > MAX_LENGTH:
        raise FormulaError(f"a formula is at most {MAX_LENGTH} characters; this one has {len(text)}")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise FormulaError("this is not a formula: numbers, names, + - * / ** and brackets only") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise FormulaError(f"a formula has at most {MAX_NODES} parts; write a shorter one")
    names: set[str] = set()
    for node in nodes:
        _check(node, names)
    if allowed is not None and (unknown := sorted(names - set(allowed))):
        raise FormulaError(
            f"{unknown[0]!r} is not a number this template's draws have; names: {', '.join(sorted(allowed))}"
        )
    return Formula(text, frozenset(names), tree.body)


def _check(node: ast.AST, names: set[str]) -> None:
    if isinstance(node, ast.Expression | ast.operator | ast.unaryop | ast.expr_context):
        if isinstance(node, ast.operator) and type(node) not in _BINARY:
            raise FormulaError("only + - * / and ** are allowed")
        if isinstance(node, ast.unaryop) and type(node) not in _UNARY:
            raise FormulaError("only + - * / and ** are allowed")
        return
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Pow):
            exponent = node.right
            if isinstance(exponent, ast.UnaryOp) and isinstance(exponent.op, ast.USub):
                exponent = exponent.operand
            if not (_is_number(exponent) and abs(exponent.value) <= MAX_EXPONENT):  # type: ignore[attr-defined]
                raise FormulaError(f"a power's exponent is a number from -{MAX_EXPONENT} to {MAX_EXPONENT}")
        return
    if isinstance(node, ast.UnaryOp):
        return
    if isinstance(node, ast.Constant):
        if not _is_number(node):
            raise FormulaError("only numbers and names: no text")
        return
    if isinstance(node, ast.Name):
        if not NAME.match(node.id):
            raise FormulaError(f"{node.id!r}: a name is lower-case letters, digits and _")
        names.add(node.id)
        return
    if isinstance(node, ast.Call):
        raise FormulaError("no function calls: numbers, names, + - * / ** and brackets only")
    if isinstance(node, ast.Attribute):
        raise FormulaError("no attributes (a.b): numbers, names, + - * / ** and brackets only")
    raise FormulaError(f"no {type(node).__name__.lower()} here: numbers, names, + - * / ** and brackets only")


def _is_number(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
        and math.isfinite(node.value)
    )


def _evaluate(node: ast.expr, numbers: Mapping[str, float]) -> float:
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        return float(numbers[node.id])
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, numbers))
    assert isinstance(node, ast.BinOp)
    return _BINARY[type(node.op)](_evaluate(node.left, numbers), _evaluate(node.right, numbers))
