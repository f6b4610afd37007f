"""Generate the mobile-service suite: every composite of the subtasks, verified with the real tools in a
workbench, then a balanced seeded sample turned into task records and the seed rows they run on.

Each sampled task gets its own customer, line, bill and phone, initialised (broken) in the seed, so one
world holds every task and any change to another task's rows is collateral.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from sqlalchemy import create_engine, insert, select
from sqlalchemy.pool import StaticPool

from evalsuite.core.records import (
    Assertion,
    Disclosure,
    Environment,
    GoalState,
    NegativeControl,
    Policy,
    Provenance,
    Simulator,
    SuiteRef,
    TaskRecord,
    ToolCall,
    TrialProtocol,
    Trigger,
    UserAction,
    UserScenario,
    UserScript,
)
from evalsuite.domains.mobile_service import schema as s
from evalsuite.domains.mobile_service.subtasks import BASE_PLAN, GROUPS, INTENTS, ORDER, extra_checks, working
from evalsuite.domains.mobile_service.tools import DOMAIN
from evalsuite.domains.mobile_service.user_tools import ASKED_BY, USER_DOMAIN
from evalsuite.sourcing.policies import load_policy
from evalsuite.tasks.composition import Composite, Entity, Subtask, compose, subsample, verify
from evalsuite.worlds.domain import ToolContext
from evalsuite.worlds.world import World

PERSONAS = ("none", "easy", "hard")
SIMULATOR = Simulator(model="scripted-user", version=f"mobile_service-user/{DOMAIN.version}", temperature=0.0,
                      kind="scripted")
PIN = "4821"  # the account PIN: the customer never says it (MS-7 forbids asking)
SYMPTOM = {"service_issue": "My phone has no service at all.",
           "mobile_data_issue": "My mobile data isn't working.",
           "mms_issue": "I can't send picture messages."}
GENERATED_TABLES = ("customers", "lines", "bills", "devices")


class Generation(BaseModel):
    """What the generation produced: counts for people, the seed rows and the task records."""

    composites: int
    verified: int
    dropped: dict[str, int]
    candidates: int  # verified composites x personas
    sampled: int
    strata: list[dict[str, Any]]  # intent, subtasks, persona, available, sampled
    tables: dict[str, list[dict[str, Any]]]
    tasks: list[TaskRecord]


def entity(k: int) -> dict[str, str]:
    return {"customer_id": f"C-{k:04d}", "line_id": f"L-{k:04d}", "bill_id": f"B-{k:04d}", "device_id": f"D-{k:04d}"}


def fresh_rows(e: Entity) -> dict[str, dict[str, Any]]:
    """A customer whose service works: active line on the basic plan, bill paid, phone set up right."""
    return {"customers": {"customer_id": e["customer_id"], "account_status": "active"},
            "lines": {"line_id": e["line_id"], "customer_id": e["customer_id"], "plan_id": BASE_PLAN,
                      "device_id": e["device_id"], "status": "active", "roaming_enabled": 0, "data_used_gb": 3,
                      "data_refuel_gb": 0},
            "bills": {"bill_id": e["bill_id"], "line_id": e["line_id"], "amount": Decimal("30.00"), "status": "paid"},
            "devices": {"device_id": e["device_id"], "airplane_mode": 0, "sim_seated": 1, "mobile_data": 1,
                        "data_roaming": 0, "apn": "internet", "mms_enabled": 1, "abroad": 0}}


class SqlWorkbench:
    """An in-memory SQLite world with both sides' tables; attempts are savepoints, tools are the real ones."""

    def __init__(self, plans: Sequence[Mapping[str, Any]]):
        self.engine = create_engine("sqlite://", poolclass=StaticPool)
        s.metadata.create_all(self.engine)
        self.conn = self.engine.connect()
        self.conn.begin()
        if plans:
            self.conn.execute(insert(s.plans), [dict(p) for p in plans])
        self.tools = {**DOMAIN.tools, **USER_DOMAIN.tools}

    @contextmanager
    def attempt(self) -> Iterator[None]:
        savepoint = self.conn.begin_nested()
        try:
            yield
        finally:
            savepoint.rollback()

    def setup(self, e: Entity) -> None:
        for table, row in fresh_rows(e).items():
            self.conn.execute(insert(s.metadata.tables[table]), row)

    def init(self, subtask: Subtask, e: Entity) -> None:
        subtask.init(self.conn, e)

    def run(self, call: ToolCall) -> None:
        tool = self.tools[call.tool]
        tool.fn(ToolContext(conn=self.conn, now=DOMAIN.clock), tool.args(**call.arguments))

    def working(self, intent: str, e: Entity) -> bool:
        return working(self.conn, intent, e)

    def holds(self, assertions: Sequence[Assertion]) -> bool:
        for a in assertions:
            table = s.metadata.tables[a.table]
            rows = self.conn.execute(select(table).filter_by(**a.key)).mappings().all()
            if not rows or any(str(r[c]) != str(v) for r in rows for c, v in a.expect.items()):
                return False
        return True


def composites(intents: Sequence[str] | None = None, max_subtasks: int | None = None) -> list[Composite]:
    out = []
    for intent, (required, optional) in INTENTS.items():
        if intents is not None and intent not in intents:
            continue
        for parts in compose(GROUPS, required, optional, max_subtasks):
            out.append(Composite(intent, tuple(sorted(parts, key=lambda p: ORDER.index(p.group)))))
    return out


def stratum(item: tuple[Composite, str]) -> tuple[str, int, str]:
    composite, persona = item
    return composite.intent, len(composite.parts), persona


def generate(plans: Sequence[Mapping[str, Any]], policy: Policy, *, n: int = 100, seed: int = 7,
             license_ref: str = "generated", protocol: TrialProtocol | None = None,
             intents: Sequence[str] | None = None, max_subtasks: int | None = None) -> Generation:
    """Compose, verify (dropping and counting failures), sample ~n balanced tasks, build their rows and records."""
    box = SqlWorkbench(plans)
    every = composites(intents, max_subtasks)
    dropped: Counter = Counter()
    good = []
    for i, c in enumerate(every):
        reason = verify(c, entity(90000 + i), box)
        if reason is None:
            good.append(c)
        else:
            dropped[reason.split(" fails:")[0]] += 1  # by reason: "solved without mms_off", "solution call X"…
    candidates = [(c, p) for c in good for p in PERSONAS]
    picked = sorted(subsample(candidates, stratum, n, seed), key=lambda cp: (cp[0].name, cp[1]))
    available, taken = Counter(map(stratum, candidates)), Counter(map(stratum, picked))
    strata = [{"intent": k[0], "subtasks": k[1], "persona": k[2], "available": available[k], "sampled": taken[k]}
              for k in sorted(available)]
    prices = {p["plan_id"]: Decimal(str(p["refuel_price_per_gb"])) for p in plans}
    tasks = [_task(k + 1, c, persona, policy, prices, license_ref, protocol or TrialProtocol())
             for k, (c, persona) in enumerate(picked)]
    return Generation(composites=len(every), verified=len(good), dropped=dict(dropped), candidates=len(candidates),
                      sampled=len(picked), strata=strata, tables=_seed_rows(box, picked), tasks=tasks)


def _seed_rows(box: SqlWorkbench, picked: Sequence[tuple[Composite, str]]) -> dict[str, list[dict[str, Any]]]:
    """Each sampled task's rows, fresh then broken by its initialisation."""
    with box.attempt():
        for k, (c, _) in enumerate(picked):
            e = entity(k + 1)
            box.setup(e)
            for part in c.parts:
                box.init(part, e)
        return {t: [dict(r) for r in box.conn.execute(select(s.metadata.tables[t])).mappings()]
                for t in GENERATED_TABLES}


def _task(k: int, c: Composite, persona: str, policy: Policy, prices: Mapping[str, Decimal], license_ref: str,
          protocol: TrialProtocol) -> TaskRecord:
    e = entity(k)
    goal = [a for p in c.parts for a in p.assertions(e)]
    refuel_price = prices.get(BASE_PLAN, Decimal("0"))
    checks = [ch for p in c.parts for ch in extra_checks(p, e, refuel_price)]
    solution = c.solution(e)
    names = {p.name for p in c.parts}
    answer = "Everything should work now."
    if "data_exhausted_refuel" in names:
        answer = f"I added 2 GB of data for {refuel_price * 2}. " + answer
    agent_only = [call for call in solution if call.actor != "user"]
    return TaskRecord(
        task_id=f"ms-{k:03d}", domain=DOMAIN.name, suite=SuiteRef(name="mobile_service", version="unreleased"),
        category=c.intent, split="test",
        environment=Environment(image=DOMAIN.image, seed_snapshot="generated", seed_sha256="unbuilt"),
        role=DOMAIN.roles["carrier_agent"], policy=policy,
        trigger=Trigger(type="conversation", text=_ticket(c, e)),
        user_scenario=UserScenario(persona=persona, instructions=_instructions(c, e, persona), simulator=SIMULATOR,
                                   script=_script(c, e, persona)),
        goal_state=GoalState(assertions=[a for a in goal if a.table != "devices"],
                             user_assertions=[a for a in goal if a.table == "devices"], domain_checks=checks,
                             unchanged_tables=["plans", "customers"],
                             annotations=[f"composite {c.name}; persona {persona}"]),
        reference_solution=solution, reference_answer=answer,
        alternative_solutions=[[ToolCall(tool="get_line", arguments={"line_id": e["line_id"]}), *solution]],
        negative_controls=[NegativeControl(name="skips the customer's phone", calls=agent_only,
                                           final_message=answer)] if len(agent_only) < len(solution) else [],
        trial_protocol=protocol,
        provenance=Provenance(source_record=f"composite {c.name} persona {persona}",
                              stratum={"intent": c.intent, "subtasks": len(c.parts), "persona": persona},
                              outcome_verified_by="evalsuite.tasks.composition.verify", license_ref=license_ref))


def _ticket(c: Composite, e: Entity) -> str:
    """The trigger, and in no-user mode all the agent gets: who, which line and phone, and the symptom."""
    return (f"Ticket: customer {e['customer_id']}, line {e['line_id']}, phone {e['device_id']}. "
            f"{SYMPTOM[c.intent]}")


def _wants(c: Composite) -> str:
    names = {p.name for p in c.parts}
    if "data_exhausted_refuel" in names:
        return "I'd like to add 2 GB of data for this month."
    if "data_exhausted_upgrade" in names:
        return "I'd rather move to the P-PLUS plan."
    return "I just want it working."


def _script(c: Composite, e: Entity, persona: str) -> UserScript:
    opening = {"none": SYMPTOM[c.intent],
               "easy": f"{SYMPTOM[c.intent]} It's line {e['line_id']}.",
               "hard": "Hi, my phone isn't doing what it should and I don't understand these things."}[persona]
    disclosures = [Disclosure(fact="line number", value=e["line_id"], asked_by=[r"\bline\b", r"phone number"]),
                   Disclosure(fact="customer number", value=e["customer_id"], asked_by=[r"customer", r"account"]),
                   Disclosure(fact="problem", value=SYMPTOM[c.intent], asked_by=[r"what.*(problem|wrong|issue)"]),
                   Disclosure(fact="wish", value=_wants(c), asked_by=[r"\bgb\b", r"refuel|top.?up|upgrade|\bplan\b"])]
    if any(p.group == "roaming" for p in c.parts):
        disclosures.append(Disclosure(fact="whereabouts", value="I'm travelling abroad right now.",
                                      asked_by=[r"travel|abroad|where are you|countr"]))
    actions = [UserAction(tool=t, arguments={"device_id": e["device_id"]}, asked_by=ASKED_BY[t])
               for t in sorted(USER_DOMAIN.tools)]
    return UserScript(opening=opening, disclosures=disclosures, withholds=[PIN], actions=actions)


def _instructions(c: Composite, e: Entity, persona: str) -> str:
    """The same scenario in words, for an LLM simulator."""
    style = {"none": "", "easy": " You know phones well and answer precisely.",
             "hard": " You know little about phones; describe what you see in plain words."}[persona]
    return (f"You own phone {e['device_id']} on line {e['line_id']} (customer {e['customer_id']}). "
            f"{SYMPTOM[c.intent]} {_wants(c)} Do on your phone only what the agent asks. Never tell anyone your "
            f"account PIN {PIN}.{style}")


POLICY_FILE = Path(__file__).parent / "policies" / "mobile_service_policy_v1.md"
# The plan catalog the bundled suite ships as its supplier delivery (suites/mobile_service/source/plans.csv).
PLANS = [{"plan_id": BASE_PLAN, "name": "Basic", "data_gb": 5, "refuel_price_per_gb": Decimal("2.00"),
          "monthly_fee": Decimal("30.00")},
         {"plan_id": "P-PLUS", "name": "Plus", "data_gb": 20, "refuel_price_per_gb": Decimal("1.50"),
          "monthly_fee": Decimal("45.00")},
         {"plan_id": "P-UNL", "name": "Unlimited", "data_gb": 1000, "refuel_price_per_gb": Decimal("0.00"),
          "monthly_fee": Decimal("70.00")}]


def sample_world(path: str | Path, n: int = 20, **options: Any) -> tuple[World, Generation]:
    """A generated sample and the world it runs on, outside any pipeline (examples, tests, benchmarks)."""
    policy = load_policy(POLICY_FILE).as_policy()
    gen = generate(PLANS, policy, n=n, **options)
    world = World.build(DOMAIN, {"plans": PLANS, **gen.tables}, path)
    return world, gen
