// A trial's page: the filters over its checks and its calls (failed only, by tool, by person).
// Each check and call row carries data-failed, data-tools and data-people (space separated);
// a filter hides what does not match, and the folded passed checks open when a tool or a
// person is chosen, so what matches is in sight.
"use strict";

function matches(el, failedOnly, tool, person) {
  if (failedOnly && el.dataset.failed !== "1") return false;
  if (tool && !(el.dataset.tools || "").split(" ").includes(tool)) return false;
  if (person && !(el.dataset.people || "").split(" ").includes(person)) return false;
  return true;
}

function applyFilters() {
  const failedOnly = document.getElementById("filter-failed").checked;
  const tool = document.getElementById("filter-tool").value;
  const person = document.getElementById("filter-person").value;
  const checks = document.querySelectorAll("#checks [data-filterable]");
  let shown = 0;
  for (const el of document.querySelectorAll("[data-filterable]")) {
    const keep = matches(el, failedOnly, tool, person);
    el.classList.toggle("filtered-out", !keep);
    if (keep && el.closest("#checks")) shown += 1;
  }
  const passed = document.getElementById("passed-checks");
  if (passed) {
    const left = passed.querySelectorAll("[data-filterable]:not(.filtered-out)").length;
    const summary = passed.querySelector("summary");
    const all = Number(summary.dataset.count);
    summary.textContent = left === all ? `${all} passed check${all === 1 ? "" : "s"}` : `${left} of ${all} passed checks`;
    passed.classList.toggle("filtered-out", left === 0);
    if ((tool || person) && left > 0) passed.open = true;
  }
  const active = failedOnly || tool || person;
  document.getElementById("filter-count").textContent = active ? `${shown} of ${checks.length} checks shown` : "";
}

document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("filters");
  if (!form) return;
  form.hidden = false;
  form.addEventListener("change", applyFilters);
  form.addEventListener("submit", (event) => event.preventDefault());
});
