// sparkops analyze report: draws the inline data (script#sparkops-data) with uPlot. Every chart shares
// one x range, one cursor and one zoom; time labels are UTC (or UTC plus the offset the report was
// made with). When done it sets document.title to "rendered:ok" (or "rendered:error") and writes
// #render-status with data-charts, data-nonempty (canvases holding drawn pixels), data-errors,
// data-shared-range (1 when every chart shows the same x range) and data-empty-legends (legend
// values still reading "--"), so a headless browser test can check the page without a pixel diff.
(function () {
  "use strict";
  var errors = 0;
  window.addEventListener("error", function () { errors++; });
  var origError = console.error;
  console.error = function () { errors++; origError.apply(console, arguments); };

  var page = JSON.parse(document.getElementById("sparkops-data").textContent);
  var s = page.summary, c = page.charts;
  var offsetSec = (c.utc_offset_minutes || 0) * 60;
  var zoneName = zoneLabel(c.utc_offset_minutes || 0);
  var bandColor = { thermal: "rgba(230,120,30,0.22)", contention: "rgba(120,70,190,0.20)",
                    unexplained: "rgba(120,120,120,0.18)" };
  var throttleColor = "rgba(214,39,40,0.13)";
  var pauseColor = { eval: "#2b7bb9", checkpoint: "#2a9d5b", restart: "#c0392b", stall: "#7f8c8d" };

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function zoneLabel(min) {
    if (min === 0) return "UTC";
    var a = Math.abs(min);
    return "UTC" + (min < 0 ? "-" : "+") + pad(Math.floor(a / 60)) + ":" + pad(a % 60);
  }
  // Epoch seconds -> "YYYY-MM-DD HH:MM:SS" in the report's zone.
  function fmtTime(x) {
    if (x === null || x === undefined) return "-";
    if (!c.x_is_time) return "step " + x;
    var d = new Date((x + offsetSec) * 1000);
    return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + " " +
      pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" + pad(d.getUTCSeconds());
  }
  // uPlot draws time axes in the browser's zone unless told otherwise: shift into the chosen zone.
  function tzDate(ts) { return uPlot.tzDate(new Date((ts + offsetSec) * 1000), "Etc/UTC"); }
  // 24-hour tick labels in the report's zone; the date is added where it changes.
  function timeTicks(u, splits) {
    var span = splits.length > 1 ? splits[splits.length - 1] - splits[0] : 0;
    var lastDay = null;
    return splits.map(function (v) {
      var d = new Date((v + offsetSec) * 1000);
      var hm = pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) +
        (span < 600 ? ":" + pad(d.getUTCSeconds()) : "");
      var day = d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate());
      var label = day !== lastDay ? hm + "\n" + day : hm;
      lastDay = day;
      return label;
    });
  }
  function num(v, digits) { return v === null || v === undefined ? "-" : Number(v).toFixed(digits); }

  // Summary.
  var sum = document.getElementById("summary");
  sum.appendChild(el("h2", {}, "Summary"));
  var t = el("table", { "class": "kv" });
  function row(k, v) { var r = el("tr"); r.appendChild(el("td", {}, k)); r.appendChild(el("td", {}, v)); t.appendChild(r); }
  row("format", s.format);
  row("steps", s.steps + (s.first_step !== null ? " (step " + s.first_step + " to " + s.last_step + ")" : ""));
  row("baseline", s.baseline_step_seconds !== null ? s.baseline_step_seconds + " s/step" : "n/a");
  row("median", s.median_step_seconds !== null ? s.median_step_seconds + " s/step" : "n/a");
  row("times", s.time_basis + (s.times_approximate ? " (approximate)" : "") +
      (c.x_is_time ? ", labelled in " + zoneName : ""));
  row("slowdowns", String(s.slowdowns.length));
  row("pauses and stalls", String(s.pauses.length));
  row("throttle episodes", String(c.throttle.length));
  sum.appendChild(t);
  (s.notes || []).forEach(function (n) { sum.appendChild(el("p", { "class": "note" }, n)); });

  // The key: every colour and mark the charts use.
  var key = document.getElementById("key");
  var keyBox = el("div", { id: "event-key", "class": "key" });
  function keyItem(color, text, mark) {
    var item = el("span", { "class": "key-item" });
    item.appendChild(el("span", { "class": mark ? "key-mark" : "key-band", style: "background:" + color }));
    item.appendChild(document.createTextNode(text));
    keyBox.appendChild(item);
  }
  keyItem(bandColor.thermal, "slowdown: thermal");
  keyItem(bandColor.contention, "slowdown: contention");
  keyItem(bandColor.unexplained, "slowdown: unexplained");
  keyItem(throttleColor, "GPU throttling (reason counters or bits)");
  keyItem(pauseColor.eval, "evaluation", true);
  keyItem(pauseColor.checkpoint, "checkpoint save", true);
  keyItem(pauseColor.restart, "restart / resume", true);
  keyItem(pauseColor.stall, "stall", true);
  key.appendChild(keyBox);

  // Bands and marks, drawn under the series of every chart.
  function band(u, from, to, color) {
    var x0 = u.valToPos(from, "x", true), x1 = u.valToPos(to, "x", true);
    u.ctx.fillStyle = color;
    u.ctx.fillRect(Math.min(x0, x1), u.bbox.top, Math.max(2, Math.abs(x1 - x0)), u.bbox.height);
  }
  function shade(u) {
    u.ctx.save();
    c.throttle.forEach(function (b) { band(u, b.from, b.to, throttleColor); });
    c.slowdowns.forEach(function (b) { band(u, b.from, b.to, bandColor[b.cause] || bandColor.unexplained); });
    c.pauses.forEach(function (p) {
      var x = u.valToPos(p.at, "x", true);
      u.ctx.fillStyle = pauseColor[p.kind] || "#888";
      u.ctx.fillRect(x - 1, u.bbox.top, 2, u.bbox.height);
    });
    u.ctx.restore();
  }

  // Legends show the last reading until the cursor is over a chart, never "--".
  function lastIndex(u) {
    var xs = u.data[0];
    return xs.length ? xs.length - 1 : null;
  }
  function showLast(u) { var i = lastIndex(u); if (i !== null) u.setLegend({ idx: i }, false); }

  var charts = [];
  var syncing = false;
  function syncScale(u, key) {
    if (key !== "x" || syncing) return;
    syncing = true;
    var sc = u.scales.x;
    charts.forEach(function (o) { if (o !== u) o.setScale("x", { min: sc.min, max: sc.max }); });
    syncing = false;
  }
  var width = Math.max(600, Math.min(1400, document.body.clientWidth - 48));
  var sync = uPlot.sync("sparkops");
  function chart(title, xs, ys, label, color, extra) {
    var present = ys.some(function (v) { return v !== null; });
    if (!present || xs.length === 0) return;
    var box = el("div", { "class": "chart" });
    box.appendChild(el("h3", {}, title));
    document.getElementById("charts").appendChild(box);
    var series = [{ label: c.x_is_time ? "time (" + zoneName + ")" : "step",
                    value: function (u, v) { return v === null ? "-" : fmtTime(v); } },
                  { label: label, stroke: color, width: 1.5, spanGaps: false }];
    var data = [xs, ys];
    if (extra) { series.push(extra.series); data.push(extra.values); }
    var opts = {
      width: width, height: 170,
      tzDate: tzDate,
      scales: { x: { time: c.x_is_time } },
      series: series,
      cursor: { sync: { key: sync.key, setSeries: false } },
      hooks: { drawClear: [shade], ready: [showLast], setScale: [syncScale],
               setCursor: [function (u) { if (u.cursor.idx === null || u.cursor.idx === undefined) showLast(u); }] },
      axes: [c.x_is_time ? { label: zoneName, values: timeTicks } : { label: "step" }, { size: 60 }]
    };
    charts.push(new uPlot(opts, data, box));
  }

  var baselineLine = c.baseline !== null ? {
    series: { label: "baseline", stroke: "#999", dash: [4, 4], width: 1, points: { show: false } },
    values: c.step_x.map(function () { return c.baseline; })
  } : null;
  chart("Step time (s/step)", c.step_x, c.step_seconds, "s/step", "#1f77b4", baselineLine);
  chart("Training loss", c.step_x, c.loss, "loss", "#17becf");
  chart("GPU temperature (C)", c.thermal_x, c.gpu_temp_c, "C", "#d62728");
  chart("GPU power (W)", c.thermal_x, c.power_w, "W", "#ff7f0e");
  chart("SM clock (MHz)", c.thermal_x, c.sm_clock_mhz, "MHz", "#2ca02c");
  chart("Available memory (GiB)", c.thermal_x, c.mem_available_gib, "GiB", "#9467bd");
  if (c.thermal_x.length === 0) {
    document.getElementById("charts").appendChild(el("p", { "class": "note" },
      c.x_is_time ? "No thermal samples given." : "The log has no wall times: thermal samples cannot be placed on its axis."));
  }
  // One range for all: the union of the log's and the samples' extent.
  if (c.x_range) charts.forEach(function (u) { u.setScale("x", { min: c.x_range[0], max: c.x_range[1] }); });

  // The event table: slowdowns, stalls, pauses and throttle episodes with their evidence.
  var ev = document.getElementById("events");
  ev.appendChild(el("h2", {}, "Events"));
  var rows = [];
  s.slowdowns.forEach(function (d) {
    var evidence = Object.keys(d.evidence || {}).map(function (k) { return k + "=" + d.evidence[k]; }).join(", ");
    rows.push({ order: d.start_time ? Date.parse(d.start_time) / 1000 : d.start, cells: [
      "slowdown (" + d.cause + ")", "steps " + d.start + "-" + d.end, fmtTime(d.start_time ? Date.parse(d.start_time) / 1000 : null),
      num(d.ratio, 2) + "x" + (d.doubled ? " (doubled)" : ""),
      d.explanation + (evidence ? " [" + evidence + "; confidence " + d.confidence + "]" : "")] });
  });
  s.pauses.forEach(function (p) {
    rows.push({ order: p.time ? Date.parse(p.time) / 1000 : p.step, cells: [
      p.kind, p.step !== null ? "after step " + p.step : "-", fmtTime(p.time ? Date.parse(p.time) / 1000 : null),
      p.duration_seconds !== null ? num(p.duration_seconds, 1) + " s" : "-", p.detail || ""] });
  });
  c.throttle.forEach(function (b) {
    rows.push({ order: b.from, cells: [
      "GPU throttling", "-", fmtTime(b.from), num(b.to - b.from, 0) + " s", b.label] });
  });
  rows.sort(function (a, b) { return (a.order === null ? Infinity : a.order) - (b.order === null ? Infinity : b.order); });
  var table = el("table", { id: "event-table", "class": "events" });
  var head = el("tr");
  ["event", "steps", "start (" + (c.x_is_time ? zoneName : "UTC") + ")", "size", "evidence"].forEach(function (h) {
    head.appendChild(el("th", {}, h));
  });
  table.appendChild(head);
  rows.forEach(function (r) {
    var tr = el("tr");
    r.cells.forEach(function (cell) { tr.appendChild(el("td", {}, cell)); });
    table.appendChild(tr);
  });
  if (rows.length === 0) ev.appendChild(el("p", { "class": "note" }, "No slowdowns, stalls, pauses or throttle episodes."));
  else ev.appendChild(table);

  // Status for headless checks.
  function finish() {
    var nonEmpty = 0, shared = 1, dashes = 0;
    charts.forEach(function (u) {
      var cv = u.root.querySelector("canvas");
      try {
        var px = cv.getContext("2d").getImageData(0, 0, cv.width, cv.height).data;
        for (var i = 3; i < px.length; i += 4) { if (px[i] !== 0) { nonEmpty++; break; } }
      } catch (e) { errors++; }
      if (charts[0].scales.x.min !== u.scales.x.min || charts[0].scales.x.max !== u.scales.x.max) shared = 0;
      u.root.querySelectorAll(".u-value").forEach(function (v) { if (v.textContent === "--") dashes++; });
    });
    var st = el("div", { id: "render-status", "data-charts": String(charts.length),
      "data-nonempty": String(nonEmpty), "data-errors": String(errors), "data-shared-range": String(shared),
      "data-empty-legends": String(dashes), "data-event-rows": String(rows.length), hidden: "hidden" });
    document.body.appendChild(st);
    document.title = (errors === 0 && charts.length > 0 && nonEmpty === charts.length) ? "rendered:ok" : "rendered:error";
  }
  setTimeout(finish, 100);
})();
