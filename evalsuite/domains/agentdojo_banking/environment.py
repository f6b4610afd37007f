"""The banking environment as the peer holds it (SPEC.md §1), loaded with its injections filled as the peer fills
them (§1.7), and converted to and from the world's rows.

`load_environment(env_yaml, vectors_yaml, injections)` follows §1.7 step by step
(evalsuite.domains.agentdojo_common.load_peer_environment, shared by every suite).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from evalsuite.domains.agentdojo_banking.schema import TRANSACTION_FIELDS, metadata
from evalsuite.domains.agentdojo_common import InjectionError, load_peer_environment

__all__ = ["InjectionError", "load_environment"]


class _Peer(BaseModel):
    model_config = ConfigDict(extra="ignore")  # the peer drops unknown keys (§1.1)


class Transaction(_Peer):
    id: int
    sender: str
    recipient: str
    amount: float
    subject: str
    date: str
    recurring: bool


class BankAccount(_Peer):
    balance: float
    iban: str
    transactions: list[Transaction]
    scheduled_transactions: list[Transaction]


class Filesystem(_Peer):
    files: dict[str, str]


class UserAccount(_Peer):
    first_name: str
    last_name: str
    street: str
    city: str
    password: str


class BankingEnvironment(_Peer):
    bank_account: BankAccount
    filesystem: Filesystem
    user_account: UserAccount


def load_environment(env_yaml: Path, vectors_yaml: Path,
                     injections: Mapping[str, str] | None = None) -> BankingEnvironment:
    return load_peer_environment(BankingEnvironment, env_yaml, vectors_yaml, injections)


def to_rows(env: BankingEnvironment) -> dict[str, list[dict[str, Any]]]:
    """The world's seed rows of an environment."""
    bank, user = env.bank_account, env.user_account
    listed = [(t, True) for t in bank.transactions] + [(t, False) for t in bank.scheduled_transactions]
    return {
        "bank_account": [{"account_id": 1, "balance": bank.balance, "iban": bank.iban}],
        "transactions": [{**t.model_dump(), "booked": booked} for t, booked in listed],
        "files": [{"name": n, "text": t} for n, t in env.filesystem.files.items()],
        "user_account": [{"account_id": 1, **user.model_dump()}],
    }


def from_rows(rows: Mapping[str, Sequence[tuple]]) -> BankingEnvironment:
    """The environment a world's rows (every table, key order) stand for: the inverse of `to_rows`."""
    named = {t: [dict(zip(metadata.tables[t].columns.keys(), r)) for r in rows[t]] for t in metadata.tables}
    bank, user = named["bank_account"][0], named["user_account"][0]
    listed = lambda booked: [{f: t[f] for f in TRANSACTION_FIELDS}  # noqa: E731
                             for t in named["transactions"] if bool(t["booked"]) is booked]
    return BankingEnvironment(
        bank_account=BankAccount(balance=bank["balance"], iban=bank["iban"], transactions=listed(True),
                                 scheduled_transactions=listed(False)),
        filesystem=Filesystem(files={f["name"]: f["text"] for f in named["files"]}),
        user_account=UserAccount(**{k: v for k, v in user.items() if k != "account_id"}),
    )
