"""The structured review memo (what submit_memo takes) and the handoff request: the agent-facing schemas."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Issue = Literal["retention", "deletion_certificate", "security_exhibit", "data_scope"]
Conclusion = Literal["acceptable", "exception_needed", "cannot_determine"]
Team = Literal["legal", "security_privacy"]


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Quotation(Args):
    """Words copied verbatim from one passage of one document version, with where they stand."""

    doc_id: str = Field(min_length=1)
    version: int = Field(ge=1)
    location: str = Field(min_length=1, description="the passage's section number, e.g. '4.1'")
    text: str = Field(min_length=1, description="copied verbatim from the passage; a paraphrase is not a quotation")


class MemoIssue(Args):
    """One issue the review found, tied to the text that governs it and the playbook clause applied."""

    issue: Issue
    governing_doc_id: str = Field(min_length=1)
    governing_version: int = Field(ge=1)
    quotations: list[Quotation] = Field(min_length=1)
    playbook_clause: str = Field(min_length=1, description="the clause id of the playbook in effect, e.g. 'PB-4'")
    conclusion: Conclusion
    missing_evidence: str | None = Field(default=None, description="required with cannot_determine: what is missing")
    reasoning: str = ""

    @model_validator(mode="after")
    def _qualified(self) -> MemoIssue:
        if self.conclusion == "cannot_determine" and not (self.missing_evidence or "").strip():
            raise ValueError("missing_evidence: name the missing evidence when the conclusion is cannot_determine")
        return self


class Memo(Args):
    """A review memo: one per review request; an empty list of issues says the review found none."""

    review_id: str = Field(min_length=1)
    playbook_version: str = Field(min_length=1, description="the version of the playbook in effect, e.g. 'v1'")
    summary: str = Field(min_length=1)
    issues: list[MemoIssue] = Field(default_factory=list)


class Handoff(Args):
    """A request that Legal or Security/privacy review a focused question; it approves nothing."""

    review_id: str = Field(min_length=1)
    team: Team
    topic: Issue
    summary: str = Field(min_length=1)
