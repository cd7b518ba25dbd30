// Glue for the prompt list (no inline scripts: the page runs under script-src 'self').
// - "/" anywhere but in a text field focuses the search box; Escape in it clears it, then blurs it;
// - "Clear the filter" also empties the search box (it lives outside the swapped list);
// - a file's group closed by hand stays closed across live updates (sessionStorage), unless the
//   list is filtered (then every group with a match is shown open);
// - "expand all" / "collapse all" (shown only with script);
// - a search or filter typed while scrolled down shows its first matches (back to the top).
// The search itself is a plain GET form that htmx submits as one types (templates/index.html).
(function () {
  "use strict";

  var KEY = "crux-devtools:closed-groups";

  function byId(id) { return document.getElementById(id); }

  function typingIn(el) {
    if (!(el instanceof HTMLElement)) { return false; }
    return el.isContentEditable || el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT";
  }

  function runSearch(box) {
    box.dispatchEvent(new Event("input", { bubbles: true }));
  }

  document.addEventListener("keydown", function (e) {
    var box = byId("list-q");
    if (!box) { return; }
    if (e.key === "/" && !e.ctrlKey && !e.metaKey && !e.altKey && !typingIn(e.target)) {
      e.preventDefault();
      box.focus();
      box.select();
    } else if (e.key === "Escape" && e.target === box) {
      e.preventDefault();
      if (box.value !== "") {
        box.value = "";
        runSearch(box);
      } else {
        box.blur();
      }
    }
  });

  function closedGroups() {
    try { return new Set(JSON.parse(sessionStorage.getItem(KEY) || "[]")); } catch (err) { return new Set(); }
  }

  function saveClosed(set) {
    try { sessionStorage.setItem(KEY, JSON.stringify(Array.from(set))); } catch (err) { /* storage off: not kept */ }
  }

  function filtered() {
    var listing = byId("listing");
    return !!listing && listing.dataset.filtered === "1";
  }

  function groups() { return document.querySelectorAll("#listing details.group"); }

  document.addEventListener("click", function (e) {
    var t = e.target;
    if (!(t instanceof Element)) { return; }
    if (t.closest("#list-clear")) {
      var box = byId("list-q");
      if (box) { box.value = ""; }
      return;
    }
    var summary = t.closest("#listing details.group > summary");
    if (summary && !filtered()) {  // the click is about to toggle it: remember the new state
      var set = closedGroups(), details = summary.parentElement, name = details.dataset.group;
      if (details.open) { set.add(name); } else { set.delete(name); }
      saveClosed(set);
      return;
    }
    if (t.id === "groups-open" || t.id === "groups-close") {
      var open = t.id === "groups-open", all = closedGroups();
      groups().forEach(function (d) {
        d.open = open;
        if (open) { all.delete(d.dataset.group); } else { all.add(d.dataset.group); }
      });
      if (!filtered()) { saveClosed(all); }
    }
  });

  // A new search or filter shows its first matches: back to the top when the list was scrolled past
  // (a live update keeps the scroll, as everywhere else).
  document.addEventListener("htmx:afterSwap", function (e) {
    var listing = byId("listing"), from = e.detail.requestConfig && e.detail.requestConfig.elt;
    if (!listing || !e.detail.target || e.detail.target.id !== "listing") { return; }
    if (from && from.classList && from.classList.contains("live-hook")) { return; }
    if (listing.getBoundingClientRect().top < 0) { window.scrollTo(0, 0); }
  });

  // On every (re)render of the list: close what was closed by hand, show the group toggles.
  htmx.onLoad(function (root) {
    var listing = root.id === "listing" ? root : root.querySelector && root.querySelector("#listing");
    if (!listing) { return; }
    var toggles = listing.querySelector(".group-toggles");
    if (toggles) { toggles.hidden = false; }
    if (filtered()) { return; }
    var set = closedGroups();
    if (!set.size) { return; }
    listing.querySelectorAll("details.group").forEach(function (d) {
      if (set.has(d.dataset.group)) { d.open = false; }
    });
  });
})();
