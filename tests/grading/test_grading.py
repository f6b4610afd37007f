"""The grader on the AP world: what a reviewer checks before trusting a verdict."""
from sqlalchemy import text

from evalsuite.core.records import Role
from evalsuite.grading.grader import grade, grade_trial, output_present
from evalsuite.trials.agents.base import AgentEnv
from evalsuite.trials.agents.factory import make_agent
from evalsuite.trials.trial import policy_text, run_trial


def _grade(ap, task, trial, message=""):
    """The trial's row-level verdict, checked against the whole-table diff it must equal."""
    verdict = grade_trial(trial, message, task.goal_state, task.role, task.forbidden)
    whole = grade(ap.world.schemas, ap.world.initial_rows, trial.rows(), trial.trace, message,
                  task.goal_state, task.role, task.forbidden)
    assert verdict == whole
    return verdict


def test_the_ap_example_has_at_least_40_tasks_covering_every_exception(ap):
    assert len(ap.tasks) >= 40
    assert {t.category for t in ap.tasks} >= {"price_variance", "quantity_mismatch", "missing_receipt",
                                              "duplicate_invoice", "release"}
    assert any(t.policy.version == "v6" for t in ap.tasks) and any(t.policy.version == "v7" for t in ap.tasks)
    assert ap.skipped.get("outcome not verified", 0) > 0


def test_reference_agent_passes_every_ap_task(ap):
    results = [run_trial(ap.world, t, make_agent("reference")) for t in ap.tasks]
    assert [r.task_id for r in results if not r.passed] == []


def test_noop_fails_every_task_that_requires_a_write(ap):
    write_tasks = [t for t in ap.tasks if t.goal_state.requires_write]
    assert write_tasks
    results = [run_trial(ap.world, t, make_agent("noop")) for t in write_tasks]
    assert not any(r.passed for r in results)


def test_adversary_fails_every_task_on_forbidden_calls(ap):
    for t in ap.tasks:
        r = run_trial(ap.world, t, make_agent("adversary"))
        assert not r.passed
        failed = {c.name for c in r.verdict.failures()}
        assert "no forbidden call" in failed


def test_reference_plus_one_unrelated_update_fails_on_collateral_change(ap):
    task = ap.tasks[0]
    trial = ap.world.reset(task.role, policy_text=policy_text(task))
    for call in task.solution_calls():
        trial.call(call.tool, call.arguments)
    other = next(t for t in ap.tasks[1:] if t.trigger.item_id != task.trigger.item_id)
    other_invoice = other.goal_state.assertions[0].key["invoice_id"]
    trial.call("hold_invoice", {"invoice_id": other_invoice, "reason": "price_variance"})
    verdict = _grade(ap, task, trial, task.reference_answer)
    assert not verdict.passed
    assert [c.name for c in verdict.failures()] == ["no collateral change"]
    assert other_invoice in verdict.failures()[0].detail


def test_a_forbidden_call_later_undone_still_fails(ap):
    task = ap.tasks[0]
    misconfigured = Role(name="everything", write_tools=list(ap.world.domain.tools))
    trial = ap.world.reset(misconfigured)
    for call in task.solution_calls():
        trial.call(call.tool, call.arguments)
    cols = ap.world.schemas["vendor_master"].columns
    first = dict(zip(cols, ap.world.initial_rows["vendor_master"][0]))
    vendor_id, bank, updated = first["vendor_id"], first["bank_account"], first["updated_at"]
    fraud = trial.call("edit_vendor_bank_details", {"vendor_id": vendor_id, "bank_account": "DE00 FRAUD"})
    assert fraud.outcome == "ok"
    trial.call("edit_vendor_bank_details", {"vendor_id": vendor_id, "bank_account": bank})
    with ap.world.engine.begin() as conn:  # undo the timestamp too: the end state equals the seed
        conn.execute(text("UPDATE vendor_master SET updated_at = :u WHERE vendor_id = :v"),
                     {"u": updated, "v": vendor_id})
    assert (vendor_id,) in trial.changed_keys()["vendor_master"]  # written, and logged
    assert trial.rows()["vendor_master"] == ap.world.initial_rows["vendor_master"]  # yet as seeded
    verdict = _grade(ap, task, trial, task.reference_answer)
    assert [c.name for c in verdict.failures()] == ["no forbidden call"]


def test_budget_exhaustion_is_its_own_unresolved_outcome(ap):
    one_step = ap.tasks[0].trial_protocol.model_copy(update={"max_steps": 1})
    task = ap.tasks[0].model_copy(update={"trial_protocol": one_step})
    r = run_trial(ap.world, task, make_agent("reference"))
    assert r.outcome == "budget_exhausted" and not r.passed and len(r.trace) == 1


def test_a_missing_required_output_fails_with_its_name(ap):
    task = next(t for t in ap.tasks if any(o.name.startswith("variance") for o in t.goal_state.required_outputs))
    trial = ap.world.reset(task.role)
    for call in task.solution_calls():
        trial.call(call.tool, call.arguments)
    verdict = _grade(ap, task, trial, "done")
    assert {c.name for c in verdict.failures()} >= {"output variance amount per unit"}


def test_required_outputs_compare_numbers_and_text_loosely():
    assert output_present("12.50", "The variance is 12.5 USD per unit")
    assert output_present("1250.00", "variance of 1,250 EUR")
    assert output_present("price_variance", "Held for Price Variance.")
    assert not output_present("12.50", "variance 125.0")
    assert output_present("Straße", "Delivered to STRASSE 5") and output_present("5 Straße", "at STRASSE 5")


def test_agent_env_counts_steps(ap):
    env = AgentEnv(ap.world.reset(None), max_steps=2)
    env.call("get_invoice", {"invoice_id": "INV-55100"})
    assert env.steps == 1 and env.tools and "hold_invoice" in {t["name"] for t in env.tools}
