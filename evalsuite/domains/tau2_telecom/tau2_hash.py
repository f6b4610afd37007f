"""tau2's two telecom DB hashes (TOOLS_SPEC.md §5), from our rows: the carrier DB's and the phone's.

Each is sha256 of the DB's sorted-key JSON dump in tau2's model form (every
field present, lists in order), rebuilt from the world's rows by
`to_nested` / `user_to_nested` (the hash itself: evalsuite.domains.tau2.tau2_hash).
The worlds are small (a few dozen rows), so a hash is one full dump.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalsuite.domains.tau2.tau2_hash import hash_model_dump
from evalsuite.domains.tau2_telecom.convert import to_nested
from evalsuite.domains.tau2_telecom.phone_convert import user_to_nested
from evalsuite.worlds.trial_world import TrialWorld
from evalsuite.worlds.world import World

Rows = Mapping[str, Sequence[Sequence[Any]]]


def _rows(state: World | TrialWorld | Rows) -> Rows:
    if isinstance(state, TrialWorld):
        return state.rows()
    return state.initial_rows if isinstance(state, World) else state


@dataclass(frozen=True)
class TelecomHash:
    """The agent-DB and user-DB hashes of a state: a pristine World, a TrialWorld now, or raw rows."""

    initial: str  # the agent DB as loaded from db.toml
    initial_user: str  # the user DB as loaded from user_db.toml (no phone number yet)

    def agent(self, state: World | TrialWorld | Rows) -> str:
        return hash_model_dump(to_nested(_rows(state)))

    def user(self, state: World | TrialWorld | Rows) -> str:
        return hash_model_dump(user_to_nested(_rows(state)))

    def both(self, agent: World | TrialWorld | Rows, user: World | TrialWorld | Rows) -> tuple[str, str]:
        return self.agent(agent), self.user(user)


TAU2_HASH = TelecomHash(  # spec §5 / README
    initial="304cf5ef059852e117ea801ab9a5efc24c9713ec887679dc2e30acceb4b6742d",
    initial_user="e1f3a8637388808221228ff3f87294444e6b64caf721f5eb243a85d0a9380b28",
)
