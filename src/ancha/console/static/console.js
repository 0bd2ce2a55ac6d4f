// The console's only script: place the timeline's marks and the pass-rate bars, open a
// call's bodies on demand, load the world diff, and follow a running trial over Server-Sent
// Events. The pages' policy (Content-Security-Policy) allows no inline style, so positions
// travel as data-left, data-width and data-height (percentages) and are set here; without
// the script, every page still reads, with the timeline's marks at its left edge.
"use strict";

function placeAll(root) {
  for (const el of root.querySelectorAll("[data-left]")) el.style.left = `${Number(el.dataset.left)}%`;
  for (const el of root.querySelectorAll("[data-width]")) el.style.width = `${Number(el.dataset.width)}%`;
  for (const el of root.querySelectorAll("[data-height]")) el.style.height = `${Number(el.dataset.height)}%`;
}

function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
}

// A call's request and response, fetched the first time its row is opened.
document.addEventListener("toggle", (event) => {
  const details = event.target;
  if (!(details instanceof HTMLDetailsElement) || !details.open || details.dataset.loaded) return;
  const body = details.querySelector(".call-body");
  if (!details.dataset.src || (body && !body.classList.contains("muted"))) return;
  details.dataset.loaded = "1";
  fetch(details.dataset.src).then((r) => r.text()).then((html) => {
    if (body) body.outerHTML = html; else details.insertAdjacentHTML("beforeend", html);
  });
}, true);

// A copy button (a call's fork command): its data-copy to the clipboard, or, where the page
// may not write there, the text beside it selected for Ctrl+C.
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("button[data-copy]") : null;
  if (!button) return;
  const select = () => {
    const text = button.previousElementSibling;
    if (text) window.getSelection().selectAllChildren(text);
  };
  if (!navigator.clipboard) { select(); return; }
  navigator.clipboard.writeText(button.dataset.copy).then(() => { button.textContent = "copied"; }, select);
});

// Fragments loaded after the page (the world diff rebuilds the seed: it can take a moment).
function loadFragments() {
  for (const holder of document.querySelectorAll("[data-fragment]")) {
    if (document.querySelector("[data-live]")) continue;
    fetch(holder.dataset.fragment).then((r) => r.text()).then((html) => { holder.innerHTML = html; });
  }
}

// A focused call (an evidence link): scroll to it.
function showFocus() {
  const focused = document.querySelector("tr.focus");
  if (focused) focused.scrollIntoView({block: "center"});
}

// --- a running trial ---------------------------------------------------------------------

function followLive(panel) {
  const lanes = document.getElementById("lanes");
  const rows = document.getElementById("call-rows");
  const clock = document.getElementById("clock");
  const base = panel.dataset.live.replace(/\/live$/, "");
  let start = null, now = null;

  function lane(key, title, group) {
    let el = lanes.querySelector(`[data-lane="${CSS.escape(key)}"]`);
    if (!el) {
      el = document.createElement("div");
      el.className = `lane ${group}`;
      el.dataset.lane = key;
      el.innerHTML = `<div class="lane-title" title="${esc(title)}">${esc(title)}</div><div class="track"></div>`;
      lanes.appendChild(el);
    }
    return el.querySelector(".track");
  }
  function place(mark) {
    if (start === null || now === null) return;
    const span = Math.max(now - start, 1);
    mark.style.left = `${Math.min(100, (100 * (Number(mark.dataset.at) - start)) / span)}%`;
  }
  function addMark(track, at, kind, label, seq) {
    const mark = document.createElement(seq ? "a" : "span");
    mark.className = `mark ${kind}`;
    mark.dataset.at = String(Date.parse(at));
    mark.title = label;
    if (seq) { mark.href = `${base}?focus=${seq}#call-${seq}`; mark.dataset.seq = String(seq); }
    track.appendChild(mark);
    place(mark);
  }
  function relayout() { for (const m of lanes.querySelectorAll(".mark[data-at]")) place(m); }

  const source = new EventSource(panel.dataset.live);
  source.addEventListener("status", (e) => {
    const s = JSON.parse(e.data);
    start = Date.parse(s.clock.start);
    now = Date.parse(s.clock.now);
    if (clock) clock.textContent = `live · ${s.status} · ${s.clock.elapsed_s}s simulated · ${s.trace_entries} calls`;
    relayout();
  });
  source.addEventListener("call", (e) => {
    const c = JSON.parse(e.data);
    now = Math.max(now || 0, Date.parse(c.at));
    const person = c.actor.startsWith("person:") ? c.actor.slice(7) : null;
    const track = c.actor === "agent" ? lane(`tool:${c.tool}`, `agent → ${c.tool}`, "tool")
      : person ? lane(`person:${person}`, person, "person") : lane("world", "world (faults, scheduled events)", "world");
    addMark(track, c.at, c.worked ? "ok" : "err", `#${c.seq} ${c.actor}: ${c.method} ${c.path} → ${c.status}`, c.seq);
    const row = document.createElement("tr");
    row.id = `call-${c.seq}`;
    row.dataset.seq = String(c.seq);
    if (!c.worked) row.className = "err";
    row.innerHTML = `<td>${c.seq}</td><td>${esc(c.at.slice(11, 19))}</td><td>${esc(c.actor)}</td><td>${esc(c.tool)}</td>` +
      `<td>${esc(c.method)} ${esc(c.path)}</td><td>${c.status}</td>`;
    rows.appendChild(row);
  });
  source.addEventListener("record", (e) => {
    const r = JSON.parse(e.data);
    if (r.person && ["knows", "revealed", "decided", "told"].includes(r.kind) && r.via !== "owner") {
      const label = r.kind === "decided" ? `${r.person} decided ${r.decision}: ${r.option}` : `${r.person} ${r.kind} ${r.fact || ""}`;
      addMark(lane(`person:${r.person}`, r.person, "person"), r.at, r.kind === "decided" ? "decision" : "fact", label);
    } else if (r.kind === "predicate" && r.held) {
      addMark(lane("milestones", "milestones (first held)", "world"), r.at, "milestone", "milestone first held");
    } else if (r.kind === "fault_started" || r.kind === "fault_resolved") {
      addMark(lane("faults", "faults", "world"), r.at, r.kind === "fault_started" ? "alert" : "ok", `fault ${r.fault} ${r.kind.slice(6)}`);
    }
  });
  function reloadWhenGraded(tries) {
    fetch(`${base}/state`).then((r) => r.json()).then((s) => {
      if (s.graded) location.reload();
      else if (tries > 0) setTimeout(() => reloadWhenGraded(tries - 1), 300);
    });
  }
  source.addEventListener("end", () => {
    source.close();
    if (clock) clock.textContent = "finished · grading…";
    reloadWhenGraded(200);
  });
  source.addEventListener("gone", (e) => {
    source.close();
    if (clock) clock.textContent = JSON.parse(e.data).reason;
    reloadWhenGraded(20);
  });
}

document.addEventListener("DOMContentLoaded", () => {
  placeAll(document);
  loadFragments();
  showFocus();
  const live = document.querySelector("[data-live]");
  if (live) followLive(live);
});
