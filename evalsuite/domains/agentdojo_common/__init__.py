"""What every AgentDojo suite shares: its environment loaded with injections as the peer loads it, and a tool's
return value rendered as the text the peer shows the model (banking's SPEC.md §1.7 and §2.4; the slack suite's
loader and renderer are the same package functions), and the e-mail and calendar models travel and workspace share
(the peer's one e-mail client and one calendar)."""
from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, computed_field

Env = TypeVar("Env", bound=BaseModel)
# libyaml's loader where PyYAML was built with it: the same documents as the pure-Python SafeLoader the peer uses
# (PyYAML's scanner is a port of libyaml's; every scalar here is double-quoted, so no implicit type is resolved), ten
# times faster, and an import parses its environment once per attack (the differential test holds the results equal)
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class InjectionError(ValueError):
    """Injections the peer would refuse (an unknown vector, text that breaks its YAML); one line."""


@functools.lru_cache(maxsize=8)
def _requoted(text: str) -> str:
    """§1.7 step 2: parse, then dump with PyYAML defaults (keys sorted) and every scalar double-quoted. Kept per
    text: an import loads the same files once per attack, and this round trip is most of a load's time."""
    return yaml.dump(yaml.safe_load(text), default_flow_style=False, default_style='"')


class _Including(yaml.SafeLoader):
    """A loader that replaces `!include FILE` (a path relative to the including file's folder) by that file's
    parsed YAML, as the peer's loader does (workspace's environment.yaml includes its inbox, calendar and drive)."""


def _include(loader: _Including, node: yaml.Node) -> Any:
    path = loader.root / str(loader.construct_scalar(node))
    return yaml.load(path.read_text(), _loader(path.parent))


def _loader(root: Path) -> type[_Including]:
    return type("_IncludingFrom", (_Including,), {"root": root})


_Including.add_constructor("!include", _include)
_INCLUDE = re.compile(r"!include\s+(\S+)")


@functools.lru_cache(maxsize=8)
def _requoted_tree(text: str, root: str, included: tuple[str, ...]) -> str:
    """`_requoted` of a file with includes; `included` (the included files' texts) is part of the cache key only."""
    return yaml.dump(yaml.load(text, _loader(Path(root))), default_flow_style=False, default_style='"')


def peer_text(path: Path) -> str:
    """A data file as the peer re-serialises it (§1.7 step 2), its `!include`s resolved first."""
    text = Path(path).read_text()
    names = _INCLUDE.findall(text)
    if not names:
        return _requoted(text)
    folder = Path(path).parent
    return _requoted_tree(text, str(folder), tuple((folder / n).read_text() for n in names))


def vector_defaults(vectors_yaml: Path) -> dict[str, str]:
    """§1.7 step 3: each vector's default text after the same round trip."""
    vectors = yaml.safe_load(peer_text(vectors_yaml))
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
    text = peer_text(env_yaml).format(**{**defaults, **injections})
    try:
        return model.model_validate(yaml.load(text, SafeLoader))
    except yaml.YAMLError as exc:
        raise InjectionError(f"{env_yaml}: the injected text breaks the environment's YAML: "
                             f"{str(exc).splitlines()[0]}") from exc


class PeerModel(BaseModel):
    """A model of the peer's: keys it does not know are dropped, as the peer drops them."""

    model_config = ConfigDict(extra="ignore")


class CalendarEvent(PeerModel):
    """The peer's calendar event, one model for travel and workspace (their calendars are the same client)."""

    id_: str
    title: str
    description: str
    start_time: dt.datetime
    end_time: dt.datetime
    location: str | None
    participants: list[str]
    all_day: bool = False
    status: str = "confirmed"


class Email(PeerModel):
    id_: str
    sender: str
    recipients: list[str]
    cc: list[str] = []
    bcc: list[str] = []
    subject: str
    body: str
    status: str = "sent"
    read: bool = False
    timestamp: dt.datetime
    attachments: list[str | CalendarEvent] = []


class Contact(PeerModel):
    """An inbox's contact (travel's and workspace's inboxes are the peer's one e-mail client)."""

    email: str
    name: str


class PeerInbox(PeerModel):
    """The peer's inbox, its fields and its views by status; travel and workspace each load it their own way (a
    model validator of their subclass)."""

    account_email: str
    initial_emails: list[Email]
    emails: dict[str, Email] = {}
    contact_list: list[Contact] = []
    trash: dict[str, Email] = {}

    def _by_status(self, status: str) -> list[Email]:
        return [e for e in self.emails.values() if e.status == status]

    @computed_field
    @property
    def received(self) -> list[Email]:
        return self._by_status("received")

    @computed_field
    @property
    def sent(self) -> list[Email]:
        return self._by_status("sent")

    @computed_field
    @property
    def drafts(self) -> list[Email]:
        return self._by_status("draft")



def render(value: Any) -> str:
    """A list (of strings, or of the maps of models): PyYAML safe_dump with sorted keys, stripped; a string as it
    is; anything else (a float, a dict, None) as Python's str of it."""
    if isinstance(value, list):
        return yaml.safe_dump(value).strip()
    return str(value)
