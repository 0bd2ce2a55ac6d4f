// The timeline's zoom: wheel over it (around the pointer) or drag across it to zoom, the
// horizontal wheel pans, a double click or "reset zoom" shows it all again. The axis comes
// from the page (data-axis: timeline_axis.py's stretches, idle ones drawn as breaks); the view
// is a window on its percent space, and the ticks follow the rules of timeline_axis.py
// (TICK_SERIES, tick_step, tick_label), so the page and the server tick alike.
"use strict";

(() => {
  const SERIES = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30,
    60, 120, 300, 600, 1200, 1800, 3600, 7200, 21600, 43200];
  for (let e = 0; e < 4; e++) for (const m of [1, 2, 5]) SERIES.push(m * 86400 * 10 ** e);
  const TICK_PX = 90;   // about one tick per this many pixels
  const CHAR_PX = 7;     // a tick label's width per character (11 px digits), to keep labels apart
  const MIN_SECONDS = 0.01; // the deepest zoom shows 10 ms

  function tickStep(seconds, maxTicks) {
    const wanted = seconds / Math.max(maxTicks, 1);
    return SERIES.find((step) => step >= wanted * (1 - 1e-9)) ?? SERIES[SERIES.length - 1];
  }

  function components(parts, keepZeros) {
    const nonzero = parts.map(([v], i) => (v ? i : -1)).filter((i) => i >= 0);
    if (!nonzero.length) return "";
    const last = keepZeros ? parts.length - 1 : nonzero[nonzero.length - 1];
    return parts.slice(nonzero[0], last + 1).map(([v, u]) => `${v}${u}`).join("");
  }

  function tickLabel(offset, step, inMs) {
    const millis = Math.round(offset * 1000);
    if (inMs) return `+${millis}ms`;
    const seconds = Math.floor(millis / 1000), ms = millis % 1000;
    const secs = seconds % 60, minutes = Math.floor(seconds / 60);
    const mins = minutes % 60, hours = Math.floor(minutes / 60);
    const hrs = hours % 24, days = Math.floor(hours / 24);
    if (step < 1) {
      const decimals = Math.max(1, Math.ceil(-Math.log10(step) - 1e-9));
      const head = components([[days, "d"], [hrs, "h"], [mins, "m"]], true);
      return `+${head}${secs}.${String(ms).padStart(3, "0").slice(0, decimals)}s`;
    }
    const unit = step < 60 ? 0 : step < 3600 ? 1 : step < 86400 ? 2 : 3;
    const parts = [[days, "d"], [hrs, "h"], [mins, "m"], [secs, "s"]].slice(0, 4 - unit);
    return "+" + (components(parts, false) || `0${parts[parts.length - 1][1]}`);
  }

  function setup(panel) {
    const axis = JSON.parse(panel.dataset.axis);
    const view = panel.querySelector(".tl-view");
    const axisEl = panel.querySelector(".axis");
    const lanes = panel.querySelector(".lanes");
    const breaks = panel.querySelector(".tl-breaks");
    const select = panel.querySelector(".tl-select");
    const reset = panel.querySelector(".tl-reset");
    const minWidth = Math.min(100, Math.max(1e-4, MIN_SECONDS / Math.max(axis.scale, 1e-12)));
    let v0 = 0, v1 = 100;

    const toView = (p) => ((p - v0) / (v1 - v0)) * 100;

    function placeSpan(el, left, width) {
      const a = toView(left), b = toView(left + width);
      el.classList.toggle("tl-out", b < 0 || a > 100);
      el.style.left = `${Math.max(a, 0)}%`;
      el.style.width = `${Math.max(Math.min(b, 100) - Math.max(a, 0), 0.3)}%`;
    }

    function ticks() {
      const px = axisEl.clientWidth || 1000;
      const step = tickStep(axis.scale * (v1 - v0), Math.max(2, Math.floor(px / TICK_PX)));
      const found = [];
      let latest = 0;
      for (const [start, end, left, width, idle] of axis.stretches) {
        const lo = Math.max(v0, left), hi = Math.min(v1, left + width);
        if (idle || hi < lo || width <= 0) continue;
        const at = (p) => start + ((p - left) / width) * (end - start);
        const t0 = at(lo) - axis.origin, t1 = at(hi) - axis.origin;
        latest = Math.max(latest, t1);
        const first = Math.ceil(t0 / step - 1e-9), last = Math.floor(t1 / step + 1e-9);
        if (first > last && lo === left && hi === left + width) {  // a burst shorter than a step: its middle
          found.push({offset: Math.round(((start + end) / 2 - axis.origin) / step) * step, pos: toView(left + width / 2)});
        }
        for (let k = first; k <= last && found.length < 500; k++) {
          const offset = k * step;
          found.push({offset, pos: toView(left + ((axis.origin + offset - start) / (end - start || 1)) * width)});
        }
      }
      const inMs = step < 1 && latest < 1;
      const kept = [];
      for (const tick of found) {
        tick.label = tickLabel(tick.offset, step, inMs);
        const previous = kept[kept.length - 1];  // either side of a break, ticks can crowd: keep the first
        const room = ((previous ? previous.label.length : 0) + tick.label.length) * CHAR_PX / 2 + 12;
        if (previous && (((tick.pos - previous.pos) / 100) * px < room || tick.label === previous.label)) continue;
        kept.push(tick);
      }
      axisEl.replaceChildren(...kept.map((tick) => {
        const el = document.createElement("span");
        el.className = "tl-tick" + (tick.pos < 2 ? " tl-start" : tick.pos > 96 ? " tl-end" : "");
        el.style.left = `${tick.pos}%`;
        el.dataset.left = String(tick.pos);
        el.dataset.offset = String(tick.offset);
        el.textContent = tick.label;
        return el;
      }));
    }

    function layout() {
      for (const mark of lanes.querySelectorAll(".mark[data-left]")) {
        const x = toView(Number(mark.dataset.left));
        mark.style.left = `${x}%`;
        mark.classList.toggle("tl-out", x < -0.5 || x > 100.5);
      }
      for (const el of lanes.querySelectorAll(".span[data-left]")) placeSpan(el, Number(el.dataset.left), Number(el.dataset.width));
      for (const el of breaks.querySelectorAll(".tl-break")) placeSpan(el, Number(el.dataset.left), Number(el.dataset.width));
      ticks();
      const whole = v0 <= 0 && v1 >= 100;
      if (reset) reset.hidden = whole;
      panel.dataset.view = whole ? "" : `${v0.toFixed(4)}-${v1.toFixed(4)}`;
    }

    function zoomTo(a, b) {
      const width = Math.min(Math.max(b - a, minWidth), 100);
      const wanted = b - a >= minWidth ? a : (a + b) / 2 - width / 2;  // too narrow: around its middle
      const start = Math.min(Math.max(wanted, 0), 100 - width);
      v0 = start;
      v1 = start + width;
      layout();
    }

    // Where the pointer is, in the axis' percent space (0..100 of what is shown).
    function share(clientX) {
      const rect = axisEl.getBoundingClientRect();
      return Math.min(Math.max((clientX - rect.left) / rect.width, 0), 1);
    }

    view.addEventListener("wheel", (event) => {
      event.preventDefault();
      const f = share(event.clientX), shown = v1 - v0;
      if (Math.abs(event.deltaX) > Math.abs(event.deltaY)) {
        zoomTo(v0 + (event.deltaX / 500) * shown, v1 + (event.deltaX / 500) * shown);
        return;
      }
      const at = v0 + f * shown, scaled = shown * Math.exp(event.deltaY * 0.0015);
      const width = Math.min(Math.max(scaled, minWidth), 100);
      zoomTo(at - f * width, at + (1 - f) * width);
    }, {passive: false});

    let drag = null, dragged = false;
    view.addEventListener("dragstart", (event) => event.preventDefault());
    view.addEventListener("pointerdown", (event) => {
      const rect = axisEl.getBoundingClientRect();
      if (event.button !== 0 || event.clientX < rect.left) return;  // not on the lanes' titles
      drag = {x: event.clientX, f: share(event.clientX)};
      dragged = false;
    });
    view.addEventListener("pointermove", (event) => {
      if (!drag) return;
      if (Math.abs(event.clientX - drag.x) < 5 && !dragged) return;
      if (!dragged) view.setPointerCapture(event.pointerId);
      dragged = true;
      const rect = axisEl.getBoundingClientRect(), g = share(event.clientX);
      select.hidden = false;
      select.style.left = `${rect.left - view.getBoundingClientRect().left + Math.min(drag.f, g) * rect.width}px`;
      select.style.width = `${Math.abs(g - drag.f) * rect.width}px`;
    });
    view.addEventListener("pointerup", (event) => {
      if (!drag) return;
      const g = share(event.clientX), f = drag.f;
      drag = null;
      select.hidden = true;
      if (!dragged) return;
      const shown = v1 - v0;
      zoomTo(v0 + Math.min(f, g) * shown, v0 + Math.max(f, g) * shown);
    });
    view.addEventListener("click", (event) => {  // a drag that ends on a call does not open it
      if (dragged) { event.preventDefault(); event.stopPropagation(); dragged = false; }
    }, true);
    view.addEventListener("dblclick", () => zoomTo(0, 100));
    if (reset) reset.addEventListener("click", () => zoomTo(0, 100));
    window.addEventListener("resize", ticks);
    layout();
  }

  document.addEventListener("DOMContentLoaded", () => {
    const panel = document.getElementById("timeline");
    if (panel && panel.dataset.axis && !panel.dataset.live) setup(panel);
  });
})();
