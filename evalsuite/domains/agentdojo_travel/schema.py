"""Tables of the AgentDojo travel world: the catalogue the agent searches (hotels, restaurants, car rental companies,
their reviews, flights), the user, the one reservation the user holds, the calendar and the mailbox.

No tool adds to or removes from the catalogue, so its rows are keyed by their
place in the peer's lists (`pos`); reviews sit in a table of their own because
the injection vectors are reviews. The peer holds events and e-mails in dicts
keyed by id, built from its `initial_events` / `initial_emails` lists and
sharing their objects: a row says whether it came from that list (`initial`)
and where its key sits in the dict (`pos`). Lists of plain strings that no
attack reaches (a car company's car types, an e-mail's recipients, an event's
participants, an e-mail's attachments) are JSON text in one cell.
"""
from __future__ import annotations

from sqlalchemy import Boolean, Column, Float, Integer, MetaData, String, Table, Text

metadata = MetaData()

USER_FIELDS = ("first_name", "last_name", "ID_number", "email", "phone_number", "address", "passport_number",
               "bank_account_number", "credit_card_number")
user_info = Table("user_info", metadata, Column("id", Integer, primary_key=True),  # one row, id 0
             *[Column(f, String, nullable=False) for f in USER_FIELDS])

hotels = Table(
    "hotels", metadata,
    Column("pos", Integer, primary_key=True),  # place in hotels.hotel_list
    Column("name", String, nullable=False),
    Column("city", String, nullable=False),
    Column("rating", Float, nullable=False),
    Column("price_min", Float, nullable=False),
    Column("price_max", Float, nullable=False),
    Column("address", String, nullable=False),
)

restaurants = Table(
    "restaurants", metadata,
    Column("pos", Integer, primary_key=True),  # place in restaurants.restaurant_list
    Column("name", String, nullable=False),
    Column("city", String, nullable=False),
    Column("address", String, nullable=False),
    Column("rating", Float, nullable=False),
    Column("price_per_person", Float, nullable=False),
    Column("operating_hours", String, nullable=False),
    Column("contact_information", String, nullable=False),
    Column("cuisine_type", String, nullable=False),
    Column("dietary_restrictions", String, nullable=False),
)

car_companies = Table(
    "car_companies", metadata,
    Column("pos", Integer, primary_key=True),  # place in car_rental.company_list
    Column("name", String, nullable=False),
    Column("city", String, nullable=False),
    Column("address", String, nullable=False),
    Column("rating", Float, nullable=False),
    Column("price_per_day", Float, nullable=False),
    Column("contact_information", String, nullable=False),
    Column("car_types_available", Text, nullable=False),  # JSON list
    Column("fuel_options", Text, nullable=False),  # JSON list
)

reviews = Table(
    "reviews", metadata,  # a hotel's, restaurant's or company's reviews, in order
    Column("kind", String, primary_key=True),  # hotel, restaurant, car
    Column("item", Integer, primary_key=True),  # the pos of the hotel, restaurant or company
    Column("pos", Integer, primary_key=True),
    Column("text", Text, nullable=False),
)

flights = Table(
    "flights", metadata,
    Column("pos", Integer, primary_key=True),
    Column("airline", String, nullable=False),
    Column("flight_number", String, nullable=False),
    Column("departure_city", String, nullable=False),
    Column("arrival_city", String, nullable=False),
    Column("departure_time", String, nullable=False),  # ISO, as the peer dumps it
    Column("arrival_time", String, nullable=False),
    Column("price", Float, nullable=False),
    Column("contact_information", String, nullable=False),
)

reservation = Table(
    "reservation", metadata,  # the peer holds one reservation, overwritten by each booking
    Column("id", Integer, primary_key=True),  # one row, id 0
    Column("reservation_type", String),  # hotel, car, restaurant; null before any booking
    Column("title", String, nullable=False),
    Column("start_time", String, nullable=False),
    Column("end_time", String, nullable=False),
    Column("contact_information", String, nullable=False),
)

calendar = Table(
    "calendar", metadata,
    Column("id", Integer, primary_key=True),  # one row, id 0
    Column("current_day", String, nullable=False),
    Column("account_email", String, nullable=False),
)

events = Table(
    "events", metadata,
    Column("id_", String, primary_key=True),
    Column("pos", Integer, nullable=False),  # place of the key in calendar.events
    Column("initial", Boolean, nullable=False),  # listed in calendar.initial_events
    Column("title", String, nullable=False),
    Column("description", Text, nullable=False),
    Column("start_time", String, nullable=False),
    Column("end_time", String, nullable=False),
    Column("location", String),
    Column("participants", Text, nullable=False),  # JSON list (a new event's: sorted, see environment.py)
    Column("all_day", Boolean, nullable=False),
    Column("status", String, nullable=False),
)

inbox = Table(
    "inbox", metadata,
    Column("id", Integer, primary_key=True),  # one row, id 0
    Column("account_email", String, nullable=False),
)

emails = Table(
    "emails", metadata,
    Column("id_", String, primary_key=True),
    Column("pos", Integer, nullable=False),  # place of the key in inbox.emails
    Column("initial", Boolean, nullable=False),  # listed in inbox.initial_emails
    Column("sender", String, nullable=False),
    Column("recipients", Text, nullable=False),  # JSON list
    Column("cc", Text, nullable=False),
    Column("bcc", Text, nullable=False),
    Column("subject", Text, nullable=False),
    Column("body", Text, nullable=False),
    Column("status", String, nullable=False),
    Column("read", Boolean, nullable=False),
    Column("timestamp", String, nullable=False),  # a sent e-mail's: the world clock (the peer's: the machine's)
    # JSON list: a file id (a string), {"event": id} for an event the peer attaches itself (the very object in the
    # calendar, so a later change of the event shows in the mail), {"copy": {...}} for one the agent describes
    Column("attachments", Text, nullable=False),
)

EVENT_FIELDS = ("id_", "title", "description", "start_time", "end_time", "location", "participants", "all_day",
                "status")  # the peer's order
EMAIL_FIELDS = ("id_", "sender", "recipients", "cc", "bcc", "subject", "body", "status", "read", "timestamp",
                "attachments")
JSON_COLUMNS = {"car_types_available", "fuel_options", "participants", "recipients", "cc", "bcc", "attachments"}
