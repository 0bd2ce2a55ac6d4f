// A console task's live world: follow its events (relayed by this server from the world's
// Ancha server) and list the calls as they happen. Only the console's own scripts run here
// (Content-Security-Policy): the page names the stream in data-world-live.
"use strict";

function followWorld(panel) {
  const status = panel.querySelector("#live-status");
  const rows = panel.querySelector("#live-calls tbody");
  const records = panel.querySelector("#live-records");
  const cell = (text) => { const td = document.createElement("td"); td.textContent = String(text); return td; };
  const source = new EventSource(panel.dataset.worldLive);
  source.addEventListener("status", (e) => {
    const s = JSON.parse(e.data);
    panel.dataset.status = s.status;
    status.textContent = `live · ${s.status} · ${s.clock.elapsed_s}s simulated · ${s.trace_entries} calls`;
  });
  source.addEventListener("call", (e) => {
    const c = JSON.parse(e.data);
    if (rows.querySelector(`tr[data-seq="${c.seq}"]`)) return;
    const row = document.createElement("tr");
    row.dataset.seq = String(c.seq);
    row.className = c.worked ? "call" : "call err";
    for (const text of [c.seq, c.at.slice(11, 19), c.actor, c.tool, `${c.method} ${c.path}`, c.status]) row.appendChild(cell(text));
    rows.appendChild(row);
  });
  source.addEventListener("record", (e) => {
    const r = JSON.parse(e.data);
    const item = document.createElement("li");
    item.textContent = `${(r.at || "").slice(11, 19)} ${r.kind}${r.text ? ": " + r.text : ""}`;
    records.appendChild(item);
  });
  source.addEventListener("end", (e) => {
    source.close();
    const s = JSON.parse(e.data);
    panel.dataset.status = s.status;
    status.textContent = `the world has ended (${s.status}${s.ended_reason ? ": " + s.ended_reason : ""})`;
  });
  source.addEventListener("gone", (e) => {
    source.close();
    panel.dataset.status = "gone";
    status.textContent = JSON.parse(e.data).reason;
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const panel = document.querySelector("[data-world-live]");
  if (panel) followWorld(panel);
});
