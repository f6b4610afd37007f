"""The response cache for development (`--cache`): a chat completion stored under the sha256 of its full request.

The key is the canonical JSON of everything sent (model, messages, tools, temperature, seed and any other
sampling setting), so a request that differs in any of them misses. A response is written whole or not at
all (core.io.atomic_write), so a killed writer never leaves a file a later run would read as a hit. The
endpoint's address and key are not part of the key: the model name and the request are what is cached.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from openai.types.chat import ChatCompletion

from evalsuite.core.io import atomic_write


def request_sha256(request: dict[str, Any]) -> str:
    """The cache key of a request: sha256 of its canonical JSON (sorted keys, no spaces)."""
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


class ResponseCache:
    """Responses under `root`/<2 hex>/<sha256>.json."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> ChatCompletion | None:
        """The stored response, or None; a file that is not a chat completion is an error, never a miss."""
        path = self.path(key)
        try:
            text = path.read_text()
        except FileNotFoundError:
            return None
        try:
            return ChatCompletion.model_validate_json(text)
        except ValueError as exc:
            raise ValueError(f"{path}: not a cached chat completion ({exc})") from exc

    def put(self, key: str, response: ChatCompletion) -> Path:
        return atomic_write(self.path(key), response.model_dump_json(exclude_unset=True))
