// sparkops live dashboard: polls /api/history (same origin, no external requests) and draws it with
// the uPlot inlined in this page, and /api/status for the throttle state, PROCHOT, the workloads
// table and (from /api/history) the recent events. With `serve --token`, open the page as /#token=... : the
// fragment never leaves the browser, and the API calls carry it as `Authorization: Bearer`.
// A ?token=... (accepted only with `serve --allow-query-token`) is passed on as a query too.
(function () {
  "use strict";
  var hashToken = new URLSearchParams(window.location.hash.replace(/^#/, "")).get("token");
  var queryToken = new URLSearchParams(window.location.search).get("token");
  var token = hashToken || queryToken;
  var suffix = queryToken ? "?token=" + encodeURIComponent(queryToken) : "";
  var fetchOptions = { cache: "no-store", headers: token ? { Authorization: "Bearer " + token } : {} };
  ["l-history", "l-metrics", "l-status"].forEach(function (id) {
    var a = document.getElementById(id);
    a.href = a.getAttribute("href") + suffix;
  });

  var GiB = 1024 * 1024 * 1024;
  var charts = {};
  var intervalMs = 5000;

  function scale(col, f) {
    return col.map(function (v) { return v === null ? null : v * f; });
  }
  function width() { return Math.max(320, Math.min(1060, document.body.clientWidth - 40)); }
  function fmt(v, digits, unit) { return v === null || v === undefined ? "–" : v.toFixed(digits) + " " + unit; }
  function last(col) {
    for (var i = col.length - 1; i >= 0; i--) if (col[i] !== null) return col[i];
    return null;
  }

  function chart(id, series, data) {
    if (charts[id]) { charts[id].setData(data); return; }
    var opts = { width: width(), height: 220, series: [{}].concat(series), scales: { x: { time: true } },
                 legend: { live: true } };
    charts[id] = new uPlot(opts, data, document.getElementById(id));
  }

  function render(h) {
    var s = h.series, t = h.time;
    intervalMs = Math.max(1000, (h.interval_seconds || 5) * 1000);
    chart("c-temp", [
      { label: "GPU", stroke: "#d1242f", width: 2 },
      { label: "hottest host sensor", stroke: "#8250df", width: 1 }
    ], [t, s.gpu_temperature_celsius, s.host_hottest_celsius]);
    chart("c-power", [
      { label: "GPU power W", stroke: "#0969da", width: 2 },
      { label: "utilisation %", stroke: "#1a7f37", width: 1 }
    ], [t, s.gpu_power_watts, scale(s.gpu_utilization_ratio, 100)]);
    chart("c-pool", [
      { label: "available", stroke: "#1a7f37", width: 2 },
      { label: "free now", stroke: "#0969da", width: 1 },
      { label: "budget", stroke: "#bf8700", width: 1 },
      { label: "workloads", stroke: "#d1242f", width: 1 }
    ], [t, scale(s.pool_available_bytes, 1 / GiB), scale(s.pool_free_bytes, 1 / GiB),
        scale(s.pool_budget_bytes, 1 / GiB), scale(s.workloads_actual_bytes, 1 / GiB)]);

    document.getElementById("t-temp").textContent = fmt(last(s.gpu_temperature_celsius), 0, "°C");
    document.getElementById("t-power").textContent = fmt(last(s.gpu_power_watts), 1, "W");
    var clk = last(s.gpu_sm_clock_hertz);
    document.getElementById("t-clock").textContent = fmt(clk === null ? null : clk / 1e6, 0, "MHz");
    var av = last(s.pool_available_bytes), bu = last(s.pool_budget_bytes);
    document.getElementById("t-avail").textContent = fmt(av === null ? null : av / GiB, 1, "GiB");
    document.getElementById("t-budget").textContent = fmt(bu === null ? null : bu / GiB, 1, "GiB");
    var psi = last(s.memory_pressure_some_avg10_ratio);
    document.getElementById("t-psi").textContent = fmt(psi === null ? null : psi * 100, 2, "%");
    var state = document.getElementById("state");
    if (t.length) {
      state.textContent = t.length + " readings, last at " + new Date(t[t.length - 1] * 1000).toISOString();
      state.className = "muted";
      document.body.setAttribute("data-points", String(t.length));
    }
  }

  function text(id, v) { document.getElementById(id).textContent = v; }
  function gib(v) { return v === null || v === undefined ? "–" : (v / GiB).toFixed(1) + " GiB"; }

  // Throttle state, PROCHOT and the workloads table come from /api/status (the `status --json`
  // document); every value is set with textContent, never parsed as HTML.
  function renderStatus(st) {
    if (!st) return;
    if (st.machine && st.machine.hostname) text("host", st.machine.hostname);
    var dev = st.gpu && st.gpu.devices && st.gpu.devices.length ? st.gpu.devices[0] : null;
    var reasons = dev && dev.clocks_event_reason_names ? dev.clocks_event_reason_names : null;
    text("t-throttle", st.gpu && st.gpu.state !== "ok" ? "GPU " + st.gpu.state :
      reasons === null ? "–" : (reasons.length ? reasons.join(", ") : "none"));
    var prochot = st.thermals ? st.thermals.spbm_prochot : null;
    text("t-prochot", prochot === null || prochot === undefined ? "not reported" : (prochot ? "ACTIVE" : "clear"));
    text("coexistence", st.coexistence || "no workload verdict");
    var body = document.querySelector("#workload-table tbody");
    while (body.firstChild) body.removeChild(body.firstChild);
    (st.workloads || []).forEach(function (w) {
      var tr = document.createElement("tr");
      [String(w.pid), w.kind, w.name, gib(w.claim_bytes), gib(w.actual_bytes), w.heavy ? "heavy" : ""]
        .forEach(function (v) { var td = document.createElement("td"); td.textContent = v; tr.appendChild(td); });
      if (w.heavy) tr.className = "heavy";
      body.appendChild(tr);
    });
    document.body.setAttribute("data-workloads", String((st.workloads || []).length));
  }

  function renderEvents(events) {
    var ul = document.getElementById("event-list");
    if (!events || !events.length) return;
    while (ul.firstChild) ul.removeChild(ul.firstChild);
    events.slice().reverse().forEach(function (e) {
      var li = document.createElement("li");
      li.className = "ev-" + e.kind;
      li.textContent = new Date(e.time * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z") +
        "  " + e.kind + "  " + e.detail;
      ul.appendChild(li);
    });
    document.body.setAttribute("data-events", String(events.length));
  }

  function poll() {
    fetch("api/history" + suffix, fetchOptions)
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(function (h) { render(h); renderEvents(h.events); })
      .catch(function (e) {
        var state = document.getElementById("state");
        state.textContent = "exporter unreachable: " + e.message;
        state.className = "stale";
      })
      .then(function () {
        return fetch("api/status" + suffix, fetchOptions)
          .then(function (r) { return r.ok ? r.json() : null; })
          .then(renderStatus)
          .catch(function () {});
      })
      .then(function () { window.setTimeout(poll, intervalMs); });
  }

  window.addEventListener("resize", function () {
    Object.keys(charts).forEach(function (k) { charts[k].setSize({ width: width(), height: 220 }); });
  });
  poll();
})();
