"""The review ledger: sign-offs bound to the goal a reviewer saw, disagreements and their resolution, a goal that
changes needing review again, bad lines named, and reviewers signing at the same moment."""
from __future__ import annotations

import json
import multiprocessing
import re
import time

import pytest

from evalsuite.audit.chain import chained, last_line
from evalsuite.audit.reviews import Ledger, ReviewError, goal_sha256, review_counts, review_state
from evalsuite.core.records import Adjudication, Review
from evalsuite.tasks.traceability import cited_clauses


@pytest.fixture
def task(ap):
    """A task whose goal cites AP-3 (and AP-9), so a resolution may quote either."""
    return next(t for t in ap.tasks if "AP-3" in cited_clauses(t)).model_copy(deep=True)


@pytest.fixture
def ledger(tmp_path):
    return Ledger(tmp_path / "reviews.jsonl")


def state(task, ledger):
    return review_state(task, ledger.entries())


def cite(task, clause_id: str, why: str = "") -> str:
    """A resolution as the ledger takes one: the clause by its id and its text (after its heading), and why."""
    text = next(c.text for c in task.policy.clauses if c.id == clause_id)
    return f'{clause_id}: "{text.split(". ", 1)[1]}" {why}'.strip()


def test_two_distinct_reviewers_agreeing_adjudicate_a_goal(task, ledger):
    assert state(task, ledger).missing() == "0 of 2 reviewer sign-offs"
    ledger.sign(task, "ann", "agree")
    assert state(task, ledger).missing() == "1 of 2 reviewer sign-offs"
    ledger.sign(task, " ANN ", "agree", note="AP-3 fits")  # the same reviewer, however typed: still one signature
    assert not state(task, ledger).adjudicated
    done = ledger.sign(task, "bob", "agree")
    assert done.adjudicated and done.missing() is None and sorted(done.agreeing) == ["ann", "bob"]
    assert [json.loads(line)["reviewer"] for line in ledger.path.read_text().splitlines()] == ["ann", "ANN", "bob"]


def test_signing_again_replaces_the_earlier_decision_on_the_same_goal(task, ledger):
    ledger.sign(task, "ann", "agree")
    ledger.sign(task, "bob", "agree")
    s = ledger.sign(task, "bob", "disagree", note="AP-4 applies, not AP-3")
    assert not s.adjudicated and s.open_disagreement and s.missing() == "disagreement open"
    assert s.decisions["bob"].decision == "disagree" and len(s.decisions) == 2
    assert ledger.sign(task, "bob", "agree").adjudicated  # changed their mind: the disagreement is withdrawn


def test_a_resolution_settles_an_open_disagreement_and_a_later_one_reopens_it(task, ledger):
    with pytest.raises(ReviewError, match="no open disagreement on its current goal state"):
        ledger.resolve(task, "carol", cite(task, "AP-3"))
    ledger.sign(task, "ann", "agree")
    ledger.sign(task, "bob", "disagree")
    with pytest.raises(ReviewError, match=r"--resolution: cite the clause of ap_policy v\d+ that settles it"):
        ledger.resolve(task, "carol", "we talked it over")
    with pytest.raises(ReviewError, match="--resolution: cite the clause"):
        ledger.resolve(task, "carol", "AP-30 decides")  # no such clause, though it starts like one
    with pytest.raises(ReviewError, match="--by: a reviewer name is required"):
        ledger.resolve(task, "  ", cite(task, "AP-3"))
    s = ledger.resolve(task, "carol", cite(task, "AP-3", "so a 3% variance goes to the buyer; bob's reading overruled"))
    assert s.adjudicated and s.resolved and s.resolution.reviewer == "carol"
    with pytest.raises(ReviewError, match="no open disagreement"):  # nothing left to settle
        ledger.resolve(task, "carol", cite(task, "AP-3", "again"))
    s = ledger.sign(task, "dave", "disagree")
    assert s.open_disagreement and not s.adjudicated
    assert len(ledger.entries()) == 4  # the refused ones wrote nothing


def test_a_single_disagreement_resolved_passes(task, ledger):
    ledger.sign(task, "ann", "disagree")
    assert ledger.resolve(task, "carol", "Settled by " + cite(task, "AP-9")).adjudicated


@pytest.mark.parametrize("who, decision, match", [
    ("", "agree", "--reviewer: a reviewer name is required"),
    ("ann", "maybe", "--decision: expected agree or disagree, got 'maybe'"),
])
def test_bad_sign_offs_are_refused_in_one_line_and_write_nothing(task, ledger, who, decision, match):
    with pytest.raises(ReviewError, match=match):
        ledger.sign(task, who, decision)
    assert not ledger.path.exists()


def test_the_goal_hash_covers_what_a_reviewer_saw_and_nothing_a_build_stamps(task):
    base = goal_sha256(task)
    stamped = task.model_copy(deep=True)
    stamped.suite.version, stamped.suite.task_set_sha256 = "r123", "f" * 64
    stamped.environment.seed_sha256 = "0" * 64
    stamped.provenance.deidentification = None
    stamped.trial_protocol.trials = 9
    assert goal_sha256(stamped) == base
    for edit in (lambda t: t.goal_state.assertions[0].expect.update(status="no_such_status"),
                 lambda t: setattr(t.policy.clauses[0], "text", t.policy.clauses[0].text + " Revised."),
                 lambda t: setattr(t.policy, "version", "v8"),
                 lambda t: setattr(t.trigger, "text", "another case")):
        changed = task.model_copy(deep=True)
        edit(changed)
        assert goal_sha256(changed) != base


def test_sign_offs_on_an_earlier_goal_no_longer_count(task, ledger):
    ledger.sign(task, "ann", "agree")
    ledger.sign(task, "bob", "agree")
    rebuilt = task.model_copy(deep=True)
    rebuilt.goal_state.assertions[0].expect["hold_reason"] = "quantity_mismatch"
    s = state(rebuilt, ledger)
    assert not s.adjudicated and s.needs_review_again and s.decisions == {}
    assert s.missing() == "0 of 2 reviewer sign-offs (goal changed since 2 earlier sign-off(s))"
    assert "changed since 2 earlier sign-off(s): review it again" in s.reason()
    assert review_counts([s, state(task, ledger)]) == {
        "tasks": 2, "signed_by_0": 1, "signed_by_1": 0, "signed_by_2_or_more": 1, "disagreements_open": 0,
        "resolved": 0, "adjudicated": 1, "needs_review_again": 1}
    assert state(task, ledger).adjudicated  # the goal they signed still has them


def test_reviews_an_imported_record_carries_count_before_the_ledger(task, ledger):
    task.adjudication = Adjudication(reviews=[Review(reviewer="a", date="2026-10-01", decision="agree"),
                                              Review(reviewer="b", date="2026-10-02", decision="agree")])
    assert state(task, ledger).adjudicated
    ledger.sign(task, "b", "disagree")  # a later decision in the ledger replaces b's carried one
    assert state(task, ledger).open_disagreement


@pytest.mark.parametrize("line, match", [
    ('{"task_id": "t"', r"reviews\.jsonl:2: invalid JSON"),
    ({"task_id": "t", "goal_sha256": "xyz", "kind": "sign", "reviewer": "a", "decision": "agree",
      "at": "2026-01-01T00:00:00Z"}, r"reviews\.jsonl:2: goal_sha256: String should match pattern"),
    ({"task_id": "t", "goal_sha256": "a" * 64, "kind": "resolve", "reviewer": "a", "at": "2026-01-01T00:00:00Z"},
     r"reviews\.jsonl:2: <top level>: a resolution carries its text and no decision"),
    ('{"task_id": "t", "kind": "sign", "reviewer": "zed", "chain": "forged"}',
     r"reviews\.jsonl:2: this line does not follow from the one before it"),
])
def test_a_bad_ledger_line_is_named_and_skipped_and_the_ledger_still_serves(task, ledger, line, match):
    """On 7bb15c3 one forged ledger line made every review command fail until it was removed."""
    ledger.sign(task, "ann", "agree")
    with ledger.path.open("a") as fh:  # a dict: a line evalsuite's chain links, that is still no entry
        fh.write(line + "\n" if isinstance(line, str) else chained(last_line(ledger.path), [line]))
    assert [e.reviewer for e in ledger.entries()] == ["ann"]
    (skipped,) = ledger.skipped
    assert re.match(match, skipped.removeprefix(str(ledger.path.parent) + "/")) and "\n" not in skipped
    assert ledger.sign(task, "bob", "agree").adjudicated
    assert [e.reviewer for e in ledger.entries()] == ["ann", "bob"] and len(ledger.skipped) == 1


@pytest.mark.parametrize("cut", [1, 20], ids=["its newline", "its end"])
def test_a_line_cut_short_is_never_written_over(task, ledger, cut):
    ledger.sign(task, "ann", "agree")
    whole = ledger.path.read_bytes()
    ledger.path.write_bytes(whole[:-cut])  # a crash lost the end of the line
    ledger.sign(task, "bob", "agree")
    assert ledger.path.read_bytes().startswith(whole[:-cut] + b"\n")  # ended, kept as it was, then bob's line
    assert [e.reviewer for e in ledger.entries()] == (["ann", "bob"] if cut == 1 else ["bob"])
    assert [line.split(": ")[0] for line in ledger.skipped] == ([] if cut == 1 else [f"{ledger.path}:1"])


# different people (not "reviewer-1", "reviewer-2": a trailing counter names the same person again)
PEOPLE = ["ann", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan"]


def _slow_reader(path, barrier):
    """A ledger in a worker process that reads slowly, so writers that do not hold the lock would race."""
    read = Ledger.entries

    def entries(self):
        out = read(self)
        time.sleep(0.2)
        return out

    Ledger.entries = entries  # this worker process only
    barrier.wait()
    return Ledger(path)


def _sign(args):
    task, path, who, barrier = args
    _slow_reader(path, barrier).sign(task, who, "agree")


def _resolve(args):
    task, path, who, barrier = args
    ledger = _slow_reader(path, barrier)
    try:
        ledger.resolve(task, who, cite(task, "AP-3", f"({who})"))
        return True
    except ReviewError:
        return False


def test_reviewers_signing_at_the_same_moment_leave_a_valid_ledger(task, ledger):
    n = 8
    ctx = multiprocessing.get_context("spawn")  # fork deadlocks in a test process with threads
    with ctx.Manager() as manager, ctx.Pool(n) as pool:
        barrier = manager.Barrier(n)
        pool.map(_sign, [(task, ledger.path, who, barrier) for who in PEOPLE[:n]])
    entries = ledger.entries()
    assert sorted(e.reviewer for e in entries) == sorted(PEOPLE[:n])
    assert len(ledger.path.read_text().splitlines()) == n and state(task, ledger).adjudicated


def test_only_one_of_several_simultaneous_resolutions_is_recorded(task, ledger):
    ledger.sign(task, "ann", "disagree")
    n = 6
    ctx = multiprocessing.get_context("spawn")  # fork deadlocks in a test process with threads
    with ctx.Manager() as manager, ctx.Pool(n) as pool:
        barrier = manager.Barrier(n)
        won = pool.map(_resolve, [(task, ledger.path, who, barrier) for who in PEOPLE[1:n + 1]])
    assert sum(won) == 1  # the others found the disagreement settled under the lock
    assert [e.kind for e in ledger.entries()] == ["sign", "resolve"]


# One person, twelve spellings: the ways a second signature was forged from one name.
ANN = ["ann", "Ann", "ANN", " ann ", "ann\u200b", "\u0430nn", "\uff41\uff4e\uff4e", "ann.", "an\u00adn", "\u200fann",
       "ann (2)", "a\u0301nn"]


def test_one_person_is_one_signature_however_their_name_is_spelled(task, ledger):
    for spelling in ANN:
        s = ledger.sign(task, spelling, "agree")
    assert not s.adjudicated and list(s.decisions) == ["ann"] and s.missing() == "1 of 2 reviewer sign-offs"
    assert len(ledger.entries()) == len(ANN)  # every line kept, one signature counted
    assert ledger.sign(task, "bob", "agree").adjudicated


def test_a_reviewer_who_signed_cannot_resolve_the_disagreement(task, ledger):
    ledger.sign(task, "ann", "disagree")
    for me in ("ann", "Ann.", "\u0430nn"):
        with pytest.raises(ReviewError, match=r"^--by: .* signed this goal \(ann: disagree\); a reviewer who did not"):
            ledger.resolve(task, me, cite(task, "AP-3"))
    ledger.sign(task, "bob", "agree")
    with pytest.raises(ReviewError, match=r"signed this goal \(bob: agree\)"):  # nor the other side
        ledger.resolve(task, "bob", cite(task, "AP-3"))
    assert state(task, ledger).open_disagreement and len(ledger.entries()) == 2
    assert ledger.resolve(task, "carol", cite(task, "AP-3")).adjudicated


def test_a_resolution_quotes_the_clause_it_cites_by_id_and_text(task, ledger):
    ledger.sign(task, "ann", "disagree")
    for text in ("AP-3", "AP-3 decides", "AP-3: the buyer approves", "AP-3: " + cite(task, "AP-4").split('"')[1]):
        with pytest.raises(ReviewError) as refused:
            ledger.resolve(task, "carol", text)
        assert str(refused.value).startswith('--resolution: quote the text of AP-3 that settles it (a sentence of it')
        assert "\n" not in str(refused.value)
    heading = next(c.text for c in task.policy.clauses if c.id == "AP-3").split(". ")[0]
    with pytest.raises(ReviewError, match="quote the text of AP-3"):  # the clause's heading is not its text
        ledger.resolve(task, "carol", f"AP-3: {heading}.")
    assert not ledger.path.read_text().count("resolve")
    quoted = cite(task, "AP-3").upper().replace(" ", "  ")  # case and spacing aside, the text as written
    assert ledger.resolve(task, "carol", quoted).adjudicated


def _lines(ledger):
    return ledger.path.read_text().splitlines(keepends=True)


def test_a_line_added_or_edited_by_hand_is_named_and_does_not_count(task, ledger):
    ledger.sign(task, "ann", "agree")
    ledger.sign(task, "bob", "disagree")
    good = _lines(ledger)
    forged = json.loads(good[0]) | {"reviewer": "zed", "at": "2026-12-01T00:00:00Z"}
    edits = {"appended": good + [json.dumps(forged) + "\n"],  # a copied line: its link is stale
             "appended without a link": good + [json.dumps({k: v for k, v in forged.items() if k != "chain"}) + "\n"],
             "edited": [good[0], good[1].replace('"disagree"', '"agree"')],
             "removed": [good[1]],
             "reordered": [good[1], good[0]]}
    where = {"appended": 3, "appended without a link": 3, "edited": 2, "removed": 1, "reordered": 1}
    counted = {"appended": ["ann", "bob"], "appended without a link": ["ann", "bob"], "edited": ["ann"],
               "removed": [], "reordered": ["ann"]}
    for what, lines in edits.items():
        ledger.path.write_text("".join(lines))
        assert [e.reviewer for e in ledger.entries()] == counted[what], what
        assert ledger.skipped == [f"{ledger.path}:{where[what]}: this line does not follow from the one before it "
                                  "(the file was edited, or a line added or removed, by hand); restore it as "
                                  "evalsuite wrote it"], what
        ledger.sign(task, "carol", "agree")  # the ledger still takes sign-offs, which count
        assert [e.reviewer for e in ledger.entries()] == [*counted[what], "carol"], what
        assert len(ledger.skipped) == 1


def test_a_ledger_from_before_the_chain_is_refused_until_sealed_once(task, ledger):
    ledger.sign(task, "ann", "agree")
    ledger.sign(task, "bob", "agree")
    old = "".join(json.dumps({k: v for k, v in json.loads(line).items() if k != "chain"}) + "\n"
                  for line in _lines(ledger))
    ledger.path.write_text(old)
    with pytest.raises(ReviewError, match=r"reviews\.jsonl: written before ledger lines were chained; check its lines, "
                                          r"then run `evalsuite review seal SPEC` once"):
        ledger.sign(task, "carol", "agree")
    assert ledger.path.read_text() == old
    assert ledger.seal() == 2
    with pytest.raises(ReviewError, match="chained already; nothing to seal"):
        ledger.seal()
    assert state(task, ledger).adjudicated and [e.reviewer for e in ledger.entries()] == ["ann", "bob"]
    ledger.sign(task, "carol", "agree")
    assert len(ledger.entries()) == 3


def test_a_self_resolution_an_old_ledger_holds_does_not_count_once_sealed(task, ledger):
    goal = goal_sha256(task)
    old = [{"task_id": task.task_id, "goal_sha256": goal, "kind": "sign", "reviewer": "ann", "decision": "disagree",
            "at": "2026-11-01T00:00:00Z"},
           {"task_id": task.task_id, "goal_sha256": goal, "kind": "resolve", "reviewer": "Ann.", "resolution": "AP-3",
            "at": "2026-11-02T00:00:00Z"}]
    ledger.path.write_text("".join(json.dumps(o) + "\n" for o in old))
    assert ledger.seal() == 2
    s = state(task, ledger)
    assert s.open_disagreement and not s.adjudicated and s.resolution is None


def test_a_resolution_cites_a_clause_the_disputed_goal_cites(task, ledger):
    """On 7bb15c3 a disagreement on an AP-3 goal resolved by quoting unrelated AP-8 counted as adjudicated."""
    ledger.sign(task, "ann", "disagree")
    with pytest.raises(ReviewError, match=r"^--resolution: cite the clause .* the disputed goal cites \(AP-3, AP-9\)"):
        ledger.resolve(task, "carol", cite(task, "AP-8"))
    with ledger.path.open("a") as fh:  # written by other means, chained as evalsuite would
        fh.write(chained(last_line(ledger.path), [{
            "task_id": task.task_id, "goal_sha256": goal_sha256(task), "kind": "resolve", "reviewer": "carol",
            "resolution": cite(task, "AP-8"), "at": "2026-12-01T00:00:00Z"}]))
    s = state(task, ledger)
    assert s.open_disagreement and not s.adjudicated and s.resolution is None and not ledger.skipped
    assert ledger.resolve(task, "carol", cite(task, "AP-3")).adjudicated
