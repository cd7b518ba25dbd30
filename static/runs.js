// Glue for the runs pages (no inline scripts: the page runs under script-src 'self').
// - the filter form starts again at page 1 whenever a filter changes;
// - a live refresh of the list marks the rows that were not there before;
// - the Run confirmation's Cancel button clears the panel;
// - a Replay column's "Plan from today's source" also picks that source in the step's form;
// - the header link of the current page is marked.
(function () {
  "use strict";

  function byId(id) { return document.getElementById(id); }

  // Capture phase: runs before htmx reads the form for the request that same change triggers.
  function resetPage(e) {
    var form = byId("run-filters"), page = byId("run-page");
    if (form && page && e.target !== page && form.contains(e.target)) { page.value = "1"; }
  }
  document.addEventListener("change", resetPage, true);
  document.addEventListener("input", resetPage, true);

  var seen = null;
  function rowIds() {
    var ids = new Set();
    document.querySelectorAll("#runs-list tr.run-row").forEach(function (tr) { ids.add(tr.dataset.id); });
    return ids;
  }
  document.addEventListener("htmx:beforeSwap", function (e) {
    if (e.detail.target && e.detail.target.id === "runs-list") { seen = rowIds(); }
  });
  document.addEventListener("htmx:afterSwap", function (e) {
    if (!seen || !byId("runs-list")) { return; }
    var from = e.detail.requestConfig && e.detail.requestConfig.elt;
    var live = !!(from && from.classList && from.classList.contains("live-hook"));
    document.querySelectorAll("#runs-list tr.run-row").forEach(function (tr) {
      if (live && !seen.has(tr.dataset.id)) { tr.classList.add("is-new"); }
    });
    seen = null;
  });

  document.addEventListener("click", function (e) {
    var t = e.target;
    if (!(t instanceof HTMLElement)) { return; }
    if (t.id === "run-confirm-no") {
      var out = byId("run-output");
      if (out) { out.innerHTML = ""; }
      return;
    }
    // "Plan from today's source" in a Replay column: the step's form says so too, for the next variant.
    if (t.classList.contains("replay-from-source")) {
      var panel = t.closest(".replay-panel");
      var current = panel && panel.querySelector("input[name=source][value=current]");
      if (current) { current.checked = true; }
      return;
    }
    // A click anywhere on a run's row (not on one of its links) opens the run.
    var row = t.closest("tr.run-row");
    if (row && !t.closest("a") && !(window.getSelection && String(window.getSelection()).length)) {
      var link = row.querySelector("a.run-link");
      if (link) { window.location.assign(link.href); }
    }
  });

  function markNav() {
    var onRuns = location.pathname === "/runs" || location.pathname.indexOf("/runs/") === 0;
    var link = byId(onRuns ? "nav-runs" : (location.pathname === "/" || location.pathname.indexOf("/prompts/") === 0 ? "nav-prompts" : ""));
    if (link) { link.setAttribute("aria-current", "page"); }
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", markNav); } else { markNav(); }
})();
