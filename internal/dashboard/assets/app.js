// The dashboard's pages: they poll the server's JSON and redraw, with
// hand-written SVG charts (see the package doc of internal/dashboard).
"use strict";

const NS = "http://www.w3.org/2000/svg";
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
const poll = 1000 * (Number(document.body.dataset.poll) || 3);

function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function fmt(x, digits) {
  if (x === null || x === undefined) return "–";
  if (Math.abs(x) >= 1e5 || (x !== 0 && Math.abs(x) < 1e-3)) return x.toExponential(2);
  return x.toFixed(digits === undefined ? 3 : digits);
}

function duration(s) {
  if (s === null || s === undefined) return "–";
  if (s < 120) return s.toFixed(0) + " s";
  if (s < 7200) return (s / 60).toFixed(0) + " min";
  return (s / 3600).toFixed(1) + " h";
}

// ticks returns about n round values spanning [lo, hi].
function ticks(lo, hi, n) {
  const span = hi - lo || Math.abs(hi) || 1;
  const step0 = span / n, mag = Math.pow(10, Math.floor(Math.log10(step0)));
  const step = [1, 2, 5, 10].map(m => m * mag).find(s => s >= step0);
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

// chart draws line series (each {xy, color, width, attrs}), bands (each
// {xlohi, color}) and dots (each {x, y, color, r}) into the element box.
function chart(box, spec) {
  box.replaceChildren();
  const W = box.clientWidth || 400, H = box.clientHeight || 250;
  const m = {l: 58, r: 12, t: 10, b: 34};
  const svg = el("svg", {width: W, height: H, viewBox: `0 0 ${W} ${H}`}, box);
  const xs = [], ys = [];
  for (const s of spec.lines || []) for (const [x, y] of s.xy) if (y !== null) { xs.push(x); ys.push(y); }
  for (const b of spec.bands || []) for (const [x, lo, hi] of b.xlohi) if (lo !== null) { xs.push(x); ys.push(lo, hi); }
  for (const d of spec.dots || []) if (d.y !== null && d.x !== null) { xs.push(d.x); ys.push(d.y); }
  if (!xs.length) { el("text", {x: W / 2 - 30, y: H / 2}, svg).textContent = "no data yet"; return svg; }
  let x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  if (x0 === x1) { x0 -= 1; x1 += 1; }
  if (y0 === y1) { y0 -= 1; y1 += 1; }
  const pad = 0.04 * (y1 - y0); y0 -= pad; y1 += pad;
  if (spec.pad) { const px = 0.04 * (x1 - x0); x0 -= px; x1 += px; }
  const X = x => m.l + (x - x0) / (x1 - x0) * (W - m.l - m.r);
  const Y = y => H - m.b - (y - y0) / (y1 - y0) * (H - m.t - m.b);
  const axes = el("g", {class: "axes"}, svg);
  for (const t of ticks(x0, x1, 8)) {
    el("line", {x1: X(t), x2: X(t), y1: m.t, y2: H - m.b, stroke: "#eee"}, axes);
    el("text", {x: X(t), y: H - m.b + 14, "text-anchor": "middle"}, axes).textContent = fmt(t, Number.isInteger(t) ? 0 : 2);
  }
  for (const t of ticks(y0, y1, 6)) {
    el("line", {x1: m.l, x2: W - m.r, y1: Y(t), y2: Y(t), stroke: "#eee"}, axes);
    el("text", {x: m.l - 4, y: Y(t) + 4, "text-anchor": "end"}, axes).textContent = spec.ylog ? "1e" + fmt(t, 1) : fmt(t, 2);
  }
  el("rect", {x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b, fill: "none", stroke: "#999"}, axes);
  if (spec.xlabel) el("text", {x: (W + m.l) / 2, y: H - 4, "text-anchor": "middle"}, axes).textContent = spec.xlabel;
  if (spec.ylabel) el("text", {x: 12, y: (H - m.b) / 2, transform: `rotate(-90 12 ${(H - m.b) / 2})`, "text-anchor": "middle"}, axes).textContent = spec.ylabel;
  for (const b of spec.bands || []) {
    const ok = b.xlohi.filter(p => p[1] !== null);
    if (!ok.length) continue;
    const pts = ok.map(([x, lo]) => `${X(x)},${Y(lo)}`).concat(ok.slice().reverse().map(([x, , hi]) => `${X(x)},${Y(hi)}`));
    el("polygon", {points: pts.join(" "), fill: b.color, "fill-opacity": 0.18, stroke: "none"}, svg);
  }
  for (const s of spec.lines || []) {
    const pts = s.xy.filter(p => p[1] !== null).map(([x, y]) => `${X(x)},${Y(y)}`);
    const attrs = Object.assign({points: pts.join(" "), fill: "none", stroke: s.color, "stroke-width": s.width || 1.5}, s.attrs || {});
    if (s.dash) attrs["stroke-dasharray"] = s.dash;
    el("polyline", attrs, svg);
  }
  for (const d of spec.dots || []) {
    if (d.x === null || d.y === null) continue;
    const c = el("circle", {cx: X(d.x), cy: Y(d.y), r: d.r || 3, fill: d.color, "fill-opacity": 0.85}, svg);
    if (d.title) el("title", {}, c).textContent = d.title;
  }
  return svg;
}

// viridis-like colour of t in [0, 1].
function colour(t) {
  const stops = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  t = Math.max(0, Math.min(1, t)) * (stops.length - 1);
  const i = Math.min(Math.floor(t), stops.length - 2), f = t - i;
  const c = stops[i].map((a, k) => Math.round(a + f * (stops[i + 1][k] - a)));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

async function getJSON(url) {
  const r = await fetch(url, {cache: "no-store"});
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return r.json();
}

// ---- index page

async function refreshIndex() {
  try {
    const data = await getJSON("/api/runs");
    const known = new Set();
    for (const run of data.runs) {
      known.add(run.id);
      const tr = document.querySelector(`tr[data-run="${CSS.escape(run.id)}"]`);
      if (!tr) { location.reload(); return; } // a new run: the table is the server's
      const set = (f, v) => { const td = tr.querySelector(`[data-field="${f}"]`); if (td) td.textContent = v; };
      set("progress", `${run.done} / ${run.budget}` + (run.pending ? ` (+${run.pending} pending)` : ""));
      set("best", fmt(run.best));
      set("updated", new Date(run.updated).toLocaleString());
    }
  } catch (e) { console.error(e); }
  setTimeout(refreshIndex, poll);
}

function initIndex() {
  document.getElementById("compare").addEventListener("click", () => {
    const ids = [...document.querySelectorAll("#runs input:checked")].map(i => "run=" + encodeURIComponent(i.value));
    if (ids.length) location.href = "/run?" + ids.join("&");
  });
  refreshIndex();
}

// ---- run page

const ids = [...document.querySelectorAll("#run-ids li")].map(li => li.textContent);
let focus = "";

function drawCurve(view) {
  const lines = [], bands = [], legend = document.getElementById("legend");
  legend.replaceChildren();
  view.groups.forEach((g, gi) => {
    const color = COLORS[gi % COLORS.length];
    for (const r of g.runs) {
      lines.push({xy: r.best.map((y, x) => [x, y]), color, width: g.runs.length > 1 ? 0.8 : 2,
        attrs: {class: "run", "data-run": r.id, "data-n": r.best.length}});
    }
    if (g.runs.length > 1) {
      bands.push({xlohi: g.mean.map((m, x) => [x, m === null ? null : m - g.std[x], m === null ? null : m + g.std[x]]), color});
      lines.push({xy: g.mean.map((y, x) => [x, y]), color, width: 2.5, attrs: {class: "mean", "data-group": g.label}});
    }
    const s = document.createElement("span"), i = document.createElement("i");
    i.style.background = color;
    s.append(i, `${g.label || g.runs[0].id} (${g.count})`);
    legend.append(s);
  });
  chart(document.getElementById("curve"), {lines, bands, xlabel: "distinct evaluations", ylabel: "best score"});
}

function drawProgress(view) {
  const tbody = document.querySelector("#progress tbody");
  tbody.replaceChildren();
  for (const r of view.runs) {
    const tr = document.createElement("tr");
    tr.dataset.run = r.id;
    const frac = r.budget ? Math.min(1, r.done / r.budget) : 0;
    const cells = [r.id, `${r.done} / ${r.budget}`, "", String(r.distinct), String(r.pending), fmt(r.best),
      duration(r.seconds), r.done >= r.budget ? "done" : duration(r.left), new Date(r.updated).toLocaleString()];
    cells.forEach((c, k) => {
      const td = document.createElement("td");
      if (k === 2) {
        const bar = document.createElement("div"), fill = document.createElement("div");
        bar.className = "bar"; fill.style.width = (100 * frac).toFixed(1) + "%"; bar.append(fill); td.append(bar);
      } else td.textContent = c;
      if (k === 3) td.className = "num distinct";
      tr.append(td);
    });
    tbody.append(tr);
  }
}

function drawBest(d) {
  const box = document.getElementById("best");
  box.replaceChildren();
  for (const b of d.best) {
    const fig = document.createElement("figure"), cap = document.createElement("figcaption");
    if (b.picture) {
      const img = document.createElement("img");
      img.src = `/picture?run=${encodeURIComponent(d.id)}&query=${b.query}`;
      img.alt = b.object.length > 80 ? b.object.slice(0, 80) + "…" : b.object;
      img.title = b.object.length > 200 ? "" : b.object;
      if (d.task === "topology") img.className = "design";
      fig.append(img);
    } else {
      const code = document.createElement("code");
      code.textContent = b.object;
      fig.append(code);
    }
    cap.textContent = `${fmt(b.score)} (query ${b.query})`;
    fig.append(cap);
    box.append(fig);
  }
  if (!d.best.length) box.textContent = "no successful evaluation yet";
}

// drawAsks lists a manual run's objects awaiting their results (status's
// pending ids, the told ones left out), one row each.
function drawAsks(d) {
  const box = document.getElementById("asks-box"), tbody = document.querySelector("#asks tbody");
  box.hidden = !d.asks;
  tbody.replaceChildren();
  if (!d.asks) return;
  const a = d.asks;
  document.getElementById("asks-told").textContent = a.error ? a.error :
    `${a.pending.length} awaiting results` + (a.told ? `; ${a.told} told, journaled by the next ask` : "");
  for (const p of a.pending) {
    const tr = document.createElement("tr");
    tr.dataset.id = p.id;
    const obj = p.object.length > 120 ? p.object.slice(0, 120) + "…" : p.object;
    const age = p.age_s === null ? "not yet (the next ask)" : duration(p.age_s) + " ago";
    [String(p.id), obj, age, fmt(p.mean), fmt(p.sd)].forEach((c, k) => {
      const td = document.createElement("td");
      if (k === 1) { const code = document.createElement("code"); code.textContent = c; td.append(code); } else td.textContent = c;
      if (k !== 1 && k !== 2) td.className = "num";
      tr.append(td);
    });
    tbody.append(tr);
  }
}

function drawDetail(d) {
  drawAsks(d);
  drawBest(d);
  document.getElementById("torn").textContent = d.torn || "";
  const scores = d.map.filter(p => !p.failed && p.score !== null).map(p => p.score);
  const lo = Math.min(...scores), hi = Math.max(...scores);
  chart(document.getElementById("map"), {pad: true, xlabel: "PC 1", ylabel: "PC 2", dots: d.map.map(p => ({
    x: p.x, y: p.y, r: 3.5, color: p.failed ? "#bbb" : colour(hi > lo ? (p.score - lo) / (hi - lo) : 1),
    title: `query ${p.query}: ${p.failed ? "failed" : fmt(p.score)}`}))});
  chart(document.getElementById("gp-loglik"), {xlabel: "query", ylabel: "log-likelihood",
    lines: [{xy: d.gp.map(g => [g.query, g.loglik]), color: COLORS[0]}]});
  const lg = v => (v === null || v <= 0 ? null : Math.log10(v));
  chart(document.getElementById("gp-ls"), {xlabel: "query", ylabel: "log10", ylog: true, lines: [
    {xy: d.gp.map(g => [g.query, lg(g.ls_min)]), color: COLORS[2]},
    {xy: d.gp.map(g => [g.query, lg(g.ls_max)]), color: COLORS[2], dash: "4 3"},
    {xy: d.gp.map(g => [g.query, lg(g.noise)]), color: COLORS[1]}]});
  document.getElementById("tr-box").hidden = !d.tr.length;
  if (d.tr.length) chart(document.getElementById("tr"), {xlabel: "query", ylabel: "length", lines: [{xy: d.tr.map(t => [t.query, t.length]), color: COLORS[3]}]});
}

async function refreshRun() {
  const q = ids.map(id => "run=" + encodeURIComponent(id)).join("&") + (focus ? "&focus=" + encodeURIComponent(focus) : "");
  const status = document.getElementById("status"), err = document.getElementById("error");
  try {
    const view = await getJSON("/api/view?" + q);
    err.hidden = !view.error;
    err.textContent = view.error || "";
    if (view.groups) drawCurve(view);
    drawProgress(view);
    const sel = document.getElementById("focus");
    if (sel.options.length !== view.runs.length) {
      sel.replaceChildren(...view.runs.map(r => new Option(r.id, r.id)));
    }
    if (view.detail) { sel.value = view.detail.id; drawDetail(view.detail); }
    const total = view.runs.reduce((a, r) => a + r.distinct, 0);
    status.textContent = `updated ${new Date().toLocaleTimeString()} · ${total} distinct evaluations`;
    status.dataset.distinct = total;
  } catch (e) {
    status.textContent = "update failed: " + e.message;
  }
  setTimeout(refreshRun, poll);
}

function initRun() {
  document.getElementById("focus").addEventListener("change", e => { focus = e.target.value; });
  refreshRun();
}

if (document.body.dataset.page === "index") initIndex(); else initRun();
