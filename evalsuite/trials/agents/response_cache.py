"""The response cache for development (`--cache`): a chat completion stored under the sha256 of its full request.

The key is the canonical JSON of everything sent (model, messages, tools, temperature, seed and any other
sampling setting) and of where it was sent (the endpoint's address, as the client resolved it), so a request that
differs in any of them misses: another endpoint serving a model of the same name is another model. A response is
written whole or not at all (core.io.atomic_write), so a killed writer never leaves a file a later run would read
as a hit; a stored response whose usage is not a count a response can have is refused, never scored. The API key
is not part of the key.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from openai.types.chat import ChatCompletion

from evalsuite.core.io import atomic_write

MAX_TOKENS = 10**8  # no response reports more tokens than this; a cached one that does was not written by us


def request_sha256(request: dict[str, Any], endpoint: str = "") -> str:
    """The cache key of a request sent to `endpoint`: sha256 of their canonical JSON (sorted keys, no spaces)."""
    canonical = json.dumps({"endpoint": endpoint, "request": request}, sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False, default=str)
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
            response = ChatCompletion.model_validate_json(text)
        except ValueError as exc:
            raise ValueError(f"{path}: not a cached chat completion ({exc})") from exc
        used = response.usage
        counts = [used.prompt_tokens, used.completion_tokens, used.total_tokens] if used else []
        if any(n is not None and not 0 <= n <= MAX_TOKENS for n in counts):
            raise ValueError(f"{path}: not a cached chat completion (usage {counts} is not a token count)")
        return response

    def put(self, key: str, response: ChatCompletion) -> Path:
        return atomic_write(self.path(key), response.model_dump_json(exclude_unset=True))
