"""The eleven slack tools, each returning the text the peer shows the model.

Arguments are validated as the peer validates them (a pydantic model in lax
mode); descriptions are the peer's own, since they form the schema a model
sees. Errors read as the peer reports them, `ErrorType: message`. A tool that
returns nothing reads as "None", as in the peer. `get_webpage` is a write: the
peer logs every URL requested in `web.web_requests`, which its checks read.
"""
from __future__ import annotations

from pydantic import BaseModel, Field

from evalsuite.core.records import Role
from evalsuite.domains.agentdojo_common import render
from evalsuite.domains.agentdojo_slack.schema import MESSAGE_FIELDS, metadata
from evalsuite.worlds.domain import Domain, PartialWriteError, ToolContext, ToolError

DOMAIN = Domain(name="agentdojo_slack", version="1.2.2", metadata=metadata)
NOT_FOUND = "404 Not Found"


def _column(ctx: ToolContext, sql: str, params: tuple = ()) -> list:
    return [r[0] for r in ctx.run(sql, params)]


def _users(ctx: ToolContext) -> list[str]:
    return _column(ctx, "SELECT name FROM users ORDER BY pos")


def _channels(ctx: ToolContext) -> list[str]:
    return _column(ctx, "SELECT name FROM channels ORDER BY pos")


def _next_pos(ctx: ToolContext, table: str, where: str = "1", params: tuple = ()) -> int:
    return ctx.run(f"SELECT coalesce(max(pos), -1) + 1 FROM {table} WHERE {where}", params).fetchone()[0]


def _require(found: bool, error: str) -> None:
    if not found:
        raise ToolError(error)


def _empty_inbox(ctx: ToolContext, kind: str, owner: str) -> None:
    """`inbox[owner] = []`: a key already there keeps its place and loses its messages; a new one comes last."""
    ctx.run("DELETE FROM messages WHERE kind = ? AND owner = ?", (kind, owner))
    if not ctx.run("SELECT 1 FROM inboxes WHERE kind = ? AND owner = ?", (kind, owner)).fetchone():
        ctx.run("INSERT INTO inboxes (kind, owner, pos) VALUES (?, ?, ?)",
                (kind, owner, _next_pos(ctx, "inboxes", "kind = ?", (kind,))))


def _post(ctx: ToolContext, kind: str, owner: str, body: str) -> None:
    """A message from the bot at the end of an inbox, the inbox created (empty, last) if it has no key yet."""
    if not ctx.run("SELECT 1 FROM inboxes WHERE kind = ? AND owner = ?", (kind, owner)).fetchone():
        _empty_inbox(ctx, kind, owner)
    ctx.run("INSERT INTO messages (kind, owner, pos, sender, recipient, body) VALUES (?, ?, ?, 'bot', ?, ?)",
            (kind, owner, _next_pos(ctx, "messages", "kind = ? AND owner = ?", (kind, owner)), owner, body))


def _inbox(ctx: ToolContext, kind: str, owner: str) -> list[dict[str, str]]:
    return ctx.rows(f"SELECT {', '.join(MESSAGE_FIELDS)} FROM messages WHERE kind = ? AND owner = ? ORDER BY pos",
                    (kind, owner))


def _standard_url(url: str) -> str:
    """The peer strips one leading https://, then one leading http://."""
    url = url.removeprefix("https://")
    return url.removeprefix("http://")


def _request(ctx: ToolContext, url: str) -> None:
    ctx.run("INSERT INTO web_requests (pos, url) VALUES (?, ?)", (_next_pos(ctx, "web_requests"), url))


class NoArgs(BaseModel):
    pass


class UserChannel(BaseModel):
    user: str = Field(description="The user to add to the channel.")
    channel: str = Field(description="The channel to add the user to.")


class Channel(BaseModel):
    channel: str = Field(description="The channel to read the messages from.")


class UsersOf(BaseModel):
    channel: str = Field(description="The channel to get the users from.")


class Inbox(BaseModel):
    user: str = Field(description="The user whose inbox to read.")


class DirectMessage(BaseModel):
    recipient: str = Field(description="The recipient of the message.")
    body: str = Field(description="The body of the message.")


class ChannelMessage(BaseModel):
    channel: str = Field(description="The channel to send the message to.")
    body: str = Field(description="The body of the message.")


class Invite(BaseModel):
    user: str = Field(description="The user to invite.")
    user_email: str = Field(description="The user email where invite should be sent.")


class Remove(BaseModel):
    user: str = Field(description="The user to remove.")


class Url(BaseModel):
    url: str = Field(description="The URL of the webpage.")


class Page(BaseModel):
    url: str = Field(description="The URL of the webpage.")
    content: str = Field(description="The content of the webpage.")


@DOMAIN.tool("read")
def get_channels(ctx: ToolContext, args: NoArgs) -> str:
    """Get the list of channels in the slack."""
    return render(_channels(ctx))


@DOMAIN.tool("write")
def add_user_to_channel(ctx: ToolContext, args: UserChannel) -> str:
    """Add a user to a given channel."""
    _require(args.user in _users(ctx), f"ValueError: User {args.user} not found in the users list")
    _require(args.channel in _channels(ctx), f"ValueError: Channel {args.channel} not found in the channels list")
    _require(bool(ctx.run("SELECT 1 FROM member_lists WHERE user = ?", (args.user,)).fetchone()),
             f"KeyError: {args.user!r}")
    channel = _column(ctx, "SELECT min(pos) FROM channels WHERE name = ?", (args.channel,))[0]
    listed = _column(ctx, "SELECT channel FROM memberships WHERE user = ? ORDER BY pos", (args.user,))
    ctx.run("INSERT INTO memberships (user, channel, copy, pos) VALUES (?, ?, ?, ?)",
            (args.user, channel, listed.count(channel), len(listed)))
    return render(None)


@DOMAIN.tool("read")
def read_channel_messages(ctx: ToolContext, args: Channel) -> str:
    """Read the messages from the given channel."""
    _require(args.channel in _channels(ctx), "ValueError: Channel does not exist!")
    return render(_inbox(ctx, "channel", args.channel))


@DOMAIN.tool("read")
def read_inbox(ctx: ToolContext, args: Inbox) -> str:
    """Read the messages from the given user inbox."""
    _require(args.user in _users(ctx), f"ValueError: User {args.user} not found in the users list")
    return render(_inbox(ctx, "user", args.user))


@DOMAIN.tool("write")
def send_direct_message(ctx: ToolContext, args: DirectMessage) -> str:
    """Send a direct message from `author` to `recipient` with the given `content`."""
    _require(args.recipient in _users(ctx), f"ValueError: Recipient {args.recipient} not found in the users list")
    _post(ctx, "user", args.recipient, args.body)
    return render(None)


@DOMAIN.tool("write")
def send_channel_message(ctx: ToolContext, args: ChannelMessage) -> str:
    """Send a channel message from `author` to `channel` with the given `content`."""
    _require(args.channel in _channels(ctx), f"ValueError: Channel {args.channel} not found in the channels list")
    _post(ctx, "channel", args.channel, args.body)
    return render(None)


@DOMAIN.tool("read")
def get_users_in_channel(ctx: ToolContext, args: UsersOf) -> str:
    """Get the list of users in the given channel."""
    _require(args.channel in _channels(ctx), f"ValueError: Channel {args.channel} not found in the channels list")
    return render(_column(ctx, "SELECT user FROM member_lists l WHERE EXISTS (SELECT 1 FROM memberships m JOIN "
                               "channels c ON c.pos = m.channel WHERE m.user = l.user AND c.name = ?) ORDER BY pos",
                          (args.channel,)))


@DOMAIN.tool("write")
def invite_user_to_slack(ctx: ToolContext, args: Invite) -> str:
    """Invites a user to the Slack workspace."""
    _require(args.user not in _users(ctx), f"ValueError: User {args.user} already in the users list")
    ctx.run("INSERT INTO users (name, pos) VALUES (?, ?)", (args.user, _next_pos(ctx, "users")))
    _empty_inbox(ctx, "user", args.user)
    ctx.run("DELETE FROM memberships WHERE user = ?", (args.user,))
    if not ctx.run("SELECT 1 FROM member_lists WHERE user = ?", (args.user,)).fetchone():
        ctx.run("INSERT INTO member_lists (user, pos) VALUES (?, ?)", (args.user, _next_pos(ctx, "member_lists")))
    return render(None)


@DOMAIN.tool("write")
def remove_user_from_slack(ctx: ToolContext, args: Remove) -> str:
    """Remove a user from the Slack workspace."""
    _require(args.user in _users(ctx), f"ValueError: User {args.user} not found in the users list")
    ctx.run("DELETE FROM users WHERE name = ?", (args.user,))
    # the peer deletes the user's inbox, then their channel list, each a KeyError where the key is missing; what
    # it removed before the error stays removed
    for table, where in (("inboxes", "kind = 'user' AND owner = ?"), ("member_lists", "user = ?")):
        if not ctx.run(f"SELECT 1 FROM {table} WHERE {where}", (args.user,)).fetchone():
            raise PartialWriteError(f"KeyError: {args.user!r}")
        ctx.run(f"DELETE FROM {table} WHERE {where}", (args.user,))
        ctx.run("DELETE FROM messages WHERE kind = 'user' AND owner = ?" if table == "inboxes"
                else "DELETE FROM memberships WHERE user = ?", (args.user,))
    return render(None)


@DOMAIN.tool("write")
def get_webpage(ctx: ToolContext, args: Url) -> str:
    """Returns the content of the webpage at a given URL."""
    url = _standard_url(args.url)
    _request(ctx, url)
    found = ctx.run("SELECT content FROM web_pages WHERE url = ?", (url,)).fetchone()
    return render(found[0] if found else NOT_FOUND)


@DOMAIN.tool("write")
def post_webpage(ctx: ToolContext, args: Page) -> str:
    """Posts a webpage at a given URL with the given content."""
    url = _standard_url(args.url)
    _request(ctx, url)
    if ctx.run("UPDATE web_pages SET content = ? WHERE url = ?", (args.content, url)).rowcount == 0:
        ctx.run("INSERT INTO web_pages (url, pos, content) VALUES (?, ?, ?)",
                (url, _next_pos(ctx, "web_pages"), args.content))
    return render(None)


ROLE = Role(name="slack_assistant",
            read_tools=sorted(t.name for t in DOMAIN.tools.values() if t.kind == "read"),
            write_tools=sorted(t.name for t in DOMAIN.tools.values() if t.kind == "write"))
DOMAIN.roles[ROLE.name] = ROLE
