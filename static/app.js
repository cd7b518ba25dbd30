// Glue for the inspector page: keeps the budget slider and number in step, fills the custom-input
// editor, and shows the live-update state. Everything else is htmx attributes in the templates.
(function () {
  "use strict";

  function byId(id) { return document.getElementById(id); }

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

  function setLive(state, text) {
    var el = byId("live-status");
    if (!el) { return; }
    el.dataset.state = state;
    el.querySelector(".live-text").textContent = text;
  }

  document.addEventListener("htmx:sseOpen", function () { setLive("live", "live"); });
  document.addEventListener("htmx:sseError", function () { setLive("down", "reconnecting…"); });
  document.addEventListener("htmx:sseMessage", function (e) {
    var kind = e.detail && e.detail.type;
    if (kind === "loading") { setLive("busy", "reloading…"); }
    else if (kind === "report") { setLive("live", "updated"); }
    else if (kind === "error") { setLive("down", "load failed"); }
  });
})();
