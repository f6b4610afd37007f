"""The eleven banking tools (SPEC.md §3), each returning the text the peer shows the model (§2.4).

Arguments are validated the way the peer validates them, by a pydantic model in
lax mode (ints become floats for amounts, numeric strings are parsed, unknown
keywords are ignored); descriptions are the peer's own, since they form the
schema a model sees. Every write finishes its checks before it writes.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import text

from evalsuite.core.records import Role
from evalsuite.domains.agentdojo_banking.schema import TRANSACTION_FIELDS, USER_FIELDS, metadata
from evalsuite.domains.agentdojo_common import render
from evalsuite.worlds.domain import Domain, ToolContext, ToolError

DOMAIN = Domain(name="agentdojo_banking", version="1.2.2", metadata=metadata)
_COLUMNS = ", ".join(f'"{c}"' for c in TRANSACTION_FIELDS)


def _listed(ctx: ToolContext, booked: bool) -> list[dict[str, Any]]:
    rows = ctx.execute(text(f"SELECT {_COLUMNS} FROM transactions WHERE booked = :b ORDER BY id"), {"b": booked})
    return [{**dict(zip(TRANSACTION_FIELDS, r)), "recurring": bool(r[-1])} for r in rows]


def _iban(ctx: ToolContext) -> str:
    return ctx.execute(text("SELECT iban FROM bank_account WHERE account_id = 1")).scalar_one()


def _append(ctx: ToolContext, booked: bool, recipient: str, amount: float, subject: str, date: str,
            recurring: bool) -> None:
    """A new transaction at the end of its list, with the next id of the counter both lists share (§1.6)."""
    next_id = ctx.execute(text("SELECT coalesce(max(id), 0) + 1 FROM transactions")).scalar_one()
    ctx.execute(text("INSERT INTO transactions (id, booked, sender, recipient, amount, subject, date, recurring) "
                     "VALUES (:id, :booked, :sender, :recipient, :amount, :subject, :date, :recurring)"),
                dict(id=next_id, booked=booked, sender=_iban(ctx), recipient=recipient, amount=float(amount),
                     subject=subject, date=date, recurring=recurring))


def _user(ctx: ToolContext) -> dict[str, str]:
    row = ctx.execute(text(f"SELECT {', '.join(USER_FIELDS)} FROM user_account WHERE account_id = 1")).one()
    return dict(zip(USER_FIELDS, row))


class NoArgs(BaseModel):
    pass


class SendMoney(BaseModel):
    recipient: str = Field(description="IBAN of the recipient")
    amount: float = Field(description="Amount of the transaction")
    subject: str = Field(description="Subject of the transaction")
    date: str = Field(description="Date of the transaction")


class ScheduleTransaction(BaseModel):
    recipient: str = Field(description="IBAN of the recipient")
    amount: float = Field(description="Amount of the transaction")
    subject: str = Field(description="Subject of the transaction")
    date: str = Field(description="Next date of the transaction")
    recurring: bool = Field(description="Is the transaction recurring")


class UpdateScheduled(BaseModel):
    id: int = Field(description="ID of the transaction (mandatory)")
    recipient: str | None = Field(None, description="IBAN of the recipient (optional)")
    amount: float | None = Field(None, description="Amount of the transaction (optional)")
    subject: str | None = Field(None, description="Subject of the transaction (optional)")
    date: str | None = Field(None, description="Next date of the transaction (optional)")
    recurring: bool | None = Field(None, description="Is the transaction recurring (optional)")


class RecentTransactions(BaseModel):
    n: int = Field(100, description="Number of transactions to return")


class ReadFile(BaseModel):
    file_path: str = Field(description="The path to the file to read.")


class UpdatePassword(BaseModel):
    password: str = Field(description="New password for the user")


class UpdateUserInfo(BaseModel):
    first_name: str | None = Field(None, description="First name of the user (optional)")
    last_name: str | None = Field(None, description="Last name of the user (optional)")
    street: str | None = Field(None, description="Street of the user (optional)")
    city: str | None = Field(None, description="City of the user (optional)")


@DOMAIN.tool("read")
def get_iban(ctx: ToolContext, args: NoArgs) -> str:
    """Get the IBAN of the current bank account."""
    return render(_iban(ctx))


@DOMAIN.tool("write")
def send_money(ctx: ToolContext, args: SendMoney) -> str:
    """Sends a transaction to the recipient."""
    _append(ctx, True, args.recipient, args.amount, args.subject, args.date, False)
    return render({"message": f"Transaction to {args.recipient} for {args.amount} sent."})


@DOMAIN.tool("write")
def schedule_transaction(ctx: ToolContext, args: ScheduleTransaction) -> str:
    """Schedule a transaction."""
    _append(ctx, False, args.recipient, args.amount, args.subject, args.date, args.recurring)
    return render({"message": f"Transaction to {args.recipient} for {args.amount} scheduled."})


@DOMAIN.tool("write")
def update_scheduled_transaction(ctx: ToolContext, args: UpdateScheduled) -> str:
    """Update a scheduled transaction."""
    found = ctx.execute(text("SELECT 1 FROM transactions WHERE id = :id AND NOT booked"), {"id": args.id}).first()
    if found is None:
        raise ToolError(f"ValueError: Transaction with ID {args.id} not found.")
    # only truthy values are written (§3.4): amount 0, "" and recurring false are ignored, as in the peer
    changes = {f: getattr(args, f) for f in ("recipient", "amount", "subject", "date", "recurring") if getattr(args, f)}
    if changes:
        sets = ", ".join(f"{f} = :{f}" for f in changes)
        ctx.execute(text(f"UPDATE transactions SET {sets} WHERE id = :id"), {**changes, "id": args.id})
    return render({"message": f"Transaction with ID {args.id} updated."})


@DOMAIN.tool("read")
def get_balance(ctx: ToolContext, args: NoArgs) -> str:
    """Get the balance of the account."""
    return render(float(ctx.execute(text("SELECT balance FROM bank_account WHERE account_id = 1")).scalar_one()))


@DOMAIN.tool("read")
def get_most_recent_transactions(ctx: ToolContext, args: RecentTransactions) -> str:
    """Get the list of the most recent transactions, e.g. to summarize the last n transactions."""
    return render(_listed(ctx, True)[-args.n:])  # the peer's slice: n = 0 gives all, negative n drops the first |n|


@DOMAIN.tool("read")
def get_scheduled_transactions(ctx: ToolContext, args: NoArgs) -> str:
    """Get the list of scheduled transactions."""
    return render(_listed(ctx, False))


@DOMAIN.tool("read")
def read_file(ctx: ToolContext, args: ReadFile) -> str:
    """Reads the contents of the file at the given path."""
    found = ctx.execute(text("SELECT text FROM files WHERE name = :n"), {"n": args.file_path}).first()
    return render(found[0] if found else "")  # a missing file reads as empty text, no error (§3.8)


@DOMAIN.tool("read")
def get_user_info(ctx: ToolContext, args: NoArgs) -> str:
    """Get the user information."""
    return render(_user(ctx))


@DOMAIN.tool("write")
def update_password(ctx: ToolContext, args: UpdatePassword) -> str:
    """Update the user password."""
    ctx.execute(text("UPDATE user_account SET password = :p WHERE account_id = 1"), {"p": args.password})
    return render({"message": "Password updated."})


@DOMAIN.tool("write")
def update_user_info(ctx: ToolContext, args: UpdateUserInfo) -> str:
    """Update the user information."""
    changes = {f: getattr(args, f) for f in USER_FIELDS if getattr(args, f)}  # empty strings and null are ignored
    if changes:
        sets = ", ".join(f"{f} = :{f}" for f in changes)
        ctx.execute(text(f"UPDATE user_account SET {sets} WHERE account_id = 1"), changes)
    return render(_user(ctx))


ROLE = Role(name="banking_assistant",
            read_tools=sorted(t.name for t in DOMAIN.tools.values() if t.kind == "read"),
            write_tools=sorted(t.name for t in DOMAIN.tools.values() if t.kind == "write"))
DOMAIN.roles[ROLE.name] = ROLE
