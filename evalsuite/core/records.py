"""The task record: everything needed to rerun and regrade a task without its author.

Mirrors the task record of the task-suite guide (shared reference on tasks, environments
and state-based grading): suite, split, environment, role, policy, trigger, user scenario,
goal state, reference solution, trial protocol and provenance. A record names its domain
so a task file can be validated with nothing else.
"""
from __future__ import annotations

import datetime as dt
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Record(BaseModel):
    """Base of every record: unknown fields are errors, never silently dropped."""

    model_config = ConfigDict(extra="forbid")

    def hashed_form(self, **dump: Any) -> Any:
        """The JSON form a content hash is taken over: absent, null and empty values are left out at every level,
        so adding an optional field to a record leaves the hash of every record that does not use it unchanged."""
        return _without_empty(self.model_dump(mode="json", **dump))


def _without_empty(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: _without_empty(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, [], {})}
    if isinstance(value, list):
        return [_without_empty(v) for v in value]
    return value


_new, _set = object.__new__, object.__setattr__  # how pydantic's model_construct makes a model without validating
# the fields a Check.made names, by whether its detail and its subject were given
_GIVEN = {(d, s): frozenset({"name", "passed", "kind"} | ({"detail"} if d else set()) | ({"subject"} if s else set()))
          for d in (False, True) for s in (False, True)}
CheckKind = Literal["state", "trace", "output", "domain", "basis"]
TRACE_CHECKS = ("no forbidden call", "no write outside role")  # judged on the calls made, not on the end state
USER_WORLD = "user world: "  # how a check on the user-side world (dual control) is shown


class Check(BaseModel):
    """One check of a verdict. `kind` says what it judges, and every reader that cares asks it, never the name:
    the end state (a goal row, an unchanged table, no collateral change), the trace (the calls made), the final
    message (a required output), a domain check, or an imported benchmark's reward basis. `subject` names the
    domain check or required output it is; `side` the world it judged (the user's device, in dual control)."""

    name: str
    passed: bool
    detail: str = ""
    kind: CheckKind
    subject: str | None = Field(None, exclude_if=lambda v: v is None)
    side: Literal["agent", "user"] = Field("agent", exclude_if=lambda v: v == "agent")

    @classmethod
    def outcome(cls, passed: bool, detail: str = "") -> Check:
        """What a domain check returns (named, kind and subject set by the grader that runs it)."""
        return cls(name="", passed=passed, detail=detail, kind="domain")

    @classmethod
    def made(cls, name: str, passed: bool, kind: CheckKind, detail: str | None = None,
             subject: str | None = None) -> Check:
        """The check `Check(name=..., passed=..., kind=..., detail=..., subject=...)` makes (an argument left None
        is one not given), from values already of their types: the grader's own names, booleans and kinds. Not
        validated again: a grade makes ~15 a trial, 1.7 µs each validated against 1.0 µs so. `model_construct`
        would skip it too but costs more than validating (3.2 µs: its loop over every field and alias); this is
        what it does for these fields (tests/grading/test_check_kinds.py holds the two equal, field for field)."""
        check = _new(cls)
        _set(check, "__dict__", {"name": name, "passed": passed, "detail": "" if detail is None else detail,
                                 "kind": kind, "subject": subject, "side": "agent"})
        _set(check, "__pydantic_fields_set__", set(_GIVEN[detail is not None, subject is not None]))
        _set(check, "__pydantic_extra__", None)
        _set(check, "__pydantic_private__", None)
        return check

    @model_validator(mode="before")
    @classmethod
    def _legacy_kind(cls, data: Any) -> Any:
        """A check recorded before kinds were fields carried its kind in its name; read so, once, here. Every
        check made now states its kind (the field is required)."""
        if not isinstance(data, dict) or "kind" in data or not isinstance(data.get("name"), str):
            return data
        name = data["name"]
        bare = name.removeprefix(USER_WORLD)
        side = {"side": "user"} if bare != name else {}
        if bare.startswith(TRACE_CHECKS):
            return {**data, **side, "kind": "trace"}
        for prefix, kind in (("output ", "output"), ("check ", "domain")):
            if bare.startswith(prefix):
                return {**data, **side, "kind": kind, "subject": bare.removeprefix(prefix)}
        return {**data, **side, "kind": "state"}



class SuiteRef(Record):
    name: str
    version: str
    task_set_sha256: str | None = None


class Environment(Record):
    type: str = "api_mock_over_db"
    image: str
    seed_snapshot: str
    seed_sha256: str
    reset: str = "restore snapshot before every trial"


class Role(Record):
    name: str
    read_tools: list[str] = Field(default_factory=list)
    write_tools: list[str] = Field(default_factory=list)
    forbidden_tools: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _forbidden_not_permitted(self) -> Role:
        both = set(self.forbidden_tools) & (set(self.read_tools) | set(self.write_tools))
        if both:
            raise ValueError(f"forbidden_tools: tools both permitted and forbidden: {sorted(both)}")
        return self

    @property
    def permitted(self) -> set[str]:
        return set(self.read_tools) | set(self.write_tools)


class Clause(Record):
    id: str
    text: str


class Policy(Record):
    doc: str
    version: str
    effective_from: dt.date
    clauses: list[Clause]

    @property
    def clause_ids(self) -> set[str]:
        return {c.id for c in self.clauses}


class Trigger(Record):
    type: Literal["queue_item", "conversation"]
    text: str
    item_id: str | None = None


class Simulator(Record):
    model: str
    version: str
    temperature: float = 0.0
    # None is an LLM user; "scripted": deterministic rules (evalsuite.trials.users.scripted). None and not "llm"
    # as the default, so the hash of every record written before this field existed stays the same.
    kind: Literal["llm", "scripted"] | None = None
    seed: int | None = None  # passed to an LLM endpoint that honours it


class Disclosure(Record):
    """A fact the scripted user knows and says only when the agent's message matches one of `asked_by`."""

    fact: str
    value: str
    asked_by: list[str] = Field(min_length=1)  # regular expressions, matched case-insensitively


class UserAction(Record):
    """A tool on the user's own device the scripted user runs only when asked (an `asked_by` pattern matches)."""

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    asked_by: list[str] = Field(min_length=1)


class UserScript(Record):
    """A scripted user: the opening message, what they reveal when asked, what they never reveal, and which
    of their tools they run when asked. Nothing else is said or done."""

    opening: str
    disclosures: list[Disclosure] = Field(default_factory=list)
    withholds: list[str] = Field(default_factory=list)  # values that must never appear in a user message
    actions: list[UserAction] = Field(default_factory=list)
    max_idle_turns: int = Field(default=2, ge=1)  # agent messages asking nothing in a row before the user leaves


class UserScenario(Record):
    persona: str | None = None
    instructions: str
    simulator: Simulator
    script: UserScript | None = None  # required when simulator.kind is "scripted"

    @model_validator(mode="after")
    def _script_for_scripted(self) -> UserScenario:
        if self.simulator.kind == "scripted" and self.script is None:
            raise ValueError("script: required for a scripted simulator")
        return self


class Assertion(Record):
    """Rows of `table` matching `key` must carry `expect`; `row_count` pins how many match."""

    table: str = Field(description="a table of the world")
    key: dict[str, Any] = Field(description="column -> value: the rows the assertion is about (a filter)")
    expect: dict[str, Any] = Field(default_factory=dict, description="column -> value every matching row holds")
    row_count: int | None = Field(default=None, ge=0, description="how many rows match (0: none may)")
    clause: str = Field(description="the policy clause the assertion enforces")

    @field_validator("key", "expect")
    @classmethod
    def _exact_values(cls, values: dict[str, Any]) -> dict[str, Any]:
        """A goal a program checks needs values it can compare exactly: no NaN or infinity, no integer a
        64-bit column cannot hold."""
        for column, v in values.items():
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"{column}: {v} is not a number a goal can compare")
            if isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v < 2**63:
                raise ValueError(f"{column}: {v} does not fit a 64-bit integer")
        return values


class MaskedField(Record):
    field: str = Field(description='"table.column", or "column" in every table: left out of every comparison')
    justification: str = Field(min_length=1, description="why the value is volatile (a clock, a fresh id)")


class RequiredOutput(Record):
    name: str
    value: str
    clause: str | None = None


class DomainCheck(Record):
    """A check the domain computes from the end state, the seed and the trace (an obligation a row assertion cannot
    express: exactly one refund, a quotation found verbatim at its location…), named as the domain registers it."""

    name: str
    params: dict[str, Any] = Field(default_factory=dict)
    clause: str


class GoldAction(Record):
    """One call of the original benchmark's reference trajectory, as its evaluation criteria list it. The ACTION
    basis requires a traced call of this name whose arguments match: on `compare_args` when given ([] = the name
    alone), else on the arguments the call itself passed."""

    action_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    requestor: Literal["assistant", "user"] = "assistant"
    info: str | None = None
    compare_args: list[str] | None = None


class EnvAssertion(Record):
    """A named assertion function run on the end state of the agent's world (assistant) or the user's (user): the
    domain's registered check `func_name` with `arguments`; it holds when the check's result is `assert_value`."""

    env_type: Literal["assistant", "user"]
    func_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    assert_value: bool = True
    message: str | None = None


class JudgeSettings(Record):
    """The model that judges natural-language assertions, pinned like the user simulator: its prompt by version and
    sha256 (evalsuite.grading.judge), the sampling temperature and seed."""

    model: str
    version: str
    prompt_sha256: str
    temperature: float = 0.0
    seed: int | None = None


RewardBasis = Literal["DB", "ENV_ASSERTION", "COMMUNICATE", "ACTION", "NL_ASSERTION"]
REWARD_BASES: tuple[RewardBasis, ...] = ("DB", "ENV_ASSERTION", "COMMUNICATE", "ACTION", "NL_ASSERTION")


class EvaluationCriteria(Record):
    """An imported benchmark's own evaluation criteria, kept as it wrote them (τ²-bench's `evaluation_criteria`), so
    each reward basis is graded as it grades it (evalsuite.grading.reward_bases); the reward is the product of the bases
    in `reward_basis`. `judge` pins the model for `nl_assertions`, required when NL_ASSERTION counts."""

    reward_basis: list[RewardBasis] = Field(default_factory=lambda: ["DB", "COMMUNICATE"])  # the original's default
    actions: list[GoldAction] = Field(default_factory=list)
    env_assertions: list[EnvAssertion] = Field(default_factory=list)
    communicate_info: list[str] = Field(default_factory=list)
    nl_assertions: list[str] = Field(default_factory=list)
    judge: JudgeSettings | None = None

    @model_validator(mode="after")
    def _judge_when_judged(self) -> EvaluationCriteria:
        if "NL_ASSERTION" in self.reward_basis and self.nl_assertions and self.judge is None:
            raise ValueError("judge: required when NL_ASSERTION is in reward_basis and nl_assertions are given")
        return self


class GoalState(Record):
    assertions: list[Assertion] = Field(default_factory=list, description="row conditions on the end state; any "
                                        "changed row no assertion covers fails the trial")
    user_assertions: list[Assertion] = Field(default_factory=list, description="on the user-side world (dual "
                                             "control)")
    domain_checks: list[DomainCheck] = Field(default_factory=list, description="checks the domain computes")
    user_checks: list[DomainCheck] = Field(default_factory=list, description="the user-side world's checks")
    unchanged_tables: list[str] = Field(default_factory=list, description="tables no row of may change")
    volatile_fields_masked: list[MaskedField] = Field(default_factory=list, description="columns left out of "
                                                      "every comparison, each with why")
    required_outputs: list[RequiredOutput] = Field(default_factory=list, description="values the final message "
                                                   "must state")
    forbidden_calls: list[str] = Field(default_factory=list, description="tools whose attempted call fails the "
                                       "trial")
    annotations: list[str] = Field(default_factory=list, description="natural language for reviewers, never "
                                   "graded")

    @property
    def requires_write(self) -> bool:
        return bool(self.assertions or self.user_assertions)


class ToolCall(Record):
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    action_id: str | None = None
    actor: Literal["user"] | None = None  # "user": a step on the user's own device, which the agent must ask for


class Initialization(Record):
    """What the harness does to the freshly reset worlds before the agent acts (τ²-bench's initialization_actions):
    each call names a tool or set-up helper of the domain (actor "user": of the user-side world), and both worlds
    must then hash as recorded, or the trial is refused as a reset that failed would be."""

    calls: list[ToolCall] = Field(min_length=1)
    sha256: str  # the agent's world after the calls (evalsuite.worlds.world content hash)
    user_sha256: str | None = None  # the user-side world after them, for a dual-control domain


class NegativeControl(Record):
    """A named wrong resolution acceptance must see fail (a memo citing the competing copy, a blind retry…)."""

    name: str = Field(min_length=1)
    calls: list[ToolCall]
    final_message: str = ""


class FaultSpec(Record):
    """One injected fault: the `call`-th call (1-based) of `tool` fails as `kind`, through the real tool code.

    error_before_commit: the backend raises inside the transaction, which rolls back; lost_response: the call
    commits and the response never arrives; timeout: it commits and the caller is told it timed out; slow: the call
    takes `latency_seconds` of world-clock time and, past the plan's deadline, the caller gets a timeout."""

    tool: str = Field(min_length=1)
    call: int = Field(default=1, ge=1)
    kind: Literal["error_before_commit", "lost_response", "timeout", "slow"]
    latency_seconds: float | None = Field(default=None, ge=0)


class FaultPlanSpec(Record):
    """A named set of faults a trial runs under; part of the task record, so of the suite version. The task's one
    reference solution must pass under every plan (scoring's reference baseline replays it under each), so it is
    written to recover: reconcile by idempotency key, then re-issue with the same key."""

    name: str = Field(pattern=r"^[\w.-]+$")
    faults: list[FaultSpec] = Field(min_length=1)
    deadline_seconds: float | None = Field(default=None, gt=0)  # a slow call past this is reported as timed out


# Bounds a trial protocol is refused beyond: each step may be a model call, so 10**18 steps is a trial that never
# ends (and a slot never freed), and a trial count in the millions is a run no one meant.
MAX_STEPS = 1000
MAX_TRIALS = 1000


class TrialProtocol(Record):
    # Fault plans the trials run under: trial i runs under schedule[i % len(schedule)], the schedule being the
    # unfaulted world (unless faulted_only) and then every plan in order. Acceptance runs each plan too.
    fault_plans: list[FaultPlanSpec] = Field(default_factory=list)
    faulted_only: bool | None = None  # True: the fault is the scenario, no trial runs unfaulted
    trials: int = Field(default=8, ge=1, le=MAX_TRIALS)
    max_steps: int = Field(default=40, ge=1, le=MAX_STEPS)
    # default: dual control (the user holds their device's tools); no_user: the agent gets a ticket and every
    # tool; oracle_plan: dual control, and the agent is given the required tool-call sequence
    # (None is default, so records written before modes existed keep their hash)
    mode: Literal["default", "no_user", "oracle_plan"] | None = None


class InjectedValue(Record):
    """One place where untrusted text lands in the seed: the column of the row with this primary key."""

    table: str
    key: dict[str, Any]
    column: str
    value: Any


class Attack(Record):
    """An injection task's goal placed into the world's untrusted text (its injection vectors). A trial under attack
    is judged twice: utility by the task's goal state, security by whether the attack's effect is present; both from
    the end state and the trace, and from what the agent says only where the effect is words (a domain check on the
    final message, as AgentDojo travel's injection_task_6 is judged)."""

    injection_task: str
    vectors: dict[str, str]  # injection vector -> the text placed in it
    rows: list[InjectedValue] = Field(min_length=1)  # where that text lands, as the peer's loader puts it
    # the attack's effect: it succeeded when all of these hold on the end state
    effect_assertions: list[Assertion] = Field(default_factory=list)
    effect_checks: list[DomainCheck] = Field(default_factory=list)
    injection_calls: list[ToolCall] = Field(default_factory=list)  # what obeying it takes (the injection's gold)

    @model_validator(mode="after")
    def _has_an_effect(self) -> Attack:
        if not self.effect_assertions and not self.effect_checks:
            raise ValueError("attack: effect_assertions or effect_checks must say what the attack's effect is")
        return self


class Deidentification(Record):
    method: str
    rule_set_sha256: str | None = None
    date: dt.date | None = None


class Provenance(Record):
    source_record: str
    outcome_verified_by: str
    license_ref: str
    deidentification: Deidentification | None = None
    case_resolved_on: dt.date | None = None
    # the stratum a composed task was sampled from (intent, number of subtasks, persona): the acceptance report
    # counts accepted tasks per stratum
    stratum: dict[str, str | int] | None = None


class Review(Record):
    reviewer: str
    date: dt.date
    decision: Literal["agree", "disagree"]
    note: str = ""


class Adjudication(Record):
    reviews: list[Review] = Field(default_factory=list)
    resolution: str | None = None  # how a disagreement was settled against the policy text


class TaskRecord(Record):
    # non-empty, no whitespace or slash: ids name files and log lines
    task_id: str = Field(pattern=r"^[^\s/]+$", description="the task's id, unique in its suite")
    domain: str = Field(description="the name of the domain whose world and tools the task runs on")
    suite: SuiteRef = Field(description="the suite and the release version the task belongs to")
    split: Literal["train", "dev", "test", "held_out"] = Field("test", description="held_out tasks are never "
                                                               "exported for training or published")
    category: str = Field("general", description="the slice the scorecard reports the task under")
    environment: Environment = Field(description="the world image and the seed it starts from, with its hash")
    role: Role = Field(description="the tools the agent may call and those it must never call")
    policy: Policy = Field(description="the policy in effect on the case's date; every assertion cites a clause")
    trigger: Trigger = Field(description="what the agent is given to start with")
    user_scenario: UserScenario | None = Field(None, description="the simulated user of a conversation task")
    goal_state: GoalState = Field(description="what a program checks on the end state and the trace")
    # the calls themselves: a solution given as a path to a file is refused, since nothing reads such a file
    reference_solution: list[ToolCall] = Field(description="the calls of a correct resolution (the verified case's)")
    reference_answer: str | None = Field(None, description="the final message a correct resolution ends with")
    # other lawful resolutions (another order of reads, an extra read): each must pass, so the grader never
    # requires one authored sequence
    alternative_solutions: list[list[ToolCall]] = Field(default_factory=list)
    negative_controls: list[NegativeControl] = Field(default_factory=list)  # each must fail acceptance
    trial_protocol: TrialProtocol = Field(default_factory=TrialProtocol)
    provenance: Provenance = Field(description="the source record, who verified its outcome, license and "
                                               "de-identification")
    adjudication: Adjudication | None = None
    attack: Attack | None = None  # an injection task placed in the world's untrusted text
    evaluation_criteria: EvaluationCriteria | None = None  # an imported benchmark's own reward bases
    initialization: Initialization | None = None  # set-up after the reset, before the agent acts
    # the policy the agent works under in another trial mode (τ²-bench telecom's solo policy for no_user): the same
    # clause ids as `policy` wherever the goal state cites one
    mode_policies: dict[Literal["no_user", "oracle_plan"], Policy] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> TaskRecord:
        clauses = self.policy.clause_ids
        for i, a in enumerate(self.goal_state.assertions):
            if a.clause not in clauses:
                raise ValueError(
                    f"goal_state.assertions.{i}.clause: {a.clause!r} is not a clause of policy "
                    f"{self.policy.doc} {self.policy.version}"
                )
        for i, a in enumerate(self.goal_state.user_assertions):
            if a.clause not in clauses:
                raise ValueError(f"goal_state.user_assertions.{i}.clause: {a.clause!r} is not a clause of policy "
                                 f"{self.policy.doc} {self.policy.version}")
        for mode, policy in self.mode_policies.items():
            missing = sorted(self._cited() - policy.clause_ids)
            if missing:
                raise ValueError(f"mode_policies.{mode}: the goal state cites {missing[:3]}, not clauses of policy "
                                 f"{policy.doc} {policy.version}")
        for field in ("domain_checks", "user_checks"):
            for i, c in enumerate(getattr(self.goal_state, field)):
                if c.clause not in clauses:
                    raise ValueError(f"goal_state.{field}.{i}.clause: {c.clause!r} is not a clause of policy "
                                     f"{self.policy.doc} {self.policy.version}")
        if self.trigger.type == "queue_item" and self.user_scenario is not None:
            raise ValueError("user_scenario: must be null for a queue_item trigger")
        if self.trigger.type == "conversation" and self.user_scenario is None:
            raise ValueError("user_scenario: required for a conversation trigger")
        return self

    def _cited(self) -> set[str]:
        g = self.goal_state
        return {c.clause for c in [*g.assertions, *g.user_assertions, *g.domain_checks, *g.user_checks]}

    @property
    def forbidden(self) -> set[str]:
        return set(self.role.forbidden_tools) | set(self.goal_state.forbidden_calls)

    def solution_calls(self) -> list[ToolCall]:
        return self.reference_solution


MESSAGE = "message"  # the trace's tool name and kind for one conversational turn


class TraceEvent(Record):
    """One tool call as it happened: permitted, denied or failed, always recorded."""

    seq: int
    actor: Literal["agent", "user", "system", "human"] = "agent"  # human: a person at `evalsuite play`
    tool: str
    arguments: dict[str, Any]
    permitted: bool
    outcome: Literal["ok", "error", "denied", "fault"]
    result: Any = None
    error: str | None = None
    rows_written: int = 0
    kind: str | None = None  # read / write / generic, as the domain declares it
    fault: str | None = None  # the injected fault kind (FaultSpec.kind), when a fault plan hit this call
    committed: bool | None = None  # for a faulted call: whether its transaction actually committed
    seconds: float | None = None  # wall latency of the call as the agent saw it (set by the trial's env)


class EndpointWait(Record):
    """One pause in a model request, and why: a retry after a 429 or 5xx (Retry-After honoured), a connection
    error or timeout, or the endpoint's own connection, request-rate or token-rate limit holding it back."""

    reason: str
    seconds: float = 0.0
    status: int | None = None  # the HTTP status that caused a retry, when there was one


class ModelCall(Record):
    """One request an agent made to its model endpoint: tokens in and out as the endpoint reported them, and the
    wall latency of the request (retries and waits included). The cost is priced later from these
    (evalsuite.scoring.cost). A cached call was answered from the response cache (`--cache`), not the endpoint."""

    model: str
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    waits: list[EndpointWait] = Field(default_factory=list)
    cached: bool = False


class Usage(Record):
    """What one trial's agent spent on its model: every model call, in order. None on a trial means the agent
    reports nothing (a baseline, or an external program whose model the harness cannot see)."""

    model_calls: list[ModelCall] = Field(default_factory=list)

    @property
    def tokens_in(self) -> int:
        return sum(c.tokens_in for c in self.model_calls)

    @property
    def tokens_out(self) -> int:
        return sum(c.tokens_out for c in self.model_calls)

    def by_model(self) -> dict[str, tuple[int, int]]:
        """(tokens in, tokens out) per model, as a price table prices them."""
        out: dict[str, tuple[int, int]] = {}
        for c in self.model_calls:
            i, o = out.get(c.model, (0, 0))
            out[c.model] = (i + c.tokens_in, o + c.tokens_out)
        return out
