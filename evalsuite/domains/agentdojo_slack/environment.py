"""The slack environment as the peer holds it (its `slack` and `web` models), loaded with its injections as the
peer loads them (evalsuite.domains.agentdojo_common), and converted to and from the world's rows."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from evalsuite.domains.agentdojo_common import load_peer_environment
from evalsuite.domains.agentdojo_slack.schema import metadata


class _Peer(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Message(_Peer):
    sender: str
    recipient: str
    body: str


class Slack(_Peer):
    users: list[str]
    channels: list[str]
    user_channels: dict[str, list[str]]
    user_inbox: dict[str, list[Message]]
    channel_inbox: dict[str, list[Message]]


class Web(_Peer):
    web_content: dict[str, str]
    web_requests: list[str]


class SlackEnvironment(_Peer):
    slack: Slack
    web: Web


def load_environment(env_yaml: Path, vectors_yaml: Path,
                     injections: Mapping[str, str] | None = None) -> SlackEnvironment:
    return load_peer_environment(SlackEnvironment, env_yaml, vectors_yaml, injections)


def _memberships(user: str, listed: list[str], channels: list[str]) -> list[dict[str, Any]]:
    unknown = [c for c in listed if c not in channels]
    if unknown:
        raise ValueError(f"slack.user_channels.{user}: {unknown[0]!r} is not in slack.channels")
    return [{"user": user, "channel": channels.index(c), "copy": listed[:i].count(c), "pos": i}
            for i, c in enumerate(listed)]


def to_rows(env: SlackEnvironment) -> dict[str, list[dict[str, Any]]]:
    """The world's seed rows of an environment."""
    s, w = env.slack, env.web
    inboxes = [("user", s.user_inbox), ("channel", s.channel_inbox)]
    return {
        "users": [{"name": u, "pos": i} for i, u in enumerate(s.users)],
        "channels": [{"pos": i, "name": c} for i, c in enumerate(s.channels)],
        "member_lists": [{"user": u, "pos": i} for i, u in enumerate(s.user_channels)],
        "memberships": [m for u, cs in s.user_channels.items() for m in _memberships(u, cs, s.channels)],
        "inboxes": [{"kind": k, "owner": o, "pos": i} for k, box in inboxes for i, o in enumerate(box)],
        "messages": [{"kind": k, "owner": o, "pos": i, **m.model_dump()}
                     for k, box in inboxes for o, ms in box.items() for i, m in enumerate(ms)],
        "web_pages": [{"url": u, "pos": i, "content": c} for i, (u, c) in enumerate(w.web_content.items())],
        "web_requests": [{"pos": i, "url": u} for i, u in enumerate(w.web_requests)],
    }


def _ordered(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: r["pos"])


def from_rows(rows: Mapping[str, Sequence[tuple]]) -> SlackEnvironment:
    """The environment a world's rows (every table) stand for: the inverse of `to_rows`."""
    named = {t: [dict(zip(metadata.tables[t].columns.keys(), r)) for r in rows[t]] for t in metadata.tables}

    def inbox(kind: str) -> dict[str, list[dict]]:
        owners = [b["owner"] for b in _ordered([b for b in named["inboxes"] if b["kind"] == kind])]
        return {o: [{f: m[f] for f in ("sender", "recipient", "body")}
                    for m in _ordered([m for m in named["messages"] if (m["kind"], m["owner"]) == (kind, o)])]
                for o in owners}

    channels = [c["name"] for c in _ordered(named["channels"])]
    slack = Slack(
        users=[u["name"] for u in _ordered(named["users"])], channels=channels,
        user_channels={m["user"]: [channels[x["channel"]] for x in _ordered([x for x in named["memberships"]
                                                                  if x["user"] == m["user"]])]
                       for m in _ordered(named["member_lists"])},
        user_inbox=inbox("user"), channel_inbox=inbox("channel"))
    web = Web(web_content={p["url"]: p["content"] for p in _ordered(named["web_pages"])},
              web_requests=[r["url"] for r in _ordered(named["web_requests"])])
    return SlackEnvironment(slack=slack, web=web)
