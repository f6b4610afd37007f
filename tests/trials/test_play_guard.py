"""`evalsuite play` under load and from elsewhere: concurrent commands on one attempt take turns and never answer
500, a forged Host or a cross-origin form is refused, open attempts are capped, and a person is one person however
their name is spelled."""
from __future__ import annotations

import http.server
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
from browser_support import browser_page
from harness_support import make_release
from starlette.testclient import TestClient

from evalsuite.releases.release import Release
from evalsuite.releases.runs import play_desk
from evalsuite.scoring.runlog import TRACES
from evalsuite.trials.agents.human import PlayLimits
from evalsuite.trials.play import play_app, serving
from evalsuite.trials.tracelog import read_traces

ORIGIN = "http://testserver"


@pytest.fixture(scope="module")
def release(ap, tmp_path_factory):
    return Release(make_release(ap, tmp_path_factory.mktemp("releases")))


def records(out: Path) -> list:
    return read_traces(out / TRACES).records


def signed_in(url: str, name: str) -> httpx.Client:
    """A client of the page at url, signed in, sending the page's own Origin as a browser does."""
    client = httpx.Client(base_url=url, headers={"Origin": url.rstrip("/")}, follow_redirects=True, timeout=120)
    assert client.post("/person", data={"name": name}).status_code == 200
    return client


def all_at_once(n: int, post) -> list[httpx.Response]:
    """n requests released together; post(i) makes the i-th."""
    barrier, answers = threading.Barrier(n), [None] * n

    def one(i: int) -> None:
        barrier.wait()
        answers[i] = post(i)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    return answers


@pytest.mark.parametrize("limits", [PlayLimits(queued_per_attempt=32), PlayLimits()], ids=["all wait", "default"])
def test_thirty_concurrent_posts_on_one_attempt_take_turns_and_never_answer_500(release, tmp_path, limits):
    desk = play_desk(release, tmp_path)
    task = desk.tasks[0]
    submits = {4, 11, 19, 26}  # the rest call get_invoice, each for its own invoice id
    with serving(play_app(desk, tmp_path, limits)) as url:
        ada = signed_in(url, "Ada Lovelace")
        assert ada.post(f"/open/{task.task_id}").status_code == 200
        answers = all_at_once(30, lambda i: ada.post("/attempt/submit", data={"message": f"done-{i}"}) if i in submits
                              else ada.post("/attempt/call/get_invoice", data={"invoice_id": f"INV-{i}"}))
    codes = Counter(a.status_code for a in answers)
    assert set(codes) <= {200, 409, 429}, codes
    for a in answers:
        if a.status_code != 200:
            assert "was not done" in a.text and "Traceback" not in a.text
    (record,) = records(tmp_path)
    done = {i for i, a in enumerate(answers) if a.status_code == 200}
    called = [e.arguments["invoice_id"] for e in record.trace]
    assert sorted(called) == sorted(f"INV-{i}" for i in done - submits)  # each call done once, as answered
    (ended,) = done & submits  # exactly one submission ended the attempt; the others were told it had ended
    assert record.final_message == f"done-{ended}"
    seqs = [e.seq for e in record.trace]
    assert seqs == sorted(set(seqs)) and len(seqs) == len(called)  # in order, none twice
    if limits.queued_per_attempt == 32:
        assert 429 not in codes  # every command waited its turn


def test_past_four_commands_waiting_on_one_attempt_the_next_is_refused_at_once(release, tmp_path):
    desk = play_desk(release, tmp_path)
    app = play_app(desk, tmp_path)
    with serving(app) as url:
        ada = signed_in(url, "Ada Lovelace")
        ada.post(f"/open/{desk.tasks[0].task_id}")
        attempt = app.state.attempts.open["Ada Lovelace"]
        answers = [None] * 6
        with attempt.lock:  # a slow command holds the attempt while six more arrive
            threads = [threading.Thread(target=lambda i=i: answers.__setitem__(i, ada.post(
                "/attempt/call/get_invoice", data={"invoice_id": f"INV-{i}"}))) for i in range(6)]
            for t in threads:
                t.start()
            for _ in range(1000):
                if attempt.queued == 4 and sum(a is not None for a in answers) == 2:
                    break
                threading.Event().wait(0.01)
            refused = [a for a in answers if a is not None]
        for t in threads:
            t.join(timeout=60)
    assert [a.status_code for a in refused] == [429, 429]
    assert all("commands on your attempt at" in a.text and "this one was not done" in a.text for a in refused)
    assert sorted(a.status_code for a in answers) == [200] * 4 + [429] * 2
    assert len(attempt.calls) == 4  # the four in line, each in its turn


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.2:{port}", "127.0.0.1:1", ""])
def test_a_host_that_is_not_the_servers_own_address_is_refused(release, tmp_path, host):
    desk = play_desk(release, tmp_path)
    with serving(play_app(desk, tmp_path)) as url:
        port = url.rsplit(":", 1)[1].strip("/")
        forged = host.format(port=port)
        for method, path in (("GET", "/"), ("POST", "/person")):
            with httpx.Client() as raw:  # a rebound DNS name reaching 127.0.0.1 sends its own Host
                got = raw.request(method, f"{url.rstrip('/')}{path}", data={"name": "Mallory"} if method == "POST"
                                  else None, headers={"Host": forged, "Origin": f"http://{forged}"})
            assert got.status_code == 400, (method, forged)
            assert got.text == f"Host {forged!r} is not this page's address; open http://127.0.0.1:{port}/ instead.\n"
        ok = httpx.get(url, headers={"Host": f"localhost:{port}"})
        assert ok.status_code == 200 and "Your name" in ok.text


@pytest.mark.parametrize("headers", [{"Origin": "http://evil.example"}, {"Origin": "null"}, {},
                                     {"Referer": "http://evil.example/page"}, {"Origin": "https://testserver"}],
                         ids=["other origin", "null origin", "neither", "other referer", "other scheme"])
def test_a_cross_origin_post_is_refused_and_signs_nobody_in(release, tmp_path, headers):
    desk = play_desk(release, tmp_path)
    client = TestClient(play_app(desk, tmp_path))
    got = client.post("/person", data={"name": "Mallory"}, headers=headers, follow_redirects=False)
    assert got.status_code == 403 and got.text.startswith("A form from ") and "may not act on this page" in got.text
    assert "set-cookie" not in got.headers
    same = client.post("/person", data={"name": "Ada"}, headers={"Referer": "http://testserver/"})
    assert same.status_code == 200 and "Tasks" in same.text  # a Referer of the page itself will do


class _Form(http.server.BaseHTTPRequestHandler):
    """Another site on this machine: its page posts a sign-in form to the play page as soon as it loads."""

    target = ""

    def do_GET(self):  # noqa: N802 (http.server's name)
        body = (f'<form id="f" method="post" action="{self.target}person"><input name="name" value="Mallory">'
                '</form><script>document.getElementById("f").submit()</script>').encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        return None


def test_in_the_browser_a_form_on_another_site_cannot_sign_in(release, tmp_path):
    desk = play_desk(release, tmp_path)
    app = play_app(desk, tmp_path)
    with serving(app) as url:
        _Form.target = url
        other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Form)
        threading.Thread(target=other.serve_forever, daemon=True).start()
        try:
            with browser_page(1000, 700) as page:
                page.goto(f"http://127.0.0.1:{other.server_address[1]}/")
                page.wait_for_url(f"{url}person")
                shown = page.inner_text("body")
                page.goto(url)
                home = page.inner_text("body")
        finally:
            other.shutdown()
    assert shown.startswith(f"A form from http://127.0.0.1:{other.server_address[1]} may not act on this page")
    assert "Your name" in home and "Mallory" not in home  # not signed in


def test_open_attempts_are_capped_per_person_and_in_all(release, tmp_path):
    desk = play_desk(release, tmp_path)
    app = play_app(desk, tmp_path, PlayLimits(open_total=2))
    people = {}
    for name in ("Ada", "Grace", "Edsger"):
        people[name] = TestClient(app, headers={"Origin": ORIGIN})
        people[name].post("/person", data={"name": name})
    t0, t1, t2 = (t.task_id for t in desk.tasks[:3])
    assert people["Ada"].post(f"/open/{t0}").status_code == 200
    again = people["Ada"].post(f"/open/{t1}")
    assert again.status_code == 409
    assert f"You have an attempt at {t0} open: end it before opening another." in again.text
    assert people["Grace"].post(f"/open/{t1}").status_code == 200
    full = people["Edsger"].post(f"/open/{t2}")
    assert full.status_code == 429
    assert "2 attempts are open on this page, the most it holds (2); try again when one has ended." in full.text
    people["Ada"].post("/attempt/submit", data={"message": "done"})
    assert people["Edsger"].post(f"/open/{t2}").status_code == 200  # a slot freed when Ada's attempt ended
    twice = people["Ada"].post(f"/open/{t0}")
    assert twice.status_code == 409 and f"You have attempted {t0} already: one attempt per task." in twice.text


def test_an_attempt_left_idle_gives_its_slot_back_and_is_recorded_out_of_time(release, tmp_path):
    desk = play_desk(release, tmp_path)
    app = play_app(desk, tmp_path, PlayLimits(open_total=1, idle_seconds=0.2))
    ada, grace = (TestClient(app, headers={"Origin": ORIGIN}) for _ in range(2))
    ada.post("/person", data={"name": "Ada"})
    grace.post("/person", data={"name": "Grace"})
    t0, t1 = (t.task_id for t in desk.tasks[:2])
    assert ada.post(f"/open/{t0}").status_code == 200
    assert grace.post(f"/open/{t1}").status_code == 429  # Ada's attempt is fresh: the page is full
    time.sleep(0.3)
    assert grace.post(f"/open/{t1}").status_code == 200  # Ada walked away: her slot went to Grace
    [left] = [r for r in records(tmp_path) if r.agent == "human:Ada"]
    assert left.task_id == t0 and left.outcome == "budget_exhausted" and not left.passed
    assert left.exhausted.startswith("idle for ") and "the page's limit is 0.2 s" in left.exhausted


GRACE = ["Grace", "grace", "GRACE", "Grace.", "Gr\u0430ce"]  # the last with a Cyrillic а


def test_grace_five_ways_is_one_person_with_one_attempt_per_task(release, tmp_path):
    desk = play_desk(release, tmp_path)
    app = play_app(desk, tmp_path)
    task = desk.tasks[0]
    first = TestClient(app, headers={"Origin": ORIGIN})
    first.post("/person", data={"name": GRACE[0]})
    first.post(f"/open/{task.task_id}")
    for spelling in GRACE[1:]:  # each spelling signs in to the attempt Grace has open
        other = TestClient(app, headers={"Origin": ORIGIN})
        page = other.post("/person", data={"name": spelling})
        assert "Grace <form" in page.text and task.trigger.text in page.text
        assert other.post(f"/open/{desk.tasks[1].task_id}").status_code == 409
    first.post("/attempt/submit", data={"message": "done"})
    again = play_app(desk, tmp_path)  # a new page on the same run folder knows Grace from her record
    for spelling in GRACE:
        client = TestClient(again, headers={"Origin": ORIGIN})
        listed = client.post("/person", data={"name": spelling}).text
        assert f'id="open-{task.task_id}"' not in listed and f'id="open-{desk.tasks[1].task_id}"' in listed
        assert client.post(f"/open/{task.task_id}").status_code == 409
    assert [(r.agent, r.task_id) for r in records(tmp_path)] == [("human:Grace", task.task_id)]


def test_in_the_browser_each_spelling_of_grace_finds_her_attempt_recorded(release, tmp_path):
    desk = play_desk(release, tmp_path)
    task = desk.tasks[0]
    seen = {}
    with serving(play_app(desk, tmp_path)) as url, browser_page(1280, 900) as page:
        for spelling in GRACE:
            page.goto(url)
            page.fill("#name", spelling)
            page.get_by_role("button", name="Start").click()
            if spelling == GRACE[0]:
                page.click(f"#open-{task.task_id}")
                page.fill("#message", "done")
                page.get_by_role("button", name="Submit and end the attempt").click()
            seen[spelling] = (page.inner_text("header"), page.locator(f"#open-{task.task_id}").count(),
                              page.inner_text(f"#task-{task.task_id}"))
            page.get_by_role("button", name="Sign out").click()
    for spelling, (header, buttons, row) in seen.items():
        assert "Grace" in header and buttons == 0 and "attempted" in row, spelling
    assert len(records(tmp_path)) == 1
