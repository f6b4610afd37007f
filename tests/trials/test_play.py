"""`evalsuite play`: people attempt tasks on a web page; each attempt is a trial graded and stored like an agent's."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest
from browser_support import browser_page, fill_tool_form
from harness_support import lock_held, make_release
from markupsafe import escape
from starlette.testclient import TestClient
from typer.testing import CliRunner

from evalsuite.cli import app
from evalsuite.core.records import ToolCall
from evalsuite.domains.registry import domain_of as get_domain
from evalsuite.releases.release import Release
from evalsuite.releases.runs import play_desk
from evalsuite.scoring.runlog import SUMMARY, TRACES
from evalsuite.tasks.heldout import access_log_path
from evalsuite.trials.agents import human
from evalsuite.trials.play import form_arguments, form_fields, play_app, serving
from evalsuite.trials.tracelog import read_traces

SECRET = "SENTINEL-never-on-the-page"
ORIGIN = "http://testserver"  # the test client's own origin, as a browser sends it with every form


@pytest.fixture(scope="module")
def release(ap, tmp_path_factory):
    return Release(make_release(ap, tmp_path_factory.mktemp("releases")))


@pytest.fixture(scope="module")
def marked(ap, tmp_path_factory):
    """A release whose every task hides a marker in its goal state, reference solution and reference answer,
    and whose first offered task has markup in its trigger."""
    tasks = []
    for t in ap.tasks:
        goal = t.goal_state.model_copy(update={"annotations": [*t.goal_state.annotations, f"{SECRET}-goal"]})
        solution = [*t.solution_calls(), ToolCall(tool="get_policy", action_id=f"{SECRET}-solution")]
        trigger = t.trigger.model_copy(update={"text": t.trigger.text + " <script>alert(1)</script>"})
        tasks.append(t.model_copy(update={"goal_state": goal, "reference_solution": solution, "trigger": trigger,
                                          "reference_answer": f"{SECRET}-answer"}))
    return Release(make_release(SimpleNamespace(tasks=tasks, world=ap.world), tmp_path_factory.mktemp("marked")))


def client_for(release: Release, out: Path, name: str | None = "Ada Lovelace", sample: int | None = None):
    desk = play_desk(release, out, sample=sample)
    client = TestClient(play_app(desk, out), headers={"Origin": ORIGIN})
    if name:
        assert client.post("/person", data={"name": name}).status_code == 200
    return desk, client


def solve(client: TestClient, task, answer: str | None = None, calls=None) -> str:
    """Open a task, make the calls (the reference solution's by default) through its forms and submit."""
    client.post(f"/open/{task.task_id}")
    for call in task.solution_calls() if calls is None else calls:
        page = client.post(f"/attempt/call/{call.tool}", data={k: str(v) for k, v in call.arguments.items()})
        assert page.status_code == 200
    return client.post("/attempt/submit", data={"message": task.reference_answer if answer is None else answer}).text


def records(out: Path) -> dict:
    return {(r.agent, r.task_id): r for r in read_traces(out / TRACES).records}


def test_a_reference_attempt_passes_and_a_wrong_one_fails_graded_like_an_agent(release, tmp_path):
    desk, ada = client_for(release, tmp_path)
    task = desk.tasks[0]
    solve(ada, task)
    _, grace = client_for(release, tmp_path, "Grace Hopper")
    solve(grace, task, calls=[ToolCall(tool="release_invoice", arguments={"invoice_id": task.trigger.text.split()[0]})])
    got = records(tmp_path)
    ok, wrong = got[("human:Ada Lovelace", task.task_id)], got[("human:Grace Hopper", task.task_id)]
    assert (ok.outcome, ok.passed, wrong.outcome, wrong.passed) == ("pass", True, "fail", False)
    assert [(e.tool, e.arguments) for e in ok.trace] == [(c.tool, c.arguments) for c in task.solution_calls()]
    assert {e.actor for e in ok.trace + wrong.trace} == {"human"}
    assert ok.agent_config.kind == "human" and ok.seconds > 0 and ok.trial == 0
    assert ok.reset_sha256 == release.manifest.seed_sha256 and ok.suite_version == release.manifest.version
    assert len(set(ok.identity_sha256 for ok in got.values())) == 2  # one config, one identity, per person
    assert (tmp_path / SUMMARY).is_file()


def test_every_offered_ap_task_passes_when_its_forms_are_filled_as_its_reference_solution(release, tmp_path):
    desk, client = client_for(release, tmp_path)
    for task in desk.tasks:
        solve(client, task)
    got = records(tmp_path)
    assert len(got) == len(desk.tasks) == 36 and all(r.passed for r in got.values())


def test_the_task_list_says_what_each_task_is_without_showing_its_trigger(release, tmp_path):
    """A person chooses from the list: each row names the kind of task, its domain, split, role, how it starts and
    its step budget; the trigger itself is shown only once the task is opened (and logged)."""
    desk = play_desk(release, tmp_path)
    task = browser_task(desk)
    with serving(play_app(desk, tmp_path)) as url, browser_page(1280, 900) as page:
        page.goto(url)
        page.fill("#name", "Ada Lovelace")
        page.get_by_role("button", name="Start").click()
        header = page.locator("#tasks tr").first.inner_text().split("\t")
        row = page.locator(f"#task-{task.task_id}").inner_text().split("\t")
        listed = page.inner_text("body")
    assert [h.strip() for h in header[:7]] == ["task", "what it is", "domain", "split", "you act as", "starts as",
                                               "steps"]
    assert [c.strip() for c in row[:7]] == [task.task_id, "quantity mismatch", "ap exceptions", task.split,
                                            task.role.name.replace("_", " "), f"a queue item ({task.trigger.item_id})",
                                            str(task.trial_protocol.max_steps)]
    assert task.trigger.text not in listed and "opened" not in json.dumps(access_log())


def test_a_person_gets_one_attempt_per_task_and_never_sees_the_grade(release, tmp_path):
    desk, ada = client_for(release, tmp_path)
    task = desk.tasks[0]
    page = solve(ada, task, answer="")
    assert "is recorded" in page and "passed" not in page.lower() and "fail" not in page.lower()
    assert f'id="open-{task.task_id}"' not in page and f'id="open-{desk.tasks[1].task_id}"' in page
    ada.post(f"/open/{task.task_id}")
    assert ada.get("/attempt", follow_redirects=False).status_code == 303  # no second attempt opened
    assert list(records(tmp_path)) == [("human:Ada Lovelace", task.task_id)]


def test_pages_never_show_the_goal_state_reference_solution_or_held_out_tasks(marked, tmp_path):
    desk, client = client_for(marked, tmp_path)
    held_out = [t.task_id for t in marked.tasks() if t.split == "held_out"]
    assert held_out and not set(held_out) & {t.task_id for t in desk.tasks}
    pages = [client.get("/").text]
    for task in desk.tasks:
        client.post(f"/open/{task.task_id}")
        pages.append(client.get("/attempt").text)
        pages.append(client.post("/attempt/submit", data={"message": ""}).text)
    opened = pages[1]
    assert desk.tasks[0].policy.clauses[0].text in opened and "get_invoice" in opened
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in opened and "<script>" not in opened
    for page in pages:
        assert SECRET not in page and not any(t in page for t in held_out)
        assert "goal_state" not in page and "reference" not in page
    refused = client.post(f"/open/{held_out[0]}")
    assert refused.status_code == 404 and held_out[0] in refused.text  # the id it was given, nothing more
    assert not any(held_out[0] in json.dumps(e.get("opened")) for e in access_log())


def access_log() -> list[dict]:
    return [json.loads(line) for line in access_log_path().read_text().splitlines()]


def test_opening_a_task_writes_the_access_log_before_anything_else(release, tmp_path):
    desk, client = client_for(release, tmp_path, "Grace Hopper")
    client.post(f"/open/{desk.tasks[2].task_id}")
    entry = access_log()[-1]
    assert {k: entry[k] for k in ("purpose", "what", "person", "opened")} == {
        "purpose": "human_baseline", "what": "ap_test t1", "person": "Grace Hopper", "opened": [desk.tasks[2].task_id]}
    assert entry["who"] and entry["when"]
    assert records(tmp_path) == {}  # nothing recorded yet: the attempt is open


def test_tool_errors_and_denials_are_shown_as_results_and_traced(release, tmp_path):
    desk, client = client_for(release, tmp_path)
    task = desk.tasks[0]
    client.post(f"/open/{task.task_id}")
    page = client.post("/attempt/call/get_invoice", data={"invoice_id": "INV-0"}).text
    page = client.post("/attempt/call/post_payment", data={"invoice_id": "INV-0", "amount": "12.5"}).text
    page = client.post("/attempt/call/hold_invoice", data={"invoice_id": "INV-0", "reason": ""}).text
    assert "Error: Tool &#39;post_payment&#39; is not permitted for role ap_clerk_agent." in page
    assert "Error: invalid arguments: reason: Field required" in page
    client.post("/attempt/submit", data={"message": "gave up"})
    trace = records(tmp_path)[("human:Ada Lovelace", task.task_id)].trace
    assert [(e.tool, e.outcome, e.arguments) for e in trace] == [
        ("get_invoice", "error", {"invoice_id": "INV-0"}),
        ("post_payment", "denied", {"invoice_id": "INV-0", "amount": "12.5"}),
        ("hold_invoice", "error", {"invoice_id": "INV-0"})]


def test_a_call_past_the_step_budget_ends_the_attempt(release, tmp_path):
    desk, client = client_for(release, tmp_path)
    task = desk.tasks[0]
    client.post(f"/open/{task.task_id}")
    for _ in range(task.trial_protocol.max_steps + 1):
        page = client.post("/attempt/call/get_policy").text
    assert "step budget was used up" in page
    record = records(tmp_path)[("human:Ada Lovelace", task.task_id)]
    assert (record.outcome, record.passed) == ("budget_exhausted", False)
    assert len(record.trace) == task.trial_protocol.max_steps


def test_an_attempt_ending_while_another_process_writes_the_folder_is_kept_until_it_is_recorded(release, tmp_path,
                                                                                              monkeypatch):
    """The attempt's line is appended under the folder's lock, waiting a bounded while for it; past that the
    person is told it is not recorded yet and it is kept, then recorded once when the person tries again."""
    monkeypatch.setattr(human, "SAVE_SECONDS", 0.5)
    desk, ada = client_for(release, tmp_path)
    task = desk.tasks[0]
    with lock_held(tmp_path):
        started = time.monotonic()
        page = solve(ada, task)
        assert time.monotonic() - started >= human.SAVE_SECONDS
        assert "is not recorded yet" in page and f"writing the run folder {tmp_path}" in page
        assert ada.get("/attempt").status_code == 503 and ada.post("/attempt/save").status_code == 503
        ada.post("/attempt/submit", data={"message": "sent again"})  # a form sent again changes nothing
        assert records(tmp_path) == {}
    page = ada.post("/attempt/save").text
    assert "is recorded" in page and f'id="open-{task.task_id}"' not in page
    record = records(tmp_path)[("human:Ada Lovelace", task.task_id)]
    assert record.passed and record.final_message == task.reference_answer
    assert len(read_traces(tmp_path / TRACES).records) == 1 and (tmp_path / SUMMARY).is_file()


def test_an_attempt_waits_for_a_short_writer_of_its_folder(release, tmp_path):
    desk, ada = client_for(release, tmp_path)
    task = desk.tasks[0]
    with lock_held(tmp_path, release_after=0.5) as held:
        page = solve(ada, task)
    assert "is recorded" in page
    assert records(tmp_path)[("human:Ada Lovelace", task.task_id)].passed
    assert held.traces_bytes == 0  # appended only once the other writer was done


def test_a_sample_offers_n_tasks_and_a_name_is_required(release, tmp_path):
    desk, client = client_for(release, tmp_path, name=None, sample=5)
    assert len(desk.tasks) == 5
    assert "Your name" in client.get("/").text
    assert "Give your name" in client.post("/person", data={"name": "  "}).text
    assert client.post(f"/open/{desk.tasks[0].task_id}", follow_redirects=False).status_code == 303
    assert records(tmp_path) == {} and "opened" not in json.dumps(access_log())


def test_forms_read_each_argument_as_its_schema_types_it():
    hold = form_fields(get_domain("ap_exceptions").tools["hold_invoice"].schema()["parameters"])
    assert [(f.name, f.kind, f.required) for f in hold] == [("invoice_id", "text", True), ("reason", "choice", True)]
    assert "missing_receipt" in hold[1].choices
    untyped = form_fields(get_domain("tau2_retail").tools["return_delivered_order_items"].schema()["parameters"])
    assert {f.kind for f in untyped} == {"any"}
    got = form_arguments(untyped, {"order_id": "#W1", "item_ids": '["1", "2"]', "payment_method_id": "12345"})
    assert got == {"order_id": "#W1", "item_ids": ["1", "2"], "payment_method_id": "12345"}
    schema = {"properties": {"n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
                             "tags": {"type": "array", "items": {"type": "string"}},
                             "note": {"anyOf": [{"type": "string"}, {"type": "null"}]}}, "required": ["n"]}
    fields = form_fields(schema)
    assert [f.kind for f in fields] == ["integer", "number", "boolean", "json", "text"]
    assert form_arguments(fields, {"n": "3", "x": "2.5", "b": "false", "tags": '["a"]', "note": ""}) == \
        {"n": 3, "x": 2.5, "b": False, "tags": ["a"]}
    # what does not convert is sent as typed, so the tool answers as it would answer an agent
    assert form_arguments(fields, {"n": "three", "x": "lots", "tags": "[oops"}) == {"n": "three", "x": "lots",
                                                                                    "tags": "[oops"}


def test_play_refuses_what_is_not_a_release_in_one_line(tmp_path):
    result = CliRunner().invoke(app, ["play", str(tmp_path), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"error: {tmp_path}: not a release (no manifest.json)"]


def test_play_serves_on_loopback_only(release, tmp_path):
    proc = subprocess.Popen([str(Path(sys.executable).parent / "evalsuite"), "play", str(release.path), "--out",
                             str(tmp_path / "run"), "--port", "0"], stdout=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, "COLUMNS": "200"})
    try:
        line = proc.stdout.readline()
        url = line.split()[2]
        assert url.startswith("http://127.0.0.1:"), line
        with urllib.request.urlopen(url, timeout=30) as resp:
            assert "Your name" in resp.read().decode()
        assert "(36 task(s)" in line
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def attempt_in_browser(url: str, name: str, task, calls, answer: str) -> str:
    with browser_page(1280, 900) as page:
        page.goto(url)
        page.fill("#name", name)
        page.get_by_role("button", name="Start").click()
        page.click(f"#open-{task.task_id}")
        assert task.trigger.text in page.inner_text("#trigger")
        for call in calls:
            fill_tool_form(page, call.tool, call.arguments)
        assert page.locator("#calls .call").count() == len(calls)
        page.fill("#message", answer)
        page.get_by_role("button", name="Submit and end the attempt").click()
        return page.inner_text("body")


def browser_task(desk):
    """An AP task whose reference solution holds an invoice (a choice) and messages the vendor (text)."""
    return next(t for t in desk.tasks if t.category == "quantity_mismatch")


def test_in_the_browser_the_reference_solution_passes(release, tmp_path):
    desk = play_desk(release, tmp_path)
    task = browser_task(desk)
    with serving(play_app(desk, tmp_path)) as url:
        text = attempt_in_browser(url, "Ada Lovelace", task, task.solution_calls(), task.reference_answer)
    assert f"Your attempt at {task.task_id} is recorded" in text
    record = records(tmp_path)[("human:Ada Lovelace", task.task_id)]
    assert (record.outcome, record.passed) == ("pass", True)
    assert [(e.tool, e.arguments, e.actor) for e in record.trace] == \
        [(c.tool, c.arguments, "human") for c in task.solution_calls()]


def test_in_the_browser_a_wrong_action_fails(release, tmp_path):
    desk = play_desk(release, tmp_path)
    task = browser_task(desk)
    wrong = [ToolCall(tool=c.tool, arguments={**c.arguments, "reason": "price_variance"})
             if c.tool == "hold_invoice" else c for c in task.solution_calls()]
    with serving(play_app(desk, tmp_path)) as url:
        attempt_in_browser(url, "Grace Hopper", task, wrong, task.reference_answer)
    record = records(tmp_path)[("human:Grace Hopper", task.task_id)]
    assert (record.outcome, record.passed) == ("fail", False)
    assert ("hold_invoice", "ok") in [(e.tool, e.outcome) for e in record.trace]


@pytest.fixture(scope="module")
def conversations(tmp_path_factory):
    """A release of generated mobile-service tasks: conversations in dual control, the phone the customer's."""
    from evalsuite.domains.mobile_service.generate import sample_world

    tmp = tmp_path_factory.mktemp("ms")
    world, gen = sample_world(tmp / "world.sqlite", n=9, max_subtasks=1)
    return Release(make_release(SimpleNamespace(tasks=gen.tasks, world=world), tmp / "releases"))


def talk_through(client: TestClient, task) -> str:
    """The reference plan as a person plays it: the phone's steps asked of the customer, the rest called."""
    client.post(f"/open/{task.task_id}")
    for call in task.solution_calls():
        if call.actor == "user":
            asked = f"Please {call.tool.replace('_', ' ')} on your phone."
            page = client.post("/attempt/message", data={"text": asked})
        else:
            page = client.post(f"/attempt/call/{call.tool}", data={k: str(v) for k, v in call.arguments.items()})
        assert page.status_code == 200
    return page.text


def test_a_person_talks_to_the_customer_of_a_conversational_task_and_is_graded_on_both_worlds(conversations,
                                                                                              tmp_path):
    desk, client = client_for(conversations, tmp_path / "run")
    task = next(t for t in desk.tasks if any(c.actor == "user" for c in t.solution_calls()))
    shown = talk_through(client, task)
    assert "Conversation with the customer" in shown and str(escape(task.user_scenario.script.opening)) in shown
    assert shown.count("Customer:") == 1 + sum(c.actor == "user" for c in task.solution_calls())
    client.post("/attempt/submit", data={"message": task.reference_answer})
    record = records(tmp_path / "run")[("human:Ada Lovelace", task.task_id)]
    assert record.outcome == "pass", record.verdict.failures()
    said = [(e.actor, e.arguments["text"]) for e in record.trace if e.kind == "message"]
    assert [a for a, _ in said if a != "user"] == ["agent"] + ["human"] * sum(c.actor == "user"
                                                                          for c in task.solution_calls())
    assert record.user_trace and all(e.actor == "user" for e in record.user_trace)  # the customer took the steps

    other = next(t for t in desk.tasks if t is not task and any(c.actor == "user" for c in t.solution_calls()))
    phone_tool = next(c.tool for c in other.solution_calls() if c.actor == "user")
    client.post(f"/open/{other.task_id}")  # the phone's tools are not the person's to call: no form, no call
    page = client.post(f"/attempt/call/{phone_tool}", data={}).text
    assert f'id="tool-{phone_tool}"' not in page and "No calls yet." in page


def test_in_the_browser_a_person_asks_the_customer_for_the_phone_steps(conversations, tmp_path):
    desk = play_desk(conversations, tmp_path / "run")
    task = next(t for t in desk.tasks if any(c.actor == "user" for c in t.solution_calls()))
    with serving(play_app(desk, tmp_path / "run")) as url, browser_page(1280, 900) as page:
        page.goto(url)
        page.fill("#name", "Grace Hopper")
        page.get_by_role("button", name="Start").click()
        page.click(f"#open-{task.task_id}")
        for call in task.solution_calls():
            if call.actor == "user":
                page.fill("#say-text", f"Please {call.tool.replace('_', ' ')} on your phone.")
                page.get_by_role("button", name="Send to the customer").click()
            else:
                fill_tool_form(page, call.tool, call.arguments)
        transcript = page.inner_text("#conversation")
        page.fill("#message", task.reference_answer)
        page.get_by_role("button", name="Submit and end the attempt").click()
    assert transcript.count("Customer:") == 1 + sum(c.actor == "user" for c in task.solution_calls())
    assert records(tmp_path / "run")[("human:Grace Hopper", task.task_id)].outcome == "pass"


def test_a_person_reviews_a_contract_and_submits_the_memo_through_its_forms(tmp_path):
    """Document review at the play page: every contract-review task, played with its reference calls typed
    into the forms as a person would (lists and objects as JSON), passes; the memo form reads JSON."""
    from evalsuite.domains.contract_review import DOMAIN
    from evalsuite.domains.contract_review.store import source_tables
    from evalsuite.domains.contract_review.tasks import build_tasks
    from evalsuite.worlds.world import World

    world = World.build(DOMAIN, source_tables(), tmp_path / "world.sqlite")
    release = Release(make_release(SimpleNamespace(tasks=build_tasks(), world=world), tmp_path / "releases"))
    desk, client = client_for(release, tmp_path / "run")
    memo_form = form_fields(DOMAIN.tools["submit_memo"].schema()["parameters"])
    assert {f.name: f.kind for f in memo_form}["issues"] == "json"
    for task in desk.tasks:
        typed = [call.model_copy(update={"arguments": {k: json.dumps(v) if isinstance(v, (list, dict)) else v
                                                       for k, v in call.arguments.items()}})
                 for call in task.solution_calls()]
        solve(client, task, calls=typed)
    done = records(tmp_path / "run")
    assert len(done) == len(desk.tasks) == 5
    assert {t: r.outcome for (_, t), r in done.items()} == {t.task_id: "pass" for t in desk.tasks}, \
        {t: r.verdict.failures() for (_, t), r in done.items() if r.outcome != "pass"}
