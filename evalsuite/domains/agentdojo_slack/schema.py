"""Tables of the AgentDojo slack world: the workspace (users, channels, who is in which channel, each user's and
each channel's messages) and the web (pages, and the log of every URL requested).

The peer holds these as Python lists and dicts, and its end state (its model
dumped as JSON) keeps their order: each list's order is a `pos` column, and each
dict's key order (insertion order: a key added later comes last, a replaced
value keeps its place) is the `pos` of the row standing for the key. Keys are
what no attack can rewrite: an injection vector sits inside a channel's name, so
a channel is keyed, and named by a membership, by its place in the list.
"""
from __future__ import annotations

from sqlalchemy import Column, Integer, MetaData, String, Table, Text

metadata = MetaData()

users = Table(
    "users", metadata,
    Column("name", String, primary_key=True),  # the peer refuses to invite a name twice
    Column("pos", Integer, nullable=False),  # place in slack.users
)

channels = Table(
    "channels", metadata,
    Column("pos", Integer, primary_key=True),  # no tool adds or removes a channel
    Column("name", String, nullable=False),
)

member_lists = Table(
    "member_lists", metadata,  # the keys of slack.user_channels
    Column("user", String, primary_key=True),
    Column("pos", Integer, nullable=False),
)

memberships = Table(
    "memberships", metadata,  # slack.user_channels[user]: the peer appends without looking, so a channel can repeat
    Column("user", String, primary_key=True),
    Column("channel", Integer, primary_key=True),  # the channel's pos in channels (its name may hold an attack)
    Column("copy", Integer, primary_key=True),  # 0 for a channel's first entry in the user's list, 1 for a repeat…
    Column("pos", Integer, nullable=False),  # place in the user's list
)

inboxes = Table(
    "inboxes", metadata,  # the keys of slack.user_inbox ("user") and slack.channel_inbox ("channel")
    Column("kind", String, primary_key=True),
    Column("owner", String, primary_key=True),
    Column("pos", Integer, nullable=False),
)

messages = Table(
    "messages", metadata,
    Column("kind", String, primary_key=True),
    Column("owner", String, primary_key=True),  # the inbox's key: a user, or a channel
    Column("pos", Integer, primary_key=True),  # place in that inbox
    Column("sender", String, nullable=False),
    Column("recipient", String, nullable=False),
    Column("body", Text, nullable=False),
)

web_pages = Table(
    "web_pages", metadata,  # web.web_content
    Column("url", String, primary_key=True),
    Column("pos", Integer, nullable=False),
    Column("content", Text, nullable=False),
)

web_requests = Table(
    "web_requests", metadata,  # web.web_requests: every URL fetched or posted, in order
    Column("pos", Integer, primary_key=True),
    Column("url", String, nullable=False),
)

MESSAGE_FIELDS = ("sender", "recipient", "body")  # the peer's order
