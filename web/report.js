// sparkops analyze report: draws the inline data (script#sparkops-data) with uPlot. When done it
// sets document.title to "rendered:ok" (or "rendered:error") and writes #render-status with
// data-charts, data-nonempty (canvases holding drawn pixels) and data-errors, so a headless browser
// test can check the page without a screenshot diff.
(function () {
  "use strict";
  var errors = 0;
  window.addEventListener("error", function () { errors++; });
  var origError = console.error;
  console.error = function () { errors++; origError.apply(console, arguments); };

  var page = JSON.parse(document.getElementById("sparkops-data").textContent);
  var s = page.summary, c = page.charts;
  var bandColor = { thermal: "rgba(230,120,30,0.22)", contention: "rgba(120,70,190,0.20)", unexplained: "rgba(120,120,120,0.18)" };
  var pauseColor = { eval: "#2b7bb9", checkpoint: "#2a9d5b", restart: "#c0392b", stall: "#7f8c8d" };

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmtTime(x) {
    if (!c.x_is_time) return "step " + x;
    return new Date(x * 1000).toISOString().replace("T", " ").replace(".000Z", "Z");
  }

  // Summary table and event list.
  var sum = document.getElementById("summary");
  sum.appendChild(el("h2", {}, "Summary"));
  var t = el("table", { "class": "kv" });
  function row(k, v) { var r = el("tr"); r.appendChild(el("td", {}, k)); r.appendChild(el("td", {}, v)); t.appendChild(r); }
  row("format", s.format);
  row("steps", s.steps + (s.first_step !== null ? " (step " + s.first_step + " to " + s.last_step + ")" : ""));
  row("baseline", s.baseline_step_seconds !== null ? s.baseline_step_seconds + " s/step" : "n/a");
  row("median", s.median_step_seconds !== null ? s.median_step_seconds + " s/step" : "n/a");
  row("times", s.time_basis + (s.times_approximate ? " (approximate)" : ""));
  row("slowdowns", String(s.slowdowns.length));
  row("pauses", String(s.pauses.length));
  sum.appendChild(t);
  (s.notes || []).forEach(function (n) { sum.appendChild(el("p", { "class": "note" }, n)); });

  var ev = document.getElementById("events");
  ev.appendChild(el("h2", {}, "Events"));
  var ul = el("ul", { "class": "events" });
  s.slowdowns.forEach(function (d) {
    ul.appendChild(el("li", { "class": "cause-" + d.cause },
      "slowdown steps " + d.start + "-" + d.end + ": " + d.ratio + "x" + (d.doubled ? " (doubled)" : "") +
      ", " + d.cause + " (confidence " + d.confidence + "): " + d.explanation));
  });
  s.pauses.forEach(function (p) {
    ul.appendChild(el("li", {}, p.kind + " after step " + p.step +
      (p.duration_seconds !== null ? " (" + p.duration_seconds + " s)" : "")));
  });
  ev.appendChild(ul);

  // Shading for slowdowns and pauses, drawn under the series.
  function shade(u) {
    var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
    ctx.save();
    c.slowdowns.forEach(function (b) {
      var x0 = u.valToPos(b.from, "x", true), x1 = u.valToPos(b.to, "x", true);
      ctx.fillStyle = bandColor[b.cause] || bandColor.unexplained;
      ctx.fillRect(Math.min(x0, x1), top, Math.max(2, Math.abs(x1 - x0)), h);
    });
    c.pauses.forEach(function (p) {
      var x = u.valToPos(p.at, "x", true);
      ctx.fillStyle = pauseColor[p.kind] || "#888";
      ctx.fillRect(x - 1, top, 2, h);
    });
    ctx.restore();
  }

  var charts = [];
  var width = Math.max(600, Math.min(1400, document.body.clientWidth - 48));
  var sync = uPlot.sync("sparkops");
  function chart(title, xs, ys, label, color, extra) {
    var present = ys.some(function (v) { return v !== null; });
    if (!present || xs.length === 0) return;
    var box = el("div", { "class": "chart" });
    box.appendChild(el("h3", {}, title));
    document.getElementById("charts").appendChild(box);
    var series = [{ value: function (u, v) { return v === null ? "-" : fmtTime(v); } },
                  { label: label, stroke: color, width: 1.5, spanGaps: false }];
    var data = [xs, ys];
    if (extra) { series.push(extra.series); data.push(extra.values); }
    var opts = {
      width: width, height: 170,
      scales: { x: { time: c.x_is_time } },
      series: series,
      cursor: { sync: { key: sync.key } },
      hooks: { drawClear: [shade] },
      axes: [{}, { size: 60 }]
    };
    charts.push(new uPlot(opts, data, box));
  }

  var baselineLine = c.baseline !== null ? {
    series: { label: "baseline", stroke: "#999", dash: [4, 4], width: 1, points: { show: false } },
    values: c.step_x.map(function () { return c.baseline; })
  } : null;
  chart("Step time (s/step)", c.step_x, c.step_seconds, "s/step", "#1f77b4", baselineLine);
  chart("GPU temperature (C)", c.thermal_x, c.gpu_temp_c, "C", "#d62728");
  chart("GPU power (W)", c.thermal_x, c.power_w, "W", "#ff7f0e");
  chart("SM clock (MHz)", c.thermal_x, c.sm_clock_mhz, "MHz", "#2ca02c");
  chart("Available memory (GiB)", c.thermal_x, c.mem_available_gib, "GiB", "#9467bd");
  if (c.thermal_x.length === 0) {
    document.getElementById("charts").appendChild(el("p", { "class": "note" },
      c.x_is_time ? "No thermal samples given." : "The log has no wall times: thermal samples cannot be placed on its axis."));
  }

  // Status for headless checks: a canvas counts as drawn when it holds non-transparent pixels.
  function finish() {
    var nonEmpty = 0;
    charts.forEach(function (u) {
      var cv = u.root.querySelector("canvas");
      try {
        var px = cv.getContext("2d").getImageData(0, 0, cv.width, cv.height).data;
        for (var i = 3; i < px.length; i += 4) { if (px[i] !== 0) { nonEmpty++; break; } }
      } catch (e) { errors++; }
    });
    var st = el("div", { id: "render-status", "data-charts": String(charts.length),
      "data-nonempty": String(nonEmpty), "data-errors": String(errors), hidden: "hidden" });
    document.body.appendChild(st);
    document.title = (errors === 0 && charts.length > 0 && nonEmpty === charts.length) ? "rendered:ok" : "rendered:error";
  }
  setTimeout(finish, 100);
})();
