"""tau2's `calculate`: Python arithmetic on a restricted alphabet, rounded to 2 places.

tau2 hands the expression to Python's `eval`; we keep Python's semantics and
error texts (same parser, same operators, same float conversion) but never
`eval` unbounded input: every operator goes through a size guard, because
`9**9**9` would otherwise hang the trial. The guard's error is the only
departure from tau2 (which would hang or exhaust memory instead).
"""
from __future__ import annotations

import ast
import math
import operator
import warnings
from typing import Any

ALLOWED = "0123456789+-*/(). "
MAX_INT_BITS = 100_000  # an int this large can only become a float again by dividing it back down

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow}


class IntTooLarge(ArithmeticError):
    """The guard's refusal, in place of an evaluation that would not finish."""


def _guarded(a: Any, b: Any, op: Any) -> Any:
    """`op(a, b)`, refusing integer work whose size could stall the process."""
    for x in (a, b):
        if isinstance(x, int) and x.bit_length() > MAX_INT_BITS:
            raise IntTooLarge(f"integer operand exceeds {MAX_INT_BITS} bits")
    if op is operator.pow and isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1:
        if b * math.log2(abs(a)) > MAX_INT_BITS:
            raise IntTooLarge(f"power exceeds {MAX_INT_BITS} bits")
    return op(a, b)


class _Guard(ast.NodeTransformer):
    """`a <op> b` -> `_op(a, b, <op>)`: same evaluation order (left, right, then the operator)."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        op = _OPS.get(type(node.op))
        if op is None:  # the alphabet admits no other binary operator
            raise SyntaxError(f"unsupported operator {type(node.op).__name__}")
        name = ast.Name(id="_op", ctx=ast.Load())
        args = [node.left, node.right, ast.Name(id=f"_{op.__name__}", ctx=ast.Load())]
        return ast.copy_location(ast.Call(func=name, args=args, keywords=[]), node)


_GLOBALS = {"__builtins__": {}, "_op": _guarded, **{f"_{op.__name__}": op for op in _OPS.values()}}


def calculate(expression: Any) -> str:
    """The result as tau2 prints it ("1497.65", "4.0"); Python's own exceptions on bad input."""
    if not all(char in ALLOWED for char in expression):  # raises tau2's TypeError for non-iterables
        raise ValueError("Invalid characters in expression")
    if not isinstance(expression, str):
        raise TypeError("eval() arg 1 must be a string, bytes or code object")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # e.g. "(1)(2)": Python warns, then fails at run time
        tree = compile(expression.lstrip(" \t"), "<string>", "eval", ast.PyCF_ONLY_AST)  # eval strips these too
        code = compile(ast.fix_missing_locations(_Guard().visit(tree)), "<string>", "eval")
    value = eval(code, dict(_GLOBALS), {})  # noqa: S307 - the alphabet admits no names; operators are guarded
    return str(round(float(value), 2))
