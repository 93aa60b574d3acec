// SPDX-License-Identifier: MIT
// Draws a scope-report --html page from its data: sortable tables, the flame graph, the timeline, the ranks' heat map.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("scope-data").textContent);
  const NS = "http://www.w3.org/2000/svg"; // the SVG namespace's name: nothing is fetched
  const tip = document.getElementById("tip");

  function fmtNs(ns) {
    const units = ["ns", "us", "ms", "s"];
    let u = 0;
    while (Math.abs(ns) >= 999.5 && u < 3) { ns /= 1000; u++; }
    return u ? ns.toFixed(3) + " " + units[u] : Math.round(ns) + " ns";
  }
  function el(tag, attrs, parent, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function sv(tag, attrs, parent) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function showTip(ev, text) {
    tip.textContent = text;
    tip.style.display = "block";
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 320) + "px";
    tip.style.top = ev.clientY + 14 + "px";
  }
  function hideTip() { tip.style.display = "none"; }
  function regionName(r) {
    return r >= 0 ? D.regions[r][0] : "";
  }
  function color(r) {
    if (r < 0) return "#bbb";
    const kind = D.regions[r][1], name = D.regions[r][0];
    if (kind === "mpi") return "#5b8fd6";
    if (kind === "wait") return "#a0a0a0";
    if (kind === "io") return "#63b36b";
    let h = 0;
    for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return "hsl(" + (10 + h % 45) + "," + (65 + (h >> 8) % 25) + "%," + (55 + (h >> 16) % 12) + "%)";
  }

  // ---- The address keeps the view to share: #regions=calls.up&since=NS&until=NS
  function view() {
    return new URLSearchParams(location.hash.slice(1));
  }
  function keep(changes) {
    const v = view();
    for (const k in changes) changes[k] === null ? v.delete(k) : v.set(k, changes[k]);
    const s = v.toString();
    try {
      history.replaceState(null, "", s ? "#" + s : location.pathname + location.search);
    } catch (e) { /* a page opened from a file may not rewrite its address: the view is the same */ }
  }

  // ---- Sortable tables: a click on a heading sorts by it, a second reverses.
  // A table with data-view="regions" keeps its order in the address, as regions=HEADING[.up|.down].
  function sortTable(t, i, th, up) {
    const numeric = th.dataset.type === "num";
    for (const h of t.tHead.rows[0].cells) h.classList.remove("sorted", "up");
    th.classList.add("sorted");
    if (up) th.classList.add("up");
    const body = t.tBodies[0];
    const all = Array.from(body.rows);
    const rows = all.filter(r => !r.classList.contains("other"));
    const key = r => numeric ? +r.cells[i].dataset.v : r.cells[i].textContent.toLowerCase();
    rows.sort((a, b) => {
      const x = key(a), y = key(b);
      const c = x < y ? -1 : x > y ? 1 : 0;
      return up ? c : -c;
    });
    rows.concat(all.filter(r => r.classList.contains("other"))).forEach(r => body.appendChild(r));
  }
  document.querySelectorAll("table.sortable").forEach(t => {
    const heads = Array.from(t.tHead.rows[0].cells);
    heads.forEach((th, i) => th.addEventListener("click", () => {
      const again = th.classList.contains("sorted");
      const up = again ? !th.classList.contains("up") : th.dataset.type !== "num";
      sortTable(t, i, th, up);
      if (t.dataset.view) keep({ [t.dataset.view]: th.textContent + (up ? ".up" : ".down") });
    }));
    const asked = t.dataset.view && view().get(t.dataset.view);
    if (!asked) return;
    const [name, dir] = asked.split(".");
    const i = heads.findIndex(th => th.textContent === name);
    if (i >= 0) sortTable(t, i, heads[i], dir ? dir === "up" : heads[i].dataset.type !== "num");
  });

  // ---- Flame graph (icicle): the merged call tree, callers above callees.
  function flame() {
    const box = document.getElementById("flame");
    const N = D.flame.nodes;
    if (!box || !N.length) return;
    const kids = N.map(() => []);
    for (let i = 1; i < N.length; i++) kids[N[i][0]].push(i);
    kids.forEach(k => k.sort((a, b) => N[b][2] - N[a][2]));
    const total = i => i === 0 ? kids[0].reduce((s, k) => s + N[k][2], 0) : N[i][2];
    const label = i => i === 0 ? "all calls" : N[i][1] === -2 ? N[i][5] + " smaller call paths" : regionName(N[i][1]);
    let focus = 0;
    function draw() {
      box.textContent = "";
      const W = Math.max(box.clientWidth || 0, 600), H = 18;
      const chain = [];
      for (let i = focus; i !== 0; i = N[i][0]) chain.unshift(i);
      chain.unshift(0);
      let depth = 0;
      const rects = [];
      chain.forEach((i, d) => rects.push([i, 0, W, d]));
      const stack = [[focus, 0, W, chain.length - 1]];
      while (stack.length) {
        const [i, x, w, d] = stack.pop();
        depth = Math.max(depth, d);
        let cx = x;
        const t = total(i) || 1;
        for (const k of kids[i]) {
          const kw = w * N[k][2] / t;
          if (kw >= 0.5 && d < 200) {
            rects.push([k, cx, kw, d + 1]);
            stack.push([k, cx, kw, d + 1]);
          }
          cx += kw;
        }
      }
      const svg = sv("svg", { width: W, height: (depth + 2) * H, class: "flame" }, box);
      for (const [i, x, w, d] of rects) {
        const g = sv("g", { class: "flame-node", "data-name": label(i) }, svg);
        const r = sv("rect", { x: x, y: d * H, width: Math.max(w, 0.5), height: H - 1,
                                fill: i === 0 ? "#ddd" : color(N[i][1]) }, g);
        const title = label(i) + ": total " + fmtNs(total(i)) + (i ? ", self " + fmtNs(N[i][3]) + ", " + N[i][4] + " calls" : "");
        sv("title", {}, g).textContent = title;
        if (w > 40) {
          const tx = sv("text", { x: x + 3, y: d * H + 13 }, g);
          const room = Math.floor((w - 6) / 6.5);
          const s = label(i);
          tx.textContent = s.length > room ? s.slice(0, Math.max(room - 1, 1)) + "\u2026" : s;
        }
        r.addEventListener("click", () => { focus = i; draw(); });
      }
    }
    draw();
    window.addEventListener("resize", draw);
  }

  // ---- Timeline: processes and lanes, long calls as bars, where every call started as a strip.
  function timeline() {
    const box = document.getElementById("timeline");
    if (!box || !D.lanes.length) return;
    const ROW = 11, ROWS = 12, STRIP = 8;
    let t0 = 0, t1 = Math.max(D.span, 1);
    // since=NS&until=NS (ns since the job's start): a window to open on, kept as it moves.
    const since = +view().get("since"), until = +view().get("until");
    if (until > since && since < t1) {
      t0 = since;
      t1 = Math.min(until, t1);
    }
    function remember() {
      const whole = t0 === 0 && t1 === Math.max(D.span, 1);
      keep(whole ? { since: null, until: null } : { since: Math.round(t0), until: Math.round(t1) });
    }
    const axis = el("div", { class: "axis" }, box);
    const lanes = D.lanes.map(l => {
      const row = el("div", { class: "lane" }, box);
      el("div", { class: "lane-label", title: l.label }, row, l.label);
      const plot = el("div", { class: "lane-plot" }, row);
      const depth = Math.min(ROWS, l.bars.reduce((m, b) => Math.max(m, b[3] + 1), 1));
      return { l, plot, height: depth * ROW + STRIP + 2 };
    });
    function draw() {
      const W = Math.max((lanes[0].plot.clientWidth || 0), 400);
      box.dataset.since = Math.round(t0);
      box.dataset.until = Math.round(t1);
      const scale = W / (t1 - t0);
      axis.textContent = "";
      el("div", { class: "pad" }, axis);
      const ticks = el("div", { style: "flex:1;position:relative;height:16px" }, axis);
      for (let k = 0; k <= 5; k++) {
        el("span", { style: "position:absolute;left:" + (k * 19.5) + "%" }, ticks, fmtNs(t0 + (t1 - t0) * k / 5));
      }
      for (const { l, plot, height } of lanes) {
        plot.textContent = "";
        const svg = sv("svg", { width: W, height: height }, plot);
        for (const b of l.bars) {
          if (b[0] > t1 || b[0] + b[1] < t0) continue;
          const x = (b[0] - t0) * scale, w = b[1] * scale;
          if (w < 0.3) continue;
          const d = Math.min(b[3], ROWS - 1);
          const x0 = Math.max(x, -1), w0 = Math.min(x + w, W + 1) - x0;
          const r = sv("rect", { class: "bar", x: x0, y: d * ROW, width: Math.max(w0, 0.5), height: ROW - 1,
                                  fill: color(b[2]), "data-name": regionName(b[2]) }, svg);
          r.addEventListener("mousemove", ev => showTip(ev, regionName(b[2]) + ": " + fmtNs(b[1]) +
                                                        " from " + fmtNs(b[0])));
          r.addEventListener("mouseleave", hideTip);
          if (w0 > 60) {
            const tx = sv("text", { x: x0 + 3, y: d * ROW + 9 }, svg);
            const s = regionName(b[2]), room = Math.floor((w0 - 6) / 6);
            tx.textContent = s.length > room ? s.slice(0, Math.max(room - 1, 1)) + "\u2026" : s;
          }
        }
        const bins = l.bins, n = bins.length, most = Math.max(1, ...bins), y = height - STRIP - 1;
        for (let i = 0; i < n; i++) {
          if (!bins[i]) continue;
          const a = D.span * i / n, z = D.span * (i + 1) / n;
          if (a > t1 || z < t0) continue;
          const x = (a - t0) * scale, w = Math.max((z - a) * scale, 1);
          sv("rect", { class: "strip", x: x, y: y, width: w, height: STRIP, fill: "#7a4fb8",
                       "fill-opacity": 0.15 + 0.85 * bins[i] / most }, svg)
            .addEventListener("mousemove", ev => showTip(ev, bins[i] + " calls started from " + fmtNs(a) + " to " + fmtNs(z)));
        }
      }
    }
    function zoom(f, at) {
      const span = t1 - t0, mid = t0 + span * at;
      let a = mid - (mid - t0) / f, z = mid + (t1 - mid) / f;
      if (z - a < 100) return;
      if (a < 0) { z -= a; a = 0; }
      if (z > D.span) { a = Math.max(0, a - (z - D.span)); z = D.span; }
      t0 = a; t1 = Math.max(z, a + 100);
      draw();
      remember();
    }
    const controls = document.getElementById("timeline-controls");
    const button = (text, fn) => el("button", { type: "button" }, controls, text).addEventListener("click", fn);
    button("zoom in", () => zoom(2, 0.5));
    button("zoom out", () => zoom(0.5, 0.5));
    button("whole run", () => { t0 = 0; t1 = Math.max(D.span, 1); draw(); remember(); });
    box.addEventListener("wheel", ev => {
      const plot = ev.target.closest(".lane-plot");
      if (!plot) return;
      ev.preventDefault();
      const r = plot.getBoundingClientRect();
      zoom(ev.deltaY < 0 ? 1.25 : 0.8, (ev.clientX - r.left) / r.width);
    }, { passive: false });
    let drag = null;
    box.addEventListener("mousedown", ev => {
      const plot = ev.target.closest(".lane-plot");
      if (plot) drag = { x: ev.clientX, t0, t1, w: plot.clientWidth };
    });
    window.addEventListener("mousemove", ev => {
      if (!drag) return;
      const dt = (ev.clientX - drag.x) / drag.w * (drag.t1 - drag.t0);
      t0 = Math.max(0, drag.t0 - dt);
      t1 = t0 + (drag.t1 - drag.t0);
      draw();
    });
    window.addEventListener("mouseup", () => { if (drag) remember(); drag = null; });
    draw();
    window.addEventListener("resize", draw);
  }

  // ---- The ranks: each region's time per rank against its mean.
  function heat() {
    const box = document.getElementById("heat");
    const I = D.imbalance;
    if (!box || !I) return;
    const cols = I.ranks.length, cw = Math.max(2, Math.min(24, Math.floor(900 / cols))), rh = 16, left = 210;
    const svg = sv("svg", { width: left + cols * cw + 2, height: I.rows.length * rh + 18, class: "heat" }, box);
    I.rows.forEach((row, y) => {
      const name = regionName(row.region);
      sv("text", { x: left - 6, y: y * rh + 12, "text-anchor": "end", class: "heat-label" }, svg).textContent =
        name.length > 32 ? name.slice(0, 31) + "\u2026" : name;
      const mean = row.values.reduce((s, v) => s + v, 0) / cols || 1;
      row.values.forEach((v, x) => {
        const q = Math.max(0, Math.min(2, v / mean)); // 0 .. 2 x the mean: blue .. white .. red
        const c = q < 1 ? "rgb(" + Math.round(80 + 175 * q) + "," + Math.round(120 + 135 * q) + ",255)"
                        : "rgb(255," + Math.round(255 - 175 * (q - 1)) + "," + Math.round(255 - 175 * (q - 1)) + ")";
        sv("rect", { x: left + x * cw, y: y * rh, width: cw - (cw > 3), height: rh - 1, fill: c }, svg)
          .addEventListener("mousemove", ev => showTip(ev, regionName(row.region) + ", rank " + I.ranks[x] + ": " +
                                                     fmtNs(v) + " (" + Math.round(100 * v / mean) + "% of the mean)"));
      });
    });
    svg.addEventListener("mouseleave", hideTip);
    for (let x = 0; x < cols; x += Math.ceil(cols / 16)) {
      sv("text", { x: left + x * cw, y: I.rows.length * rh + 13 }, svg).textContent = I.ranks[x];
    }
  }

  flame();
  timeline();
  heat();
  document.body.setAttribute("data-drawn", "1");
})();
