"""How a tau2 tool is registered, fails and is shown to the agent, and the two generic tools every tau2 domain has.

tau2 passes a call's JSON arguments straight to a method of its tools class
(`RetailTools`, `AirlineTools`): nothing is coerced or validated, a wrong
keyword is Python's TypeError naming the method, and any exception reaches the
agent as "Error: " + its text. Our tools take raw keyword arguments, carry the
method's qualified name, and raise ToolError(<tau2's text>).
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Literal

from evalsuite.core.records import Role, TraceEvent
from evalsuite.domains.tau2 import calculator
from evalsuite.worlds.domain import Domain, ToolContext, ToolError

Kind = Literal["read", "write", "generic"]


def registrar(domain: Domain, owner: str) -> Callable[[Kind], Callable[[Callable], Callable]]:
    """`@tool(kind)` for `domain`; the function's qualname `<owner>.<name>` makes Python's argument errors read
    as tau2's do."""

    def tool(kind: Kind) -> Callable[[Callable], Callable]:
        def register(fn: Callable) -> Callable:
            fn.__qualname__ = f"{owner}.{fn.__name__}"
            return domain.tool(kind)(fn)

        return register

    return tool


def python_error(exc: Exception) -> ToolError:
    """An exception Python raised on a badly typed argument, reported with tau2's text."""
    return ToolError(str(exc))


def add_generic_tools(tool: Callable[[Kind], Callable[[Callable], Callable]], *, calculate: bool = True) -> None:
    """Register `calculate` (unless the domain has none: telecom) and `transfer_to_human_agents` through a domain's
    registrar (fresh functions each time: each domain's carry its own qualname)."""
    if calculate:
        _add_calculate(tool)

    @tool("generic")
    def transfer_to_human_agents(ctx: ToolContext, /, summary):
        """Transfer the user to a human agent, with a summary of the issue. Arguments: summary (str)."""
        return "Transfer successful"


def _add_calculate(tool: Callable[[Kind], Callable[[Callable], Callable]]) -> None:
    @tool("generic")
    def calculate(ctx: ToolContext, /, expression):
        """Evaluate an arithmetic expression (digits, + - * / ( ) . and spaces), rounded to 2 decimals.
        Arguments: expression (str)."""
        try:
            return calculator.calculate(expression)
        except (ArithmeticError, SyntaxError, RecursionError, MemoryError) as exc:  # tau2 reports any exception
            raise python_error(exc) from exc


def agent_role(domain: Domain, name: str) -> Role:
    """The domain's one agent role: every read and write tool permitted (generic ones always are), registered."""
    role = Role(name=name, read_tools=sorted(t.name for t in domain.tools.values() if t.kind == "read"),
                write_tools=sorted(t.name for t in domain.tools.values() if t.kind == "write"))
    domain.roles[role.name] = role
    return role


def tool_message(event: TraceEvent) -> str:
    """The tool message tau2 shows for this call: "Error: <text>" on failure, else the result
    (strings as they are, records as JSON)."""
    if event.outcome != "ok":
        return f"Error: {event.error}"
    return event.result if isinstance(event.result, str) else json.dumps(event.result)
