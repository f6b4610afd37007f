"""The decision brief submit_brief takes: the agent-facing schema."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Decision = Literal["proceed", "decline", "defer"]
QuestionId = Field(pattern=r"^Q\d+$", description="the id of the request's question, e.g. 'Q1'")


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Claim(Args):
    """One finding, answering one question of the request, backed by the words of one source."""

    question: str = QuestionId
    statement: str = Field(min_length=1, description="the finding, in the brief's own words")
    source_id: str = Field(min_length=1, description="the source the quotation is copied from")
    quotation: str = Field(min_length=1, description="copied verbatim from the source's text; a paraphrase or a "
                                                     "search snippet's ellipsis is not a quotation")


class Conflict(Args):
    """Sources that disagree on one question, and what they disagree about."""

    question: str = QuestionId
    sources: list[str] = Field(min_length=2, description="the ids of the sources that disagree")
    about: str = Field(min_length=1, description="the fact they disagree on, with each source's figure")


class Unknown(Args):
    """A question of the request the available sources cannot settle, and why."""

    question: str = QuestionId
    why: str = Field(min_length=1, description="why no available source settles it")


class Brief(Args):
    """A decision brief: one per research request, submitted once."""

    request_id: str = Field(min_length=1)
    decision: Decision = Field(description="the decision the research policy's rule gives for this request")
    summary: str = Field(min_length=1)
    claims: list[Claim] = Field(default_factory=list)
    conflicts: list[Conflict] = Field(default_factory=list)
    unknowns: list[Unknown] = Field(default_factory=list)
