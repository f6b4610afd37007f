"""The research desk's export, synthetic and seeded: a catalogue of sources (some subscriber-only, some contradicting
an older source on a figure, some rumours), the research requests and the briefs the desk wrote for them, most
verified by a reviewer.

Made for evalsuite with Faker (seed 42) and hand-written templates; no third-party text. The mess is deliberate:
two briefs nobody verified, one whose decision contradicts the policy, one whose quotation is a paraphrase (the
derivation skips and counts each). `python -m evalsuite.domains.decision_brief.corpus suites/research_brief`
regenerates the suite's source tables; a test checks the shipped files equal a fresh write.
"""
from __future__ import annotations

import datetime as dt
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

from faker import Faker

from evalsuite.core.io import atomic_write, csv_text
from evalsuite.domains.decision_brief import schema as s

SEED = 42
LICENSE_REF = "CC0-1.0: synthetic, generated for evalsuite (Faker seed 42 and authored templates)"
TYPES = ("supplier_approval", "market_entry", "software_adoption")
# (decision, planted conflict on Q1, the question whose figure misses its limit when declined)
PLAN = [("proceed", True, None), ("decline", True, "Q1"), ("defer", False, None), ("proceed", False, None),
        ("decline", True, "Q2"), ("proceed", True, None), ("decline", False, "Q1"), ("defer", True, None),
        ("decline", False, "Q2"), ("proceed", False, None)]
# the desk's mistakes, one case each: (question type, mess)
MESS = [("supplier_approval", "unverified"), ("market_entry", "unverified"), ("software_adoption", "contradicts"),
        ("supplier_approval", "paraphrase")]
# figure ranges (low, high, decimals) that meet or miss each question's limit in research_policy v1
RANGES = {
    "supplier_approval": {"Q1": ((120, 460, 0), (560, 1400, 0)), "Q2": ((95.6, 99.4, 1), (82.0, 93.9, 1))},
    "market_entry": {"Q1": ((0.5, 7.2, 1), (9.0, 24.0, 1)), "Q2": ((3.5, 9.8, 1), (0.4, 2.6, 1))},
    "software_adoption": {"Q1": ((18, 38, 0), (44, 89, 0)), "Q2": ((99.61, 99.98, 2), (98.10, 99.38, 2))},
}
COMPONENTS = ["brake calipers", "wiring harnesses", "gearbox housings", "seat frames", "fuel pumps", "LED modules"]
PRODUCTS = ["outdoor furniture", "kitchen textiles", "garden tools", "camping gear", "table lamps", "bath linen"]
COUNTRIES = ["Portugal", "Chile", "Vietnam", "Morocco", "Poland", "Malaysia", "Colombia", "Kenya", "Romania",
             "Peru", "Thailand", "Ghana"]


@dataclass
class Export:
    tables: dict[str, list[dict]] = field(default_factory=lambda: {t: [] for t in TABLES})
    next_source: int = 1

    def source(self, publisher: str, on: dt.date, title: str, text: str | None) -> str:
        sid = f"SRC-{self.next_source:04d}"
        self.next_source += 1
        self.tables["sources"].append(dict(source_id=sid, publisher=publisher, published_on=on.isoformat(),
                                           title=title, text=text, available=int(text is not None),
                                           license_ref=LICENSE_REF))
        return sid

    def older(self, rng: random.Random, c: Case, newer_on: dt.date, publisher: str, title, text) -> str | None:
        """The older source contradicting Q1's figure, where the case plants one: `title(on)`, `text(on)`."""
        if not c.older:
            return None
        on = _days(rng, newer_on, 200, 420)
        return self.source(publisher, on, title(on), text(on))

    def q2(self, c: Case, publisher: str, on: dt.date, title: str, text) -> str:
        """Q2's source, subscriber-only (no text, `text()` never drawn) where the case defers."""
        if c.decision == "defer":
            return self.source(publisher, on, f"{title} (subscriber edition)", None)
        return self.source(publisher, on, title, text())


@dataclass
class Case:
    """One request's world: its subject, figures and the sources stating them."""

    qtype: str
    subject: str
    detail: str  # the component, product line or vendor
    requested: dt.date
    figures: dict[str, str]
    older: str | None  # the older, contradicting Q1 figure
    decision: str


def _figure(rng: random.Random, rng_spec: tuple) -> str:
    low, high, places = rng_spec
    return f"{rng.uniform(low, high):.{places}f}" if places else str(rng.randint(low, high))


def _figures(rng: random.Random, qtype: str, failing: str | None) -> dict[str, str]:
    return {q: _figure(rng, RANGES[qtype][q][q == failing]) for q in ("Q1", "Q2")}


def _older(rng: random.Random, qtype: str, newer: str, flip: bool) -> str:
    """An older Q1 figure that differs from the newer one: on the other side of the limit when `flip`."""
    meets, misses = RANGES[qtype]["Q1"]
    newer_meets = meets[0] <= float(newer) <= meets[1]
    while (old := _figure(rng, (misses if newer_meets else meets) if flip else (meets if newer_meets else misses))) \
            == newer:
        pass
    return old


def _days(rng: random.Random, on: dt.date, low: int, high: int) -> dt.date:
    return on - dt.timedelta(days=rng.randint(low, high))


def _month(on: dt.date) -> str:
    return on.strftime("%B %Y")


# Per question type: the request's wording and the texts of its sources. Each text states its figure twice, so a
# lawful brief may quote either sentence.
def _supplier(out: Export, rng: random.Random, c: Case) -> dict:
    comp, subj, v = c.detail, c.subject, c.figures
    city = rng.choice(["Leeds", "Porto", "Brno", "Gdansk", "Turin", "Ulm"])
    q1on = _days(rng, c.requested, 20, 80)
    q1 = out.source("Vale Quality Labs", q1on, f"{subj}: supplier quality audit, {comp}",
                    f"Vale Quality Labs audited {subj}'s {comp} production in {_month(q1on)}. Across "
                    f"{rng.randint(8, 40) * 1000:,} units sampled from {rng.randint(12, 60)} lots, the audit "
                    f"measured a defect rate of {v['Q1']} parts per million. Most defects were cosmetic; "
                    f"{rng.randint(2, 9)} were safety-relevant and traced to one press line. The audited defect rate "
                    f"of {v['Q1']} parts per million supersedes the supplier's self-reported figures.")
    old = out.older(rng, c, q1on, "Component Sourcing Weekly", lambda on: f"Buyers' survey: {comp} suppliers ranked",
                    lambda on: f"In our {_month(on)} buyers' survey, {subj} reported a defect rate of {c.older} parts "
                    f"per million on {comp}. The figure was supplied by the company and was not independently "
                    "audited. Buyers rated its engineering support highly.")
    q2on = _days(rng, c.requested, 10, 60)
    quarter = f"Q{(q2on.month - 1) // 3 + 1} {q2on.year}"
    q2 = out.q2(c, "FreightLens", q2on, f"{subj}: delivery performance index {quarter}", lambda:
                    f"FreightLens tracked {rng.randint(120, 900)} shipments from {subj} in {quarter}. "
                    f"{v['Q2']} percent of them arrived on or before the agreed date. Late shipments were on average "
                    f"{rng.randint(2, 9)} days late. At {v['Q2']} percent on time, {subj} ranks "
                    f"{rng.randint(2, 30)} of {rng.randint(31, 60)} suppliers in its category.")
    out.source("Meridian Industrial Research", _days(rng, c.requested, 15, 90),
               f"{subj}: capacity expansion outlook to 2027 (subscriber report)", None)
    rumour = out.source(f"{city} Business Journal", _days(rng, c.requested, 5, 40),
                        f"{subj} said to weigh second plant",
                        f"{subj} is said to be weighing a second {comp} plant near {city}, according to two people "
                        f"familiar with the plans who asked not to be named. A spokesperson for {subj} declined to "
                        "comment. No building permit has been filed, and the company's last annual report does not "
                        "mention new capacity.")
    return dict(
        decision_question=f"Should we approve {subj} as a supplier of {comp}?",
        questions=[f"What is {subj}'s current defect rate on {comp}?", f"What is {subj}'s on-time delivery rate?",
                   f"Will {subj} open its second {comp} plant before 2027?"],
        q1=(q1, f"defect rate of {v['Q1']} parts per million", f"{subj}'s audited defect rate on {comp} is "
                                                                 f"{v['Q1']} parts per million."),
        q2=(q2, f"{v['Q2']} percent of them arrived on or before the agreed date",
            f"{v['Q2']} percent of {subj}'s tracked shipments arrived on time."),
        old=old, about=f"defect rate: {{new}} states {v['Q1']} ppm, {{old}} states {c.older} ppm",
        rumour=rumour, q2_why="the delivery index for the quarter is subscriber-only; no available source states "
                              "the on-time rate",
        q3_why="the capacity outlook is subscriber-only; the only available account is an unconfirmed report citing "
               "unnamed people")


def _market(out: Export, rng: random.Random, c: Case) -> dict:
    country, prod, v = c.subject, c.detail, c.figures
    year = c.requested.year
    q1on = dt.date(year, 1, 1) - dt.timedelta(days=rng.randint(10, 40))
    q1 = out.source(f"{country} Customs Authority", q1on, f"Tariff schedule {year}: {prod}",
                    f"From 1 January {year}, imports of {prod} into {country} are charged an import tariff of "
                    f"{v['Q1']} percent of customs value. The schedule replaces the rates published for {year - 1}. "
                    f"Goods from countries with a trade agreement pay the same {v['Q1']} percent rate until further "
                    "notice.")
    old = out.older(rng, c, q1on, "Trade Desk Digest", lambda on: f"Exporter's guide to {country}",
                    lambda on: f"Exporters of {prod} to {country} should budget for an import tariff of {c.older} "
                    f"percent, according to our {_month(on)} guide. Duties change often; check the current customs "
                    "schedule before shipping.")
    q2on = _days(rng, c.requested, 10, 60)
    q2 = out.q2(c, "Marketscope Research", q2on, f"{country} {prod} market: {year - 1} review", lambda:
                    f"Retail sales of {prod} in {country} grew by {v['Q2']} percent in {year - 1}, to "
                    f"{rng.randint(40, 900)} million USD. Online channels accounted for {rng.randint(12, 45)} percent "
                    f"of sales. Annual market growth of {v['Q2']} percent in {year - 1} followed "
                    f"{rng.uniform(0.5, 9.5):.1f} percent the year before.")
    out.source(f"{country} Parliament, Finance Committee", _days(rng, c.requested, 15, 90),
               f"Packaging levy on imported {prod}: committee report (restricted circulation)", None)
    rumour = out.source("Import Insider", _days(rng, c.requested, 5, 40), f"{country} levy: what we are hearing",
                        f"Lobbyists in {country} expect the packaging levy on imported {prod} to pass before the "
                        "summer recess, though the committee has not published its report. Ministers have given no "
                        "date for a vote.")
    return dict(
        decision_question=f"Should we start selling {prod} in {country}?",
        questions=[f"What import tariff does {country} charge on {prod}?",
                   f"How fast is the {prod} market in {country} growing?",
                   f"Will {country}'s proposed packaging levy on imported {prod} be adopted this year?"],
        q1=(q1, f"charged an import tariff of {v['Q1']} percent of customs value",
            f"{country} charges an import tariff of {v['Q1']} percent on {prod}."),
        q2=(q2, f"grew by {v['Q2']} percent in {year - 1}", f"The {prod} market in {country} grew by {v['Q2']} "
                                                             f"percent in {year - 1}."),
        old=old, about=f"import tariff: {{new}} states {v['Q1']} percent, {{old}} states {c.older} percent",
        rumour=rumour, q2_why="the market review is subscriber-only; no available source states the growth",
        q3_why="the committee report is restricted; lobbyists' expectations settle nothing and no vote is scheduled")


def _software(out: Export, rng: random.Random, c: Case) -> dict:
    vendor, prod, v = c.subject, c.detail, c.figures
    q1on = _days(rng, c.requested, 20, 80)
    q1 = out.source(vendor, q1on, f"{prod} pricing, effective {_month(q1on)}",
                    f"{prod} Business is priced at {v['Q1']} USD per seat per month, billed annually. Volume "
                    f"discounts start at 500 seats. The list price of {v['Q1']} USD per seat per month includes "
                    "standard support.")
    old = out.older(rng, c, q1on, "SaaS Price Watch", lambda on: f"Finance platforms compared: {_month(on)}",
                    lambda on: f"At the time of our comparison in {_month(on)}, {prod} Business listed at {c.older} "
                    "USD per seat per month. Prices in this category change frequently.")
    q2on = _days(rng, c.requested, 10, 60)
    q2 = out.q2(c, "StatusWatch", q2on, f"{prod}: twelve-month availability report", lambda:
                    f"StatusWatch probed {prod} every minute from {rng.randint(4, 12)} regions for twelve months to "
                    f"{_month(q2on)}. Measured uptime was {v['Q2']} percent, with {rng.randint(1, 14)} incidents "
                    f"longer than ten minutes. A measured uptime of {v['Q2']} percent counts scheduled maintenance as "
                    "downtime.")
    out.source("Northgate Capital Markets", _days(rng, c.requested, 15, 90),
               f"{vendor}: strategic options (client-only research note)", None)
    rumour = out.source("The Ledger Line", _days(rng, c.requested, 5, 40), f"Is {vendor} for sale?",
                        f"Rumours that {vendor} has hired bankers to explore a sale resurfaced this week. {vendor} did "
                        "not respond to questions, and no buyer has been named.")
    return dict(
        decision_question=f"Should we adopt {prod} for the finance team?",
        questions=[f"What is the list price of {prod} per seat and month?", f"What uptime does {prod} achieve?",
                   f"Will {vendor} be acquired within the next year?"],
        q1=(q1, f"priced at {v['Q1']} USD per seat per month", f"{prod} lists at {v['Q1']} USD per seat per month."),
        q2=(q2, f"Measured uptime was {v['Q2']} percent", f"{prod}'s measured uptime was {v['Q2']} percent."),
        old=old, about=f"list price: {{new}} states {v['Q1']} USD, {{old}} states {c.older} USD",
        rumour=rumour, q2_why="the availability report is subscriber-only; no available source states the uptime",
        q3_why="the research note is client-only; the only available account is a rumour the vendor did not confirm")


SUMMARIES = {"proceed": "Proceed: both figures the decision rule needs meet their limits.",
             "decline": "Decline: a figure the decision rule needs misses its limit.",
             "defer": "Defer: a figure the decision rule needs cannot be settled from the available sources."}
WRITERS = {"supplier_approval": _supplier, "market_entry": _market, "software_adoption": _software}
TABLES = ("sources", "research_requests", *sorted(s.CASE_TABLES))


def _subject(fake: Faker, rng: random.Random, qtype: str, i: int) -> tuple[str, str]:
    if qtype == "supplier_approval":
        return fake.company().replace(",", ""), rng.choice(COMPONENTS)
    if qtype == "market_entry":
        return COUNTRIES[i % len(COUNTRIES)], rng.choice(PRODUCTS)
    vendor = fake.company().replace(",", "")
    return vendor, f"{vendor.split()[0]} Ledger"


def _record(out: Export, fake: Faker, rid: str, case: Case, made: dict, mess: str | None) -> None:
    """The request and the brief the desk wrote for it (with the desk's mistake, if it made one)."""
    out.tables["research_requests"].append(dict(
        request_id=rid, question_type=case.qtype, subject=case.subject, decision_question=made["decision_question"],
        questions="\n".join(f"Q{n}: {q}" for n, q in enumerate(made["questions"], 1)), requested_by=fake.name(),
        requester_email=fake.email(), requested_on=case.requested.isoformat()))
    claims = [("Q1", *made["q1"], case.figures["Q1"])]
    if case.decision != "defer":
        claims.append(("Q2", *made["q2"], case.figures["Q2"]))
    for n, (q, sid, quote, statement, figure) in enumerate(claims, 1):
        if mess == "paraphrase" and q == "Q1":
            quote = f"the defect rate was around {figure} ppm"
        out.tables["recorded_claims"].append(dict(request_id=rid, claim_no=n, question=q, statement=statement,
                                                  source_id=sid, quotation=quote, figure=figure))
    if made["old"]:
        about = made["about"].format(new=made["q1"][0], old=made["old"])
        out.tables["recorded_conflicts"].append(dict(request_id=rid, question="Q1", source_a=made["q1"][0],
                                                     source_b=made["old"], about=about))
    unknowns = [("Q2", made["q2_why"])] if case.decision == "defer" else []
    for q, why in [*unknowns, ("Q3", made["q3_why"])]:
        out.tables["recorded_unknowns"].append(dict(request_id=rid, question=q, why=why))
    decision = "proceed" if mess == "contradicts" else case.decision
    out.tables["recorded_briefs"].append(dict(
        request_id=rid, decision=decision, summary=SUMMARIES[decision],
        analyst=fake.name(), verified_by=None if mess == "unverified" else fake.name(),
        resolved_on=(case.requested + dt.timedelta(days=3)).isoformat()))


def export() -> dict[str, list[dict]]:
    """Every table of the research desk's export, as the suite's source CSV files hold them."""
    rng, fake = random.Random(SEED), Faker("en_US")
    fake.seed_instance(SEED)
    out = Export()
    cases = [(qtype, i, *plan, None) for qtype in TYPES for i, plan in enumerate(PLAN)]
    cases += [(qtype, len(PLAN) + i, "decline" if mess == "contradicts" else "proceed", False,
               "Q2" if mess == "contradicts" else None, mess) for i, (qtype, mess) in enumerate(MESS)]
    rng.shuffle(cases)
    for n, (qtype, i, decision, conflict, failing, mess) in enumerate(cases):
        subject, detail = _subject(fake, rng, qtype, i)
        figures = _figures(rng, qtype, failing)
        older = _older(rng, qtype, figures["Q1"], flip=i % 2 == 0) if conflict else None
        case = Case(qtype, subject, detail, dt.date(2026, 1, 12) + dt.timedelta(days=4 * n), figures, older, decision)
        _record(out, fake, f"RQ-{1001 + n}", case, WRITERS[qtype](out, rng, case), mess)
    return out.tables


def write_sources(out: Path) -> list[Path]:
    """The suite folder's source tables (source/*.csv); returns their paths."""
    written = []
    for name, rows in export().items():
        path = out / "source" / f"{name}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        table = s.metadata.tables[name] if name in s.metadata.tables else s.cases.tables[name]
        atomic_write(path, csv_text([c.name for c in table.columns], rows))
        written.append(path)
    return written


if __name__ == "__main__":
    for f in write_sources(Path(sys.argv[1])):
        print(f)
