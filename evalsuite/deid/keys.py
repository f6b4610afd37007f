"""The de-identification key (environment or key file, checked, only in memory) and the keyed values made with it."""
from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping

from evalsuite.deid.rules import DeidError, DeidRules, PseudonymRule

MIN_KEY_BYTES = 16
# The PUBLISHED demo key, which protects nothing: `make demo` and `make ui` use it on the bundled suites only, when
# EVALSUITE_DEID_KEY is unset; tests and benchmarks use it for their copies of those suites. The one copy of it.
DEMO_KEY = "demo-key-not-a-secret-0001"


class DeidKeyError(DeidError):
    """The de-identification key is missing or unusable (the message never contains it)."""


def checked_key(key: bytes | str, source: str = "") -> bytes:
    """The key as bytes; a short key is refused because a guessable key undoes every pseudonym. `source` (the
    environment variable or key file it came from) starts the message, so the one line says where to fix it."""
    key = key.encode() if isinstance(key, str) else bytes(key)
    if len(key) < MIN_KEY_BYTES:
        where = f"{source}: " if source else ""
        raise DeidKeyError(f"{where}de-identification key too short: need at least {MIN_KEY_BYTES} bytes")
    return key


def load_key(rules: DeidRules, environ: Mapping[str, str] | None = None) -> bytes:
    """The key from the environment variable the rules name, else from their key file."""
    env = os.environ if environ is None else environ
    if env.get(rules.key_env):
        return checked_key(env[rules.key_env], rules.key_env)
    if rules.key_file is not None:
        try:
            return checked_key(rules.key_file.read_bytes().strip(), str(rules.key_file))
        except FileNotFoundError as exc:
            raise DeidKeyError(f"de-identification key file {rules.key_file} not found") from exc
    raise DeidKeyError(
        f"de-identification key missing: set the environment variable {rules.key_env} "
        "or key_file in the rules (your own secret, 16+ bytes; the published demo key serves only "
        "`make demo` and `make ui` on the bundled suites)"
    )



class Keyed:
    """HMAC tokens; the purpose is mixed in so a pseudonym never reveals a date shift."""

    def __init__(self, key: bytes):
        self._mac = hmac.new(key, digestmod=hashlib.sha256)

    def token(self, purpose: str, text: str) -> str:
        mac = self._mac.copy()
        mac.update(f"{purpose}\x1f{text}".encode())
        return mac.hexdigest()

    def pseudonym(self, rule: PseudonymRule, text: str) -> str:
        return rule.prefix + self.token("value", text)[: rule.length]

    def shift_days(self, text: str, max_days: int) -> int:
        return int(self.token("date_shift", text)[:16], 16) % (2 * max_days + 1) - max_days
