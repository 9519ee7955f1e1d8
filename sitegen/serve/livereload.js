// sitegen serve: reload the page after a good rebuild; show the error after a failed one.
(function () {
  "use strict";
  var generation = -1;
  var error = "";
  var banner = null;

  function show(message) {
    if (!banner) {
      banner = document.createElement("pre");
      banner.id = "sitegen-build-error";
      banner.setAttribute("role", "alert");
      document.body.insertBefore(banner, document.body.firstChild);
    }
    banner.textContent = "sitegen: the last rebuild failed; showing the last good site.\n\n" + message;
  }

  function poll() {
    var url = "/__sitegen/poll?since=" + generation + "&error=" + encodeURIComponent(error);
    fetch(url, { cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (state) {
        if (generation >= 0 && state.generation > generation) {
          window.location.reload();
          return;
        }
        generation = state.generation;
        error = state.error || "";
        if (state.error) { show(state.error); }
        poll();
      })
      .catch(function () { setTimeout(poll, 1000); });
  }
  poll();
})();
