// The trace viewer: replays one recorded trial from the JSON embedded in its page. It reads nothing else,
// requests nothing, and writes only text (textContent), so a recorded output can never become markup.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("trace-data").textContent);
  const list = document.getElementById("steps");
  const position = document.getElementById("position");
  const KNOWN = ["seq", "actor", "tool", "kind", "arguments", "permitted", "outcome", "result", "error", "rows_written"];

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }
  function pretty(value) {
    return typeof value === "string" ? value : JSON.stringify(value, null, 1);
  }
  function block(label, value) {
    const wrap = el("div", "field");
    wrap.appendChild(el("span", "label", label));
    wrap.appendChild(el("pre", null, pretty(value)));
    return wrap;
  }
  function empty(value) {
    return value === null || value === undefined || (Array.isArray(value) && value.length === 0) ||
      (typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0);
  }
  function said(event) {  // what a user (or a person) said, wherever the recorder put it
    const a = event.arguments || {};
    return a.message || a.content || a.text || null;
  }

  function eventItem(event) {
    const li = el("li", "step actor-" + event.actor + " outcome-" + event.outcome);
    const head = el("div", "head");
    head.appendChild(el("span", "seq", "#" + event.seq));
    head.appendChild(el("span", "actor", event.actor));
    head.appendChild(el("span", "tool", event.tool + (event.kind ? " (" + event.kind + ")" : "")));
    head.appendChild(el("span", "badge " + event.outcome, event.permitted ? event.outcome : "denied"));
    li.appendChild(head);
    if (event.actor === "user" && said(event)) li.appendChild(el("p", "user-message", said(event)));
    if (event.arguments && Object.keys(event.arguments).length) li.appendChild(block("arguments", event.arguments));
    if (event.result !== null && event.result !== undefined) li.appendChild(block("output", event.result));
    if (event.error) li.appendChild(block("error", event.error));
    if (event.rows_written) li.appendChild(el("div", "rows", event.rows_written + " row(s) written"));
    for (const key of Object.keys(event)) {  // fields a later recorder adds (tokens, cost, …) as recorded
      if (!KNOWN.includes(key) && event[key] !== null) li.appendChild(block(key, event[key]));
    }
    return li;
  }

  function withheldItem() {  // an answer-key baseline on a task whose answers are not published
    const li = el("li", "step withheld");
    li.appendChild(el("div", "head", data.calls + " call(s) and the final message withheld"));
    li.appendChild(el("p", "withheld-why", "Withheld: " + data.withheld + "."));
    return li;
  }

  function finalItem() {
    if (data.withheld) return withheldItem();
    const li = el("li", "step final");
    li.appendChild(el("div", "head", "Final message of the agent"));
    li.appendChild(el("pre", "final-message", data.final_message || "(none)"));
    if (data.error) li.appendChild(block("error (infrastructure)", data.error));
    return li;
  }

  function verdictItem() {
    const li = el("li", "step verdict");
    li.id = "verdict";
    const v = data.verdict;
    const outcome = data.trial.outcome;
    li.appendChild(el("div", "head", "Verdict: " + (data.trial.passed ? "passed" : "failed") + " (" + outcome + ")"));
    if (v) {
      const table = el("table", "checks");
      const header = el("tr");
      ["check", "result", "detail"].forEach(function (h) { header.appendChild(el("th", null, h)); });
      table.appendChild(header);
      v.checks.forEach(function (c) {
        const row = el("tr", c.passed ? "pass" : "fail");
        row.appendChild(el("td", "check-name", c.name));
        row.appendChild(el("td", "check-result", c.passed ? "✓ passed" : "✗ failed"));
        row.appendChild(el("td", null, c.detail || ""));
        table.appendChild(row);
      });
      li.appendChild(table);
    } else {
      li.appendChild(el("p", null, "Not graded: the trial ended with " + outcome + "."));
    }
    const other = data.other || {};
    if (v) {
      Object.keys(v).forEach(function (key) {  // verdict fields beside the checks, as recorded
        if (key !== "checks" && key !== "passed" && !empty(v[key])) li.appendChild(block("verdict " + key, v[key]));
      });
    }
    Object.keys(other).forEach(function (key) {  // fields a later recorder adds to the trial, as recorded
      const value = other[key];
      if (empty(value)) return;
      if (Array.isArray(value) && value.every(function (x) { return x && x.tool !== undefined; })) {
        li.appendChild(el("div", "label", key + " (in its own order)"));  // e.g. calls on a user-side world
        const sub = el("ol", "substeps");
        value.forEach(function (event) { sub.appendChild(eventItem(event)); });
        li.appendChild(sub);
      } else {
        li.appendChild(block(key, value));
      }
    });
    return li;
  }

  const items = data.steps.map(eventItem).concat([finalItem(), verdictItem()]);
  items.forEach(function (li) { li.hidden = true; list.appendChild(li); });
  let shown = 0;
  let timer = null;

  function show(n) {
    shown = Math.max(0, Math.min(items.length, n));
    items.forEach(function (li, i) { li.hidden = i >= shown; });
    position.textContent = shown === 0 ? "start: the task as the agent received it"
      : "step " + shown + " of " + items.length + (shown === items.length ? " (verdict)" : "");
    if (shown > 0) items[shown - 1].scrollIntoView({block: "nearest"});
  }
  function stop() { if (timer) { clearInterval(timer); timer = null; } }

  document.getElementById("first").addEventListener("click", function () { stop(); show(0); });
  document.getElementById("prev").addEventListener("click", function () { stop(); show(shown - 1); });
  document.getElementById("next").addEventListener("click", function () { stop(); show(shown + 1); });
  document.getElementById("all").addEventListener("click", function () { stop(); show(items.length); });
  document.getElementById("play").addEventListener("click", function () {
    stop();
    if (shown >= items.length) show(0);
    timer = setInterval(function () { show(shown + 1); if (shown >= items.length) stop(); }, 600);
  });
  show(0);
})();
