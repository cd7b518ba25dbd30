// Marks each prompt of the list whose requests differ from the base revision (no inline scripts:
// the page runs under script-src 'self'). The list header's badge (templates/_diff_summary.html,
// refetched on every report) carries the changed prompt ids in data-ids; after any swap (the
// badge's or the list's, in either order) each row of the list gets, or loses, a small "changed"
// link to that prompt on the Changes page.
(function () {
  "use strict";

  function mark() {
    var badge = document.getElementById("diff-badge");
    var ids = [];
    if (badge) {
      try { ids = JSON.parse(badge.getAttribute("data-ids") || "[]"); } catch (e) { ids = []; }
    }
    var changed = new Set(ids);
    var base = badge ? badge.getAttribute("data-base") || "HEAD" : "HEAD";
    document.querySelectorAll("tr.prompt-row").forEach(function (row) {
      var id = row.getAttribute("data-id");
      var old = row.querySelector(".diff-mark");
      if (!changed.has(id)) {
        if (old) { old.remove(); }
        return;
      }
      var href = "/diff?base=" + encodeURIComponent(base) + "#diff-" + encodeURIComponent(id);
      if (old && old.getAttribute("href") === href) { return; }
      if (old) { old.remove(); }
      var link = document.createElement("a");
      link.className = "diff-mark tag tag-changed";
      link.href = href;
      link.textContent = "changed";
      link.title = "its requests differ from " + base + ": see what changed";
      var cell = row.querySelector("td");
      if (cell) { cell.appendChild(document.createTextNode(" ")); cell.appendChild(link); }
    });
  }

  document.addEventListener("htmx:afterSettle", mark);
  document.addEventListener("DOMContentLoaded", mark);
})();
