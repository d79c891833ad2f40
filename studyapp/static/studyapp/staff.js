// Staff dashboard: refresh the figures and tables of a study page without reloading it.
// The page names the fragment's address and the interval in data- attributes of #live
// (no inline script: the Content-Security-Policy forbids it). A failed request keeps the old figures.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !window.fetch) { return; }
  var url = live.getAttribute("data-refresh-url");
  var seconds = parseInt(live.getAttribute("data-refresh-seconds"), 10) || 15;

  function refresh() {
    if (document.hidden) { return; }
    fetch(url, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.text();
      })
      .then(function (html) {
        var open = Array.prototype.map.call(live.querySelectorAll("details[open]"), function (d) { return d.querySelector("summary").textContent; });
        live.innerHTML = html;
        live.querySelectorAll("details").forEach(function (d) {
          if (open.indexOf(d.querySelector("summary").textContent) >= 0) { d.open = true; }
        });
        live.setAttribute("data-refreshed", String(Date.now()));
      })
      .catch(function () { live.setAttribute("data-refresh-failed", String(Date.now())); });
  }

  window.setInterval(refresh, seconds * 1000);
})();
