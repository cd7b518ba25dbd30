// Glue for the inspector page: keeps the budget slider and number in step, fills the custom-input
// editor, sizes the token bar, and shows the live-update state. Everything else is htmx attributes
// in the templates. The page's Content-Security-Policy allows no inline script or style and no
// eval: keep behaviour here (no hx-on, no js: values) and sizes in data attributes.
(function () {
  "use strict";

  function byId(id) { return document.getElementById(id); }

  // The token bar's segment widths and budget mark come as data-width / data-left (percent): set
  // through the CSS object model, which the policy allows, unlike style="" attributes.
  function sizeBars(root) {
    root.querySelectorAll("[data-width]").forEach(function (el) { el.style.width = el.dataset.width + "%"; });
    root.querySelectorAll("[data-left]").forEach(function (el) { el.style.left = el.dataset.left + "%"; });
  }
  htmx.onLoad(sizeBars);

  document.addEventListener("input", function (e) {
    var range = byId("budget-range"), number = byId("budget-number");
    if (e.target === range && number) { number.value = range.value; }
    if (e.target === number && range && number.value !== "") { range.value = number.value; }
  });

  document.addEventListener("click", function (e) {
    var t = e.target;
    if (!(t instanceof HTMLElement)) { return; }
    if (t.id === "budget-clear") {
      var number = byId("budget-number"), range = byId("budget-range");
      number.value = "";
      if (range) { range.value = range.max; }
      number.dispatchEvent(new Event("change", { bubbles: true }));
    } else if (t.id === "input-load") {
      var inputs = JSON.parse(byId("example-inputs").textContent || "{}");
      byId("input").value = inputs[byId("example").value] || "{}";
    } else if (t.id === "input-clear") {
      byId("input").value = "";
      htmx.trigger(byId("controls"), "submit");
    }
  });

  // The dot says whether updates arrive (data-state) and, beside it, whether the report on screen is
  // stale (data-report): "live" alone under a "Stale report" banner would say all is well.
  var liveText = "connecting";
  function showLive() {
    var el = byId("live-status");
    if (!el) { return; }
    var stale = !!document.querySelector(".banner-stale");
    el.dataset.report = stale ? "stale" : "current";
    el.querySelector(".live-text").textContent = stale ? liveText + " · stale report" : liveText;
  }
  function setLive(state, text) {
    var el = byId("live-status");
    if (!el) { return; }
    el.dataset.state = state;
    liveText = text;
    showLive();
  }
  document.addEventListener("htmx:afterSettle", showLive);
  document.addEventListener("DOMContentLoaded", showLive);

  document.addEventListener("htmx:sseOpen", function () { setLive("live", "live"); });
  document.addEventListener("htmx:sseError", function () { setLive("down", "reconnecting…"); });
  document.addEventListener("htmx:sseMessage", function (e) {
    var kind = e.detail && e.detail.type;
    if (kind === "loading") { setLive("busy", "reloading…"); }
    else if (kind === "report") { setLive("live", "updated"); }
    else if (kind === "error") { setLive("down", "load failed"); }
  });
})();
