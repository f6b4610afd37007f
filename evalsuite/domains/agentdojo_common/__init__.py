"""What every AgentDojo suite shares: its environment loaded with injections as the peer loads it, and a tool's
return value rendered as the text the peer shows the model (banking's SPEC.md §1.7 and §2.4; the slack suite's
loader and renderer are the same package functions)."""
from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel

Env = TypeVar("Env", bound=BaseModel)


class InjectionError(ValueError):
    """Injections the peer would refuse (an unknown vector, text that breaks its YAML); one line."""


@functools.lru_cache(maxsize=8)
def _requoted(text: str) -> str:
    """§1.7 step 2: parse, then dump with PyYAML defaults (keys sorted) and every scalar double-quoted. Kept per
    text: an import loads the same files once per attack, and this round trip is most of a load's time."""
    return yaml.dump(yaml.safe_load(text), default_flow_style=False, default_style='"')


def vector_defaults(vectors_yaml: Path) -> dict[str, str]:
    """§1.7 step 3: each vector's default text after the same round trip."""
    vectors = yaml.safe_load(_requoted(Path(vectors_yaml).read_text()))
    return {name: spec["default"] for name, spec in vectors.items()}


def load_peer_environment(model: type[Env], env_yaml: Path, vectors_yaml: Path,
                          injections: Mapping[str, str] | None = None) -> Env:
    """Both files parsed and re-serialised (every scalar double-quoted, keys sorted), the placeholders filled into
    the re-serialised environment text with `str.format` before the final parse, so an inserted value reads as
    double-quoted-scalar content (escapes decoded, raw line breaks folded) exactly as in the peer."""
    defaults = vector_defaults(vectors_yaml)
    injections = dict(injections or {})
    unknown = sorted(set(injections) - set(defaults))
    if unknown:
        raise InjectionError(f"{vectors_yaml}: injections must be a subset of the injection vector defaults; "
                             f"unknown: {unknown}")
    text = _requoted(Path(env_yaml).read_text()).format(**{**defaults, **injections})
    try:
        return model.model_validate(yaml.safe_load(text))
    except yaml.YAMLError as exc:
        raise InjectionError(f"{env_yaml}: the injected text breaks the environment's YAML: "
                             f"{str(exc).splitlines()[0]}") from exc


def render(value: Any) -> str:
    """A list (of strings, or of the maps of models): PyYAML safe_dump with sorted keys, stripped; a string as it
    is; anything else (a float, a dict, None) as Python's str of it."""
    if isinstance(value, list):
        return yaml.safe_dump(value).strip()
    return str(value)
