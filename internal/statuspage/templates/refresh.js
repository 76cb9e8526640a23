(function () {
  "use strict";
  var main = document.getElementById("main");
  if (!main || !window.fetch) { return; }
  var url = main.getAttribute("data-json") + window.location.search;
  var labels = JSON.parse(main.getAttribute("data-labels") || "{}");
  var shown = main.getAttribute("data-incidents") || "";
  var windows = document.querySelectorAll(".window").length;
  function pct(v) { return v === null || v === undefined ? "no data" : v.toFixed(2) + "%"; }
  function setState(el, state, text) {
    el.className = el.className.replace(/\bs-[a-z_]+\b/g, "").trim() + " s-" + state;
    el.setAttribute("data-state", state);
    el.textContent = text;
  }
  function apply(doc) {
    var overall = document.getElementById("overall");
    if (overall && overall.getAttribute("data-state") !== doc.status) {
      overall.className = "banner s-" + doc.status;
      overall.setAttribute("data-state", doc.status);
      document.getElementById("overall-text").textContent = labels.overall[doc.status] || doc.status;
    }
    (doc.sections || []).forEach(function (s) {
      (s.monitors || []).forEach(function (m) {
        var li = document.querySelector('[data-monitor="' + m.id + '"]');
        if (!li) { return; }
        var st = li.querySelector(".state");
        if (st && st.getAttribute("data-state") !== m.status) {
          setState(st, m.status, labels.monitor[m.status] || m.status);
        }
        var u = li.querySelector(".u24");
        if (u) { u.textContent = pct(m.uptime_24h); }
        var rt = li.querySelector(".rt-last");
        if (rt && m.response_time_ms !== undefined && m.response_time_ms !== null) { rt.textContent = m.response_time_ms + " ms"; }
      });
    });
    var ids = (doc.active_incidents || []).map(function (i) { return i.id; }).join(",");
    if (ids !== shown || (doc.maintenance || []).length !== windows) {
      document.getElementById("stale").hidden = false;
    }
    var t = document.getElementById("updated");
    if (t && doc.updated_at) {
      t.setAttribute("datetime", doc.updated_at);
      t.textContent = doc.updated_at.replace("T", " ").replace(/:\d\d(\.\d+)?Z$/, " UTC");
    }
  }
  function refresh() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (doc) { if (doc) { apply(doc); } })
      .catch(function () {});
  }
  window.setInterval(refresh, 60000);
})();
