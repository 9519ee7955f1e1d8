// Find a job on any page of the jobs list. The first search loads list/jobs.js (every
// job's id, name, status and start); the matches replace the page's rows until the
// box is cleared. The listing pages are complete without this file.
"use strict";
(function () {
  var table = document.querySelector("table[data-find-index]");
  if (!table) return;
  var SHOWN = 100;
  var root = table.getAttribute("data-root") || "";
  var wrap = table.parentNode.classList.contains("table-wrap") ? table.parentNode : table;
  var pagers = document.querySelectorAll("nav.pager");
  var index = null;
  var loading = false;

  var box = document.createElement("div");
  box.className = "table-filter";
  var label = document.createElement("label");
  var input = document.createElement("input");
  input.type = "search";
  input.placeholder = "Id, name or status, on any page";
  label.appendChild(document.createTextNode("Find a job "));
  label.appendChild(input);
  var status = document.createElement("span");
  status.className = "muted";
  status.setAttribute("aria-live", "polite");
  box.appendChild(label);
  box.appendChild(status);
  wrap.parentNode.insertBefore(box, wrap);

  var results = document.createElement("div");
  results.className = "table-wrap";
  results.hidden = true;
  var found = document.createElement("table");
  found.className = "jobs found";
  found.innerHTML = "<caption>Jobs on any page, newest first</caption><thead><tr>" +
    "<th scope=\"col\">Job</th><th scope=\"col\">Name</th><th scope=\"col\">Status</th>" +
    "<th scope=\"col\">Started (UTC)</th></tr></thead><tbody></tbody>";
  results.appendChild(found);
  wrap.parentNode.insertBefore(results, wrap.nextSibling);

  // The same escaping as the site's own links (Python's quote with safe=""), so an id
  // with "?", "#" or "%" still names its directory.
  function segment(id) {
    return encodeURIComponent(id).replace(/[!'()*]/g, function (c) {
      return "%" + c.charCodeAt(0).toString(16).toUpperCase();
    });
  }

  function statusClass(word) {
    return "st-" + (word.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "") || "unknown");
  }

  // As the pages show times: 2026-01-01T00:00:00Z, or a dash when there is none.
  function started(ms) {
    var date = new Date(ms);
    return ms > 0 && !isNaN(date) ? date.toISOString().replace(/\.\d{3}Z$/, "Z") : "\u2014";
  }

  function cell(row, child) {
    var td = document.createElement("td");
    td.appendChild(child);
    row.appendChild(td);
  }

  function show(searching) {
    results.hidden = !searching;
    wrap.hidden = searching;
    Array.prototype.forEach.call(pagers, function (p) { p.hidden = searching; });
  }

  function render() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) {
      status.textContent = "";
      show(false);
      return;
    }
    var matches = index.filter(function (job) {
      var text = (job[0] + " " + job[1] + " " + job[2]).toLowerCase();
      return words.every(function (w) { return text.indexOf(w) !== -1; });
    });
    var body = found.tBodies[0];
    var rows = document.createDocumentFragment();
    matches.slice(0, SHOWN).forEach(function (job) {
      // Text nodes only: ids and names are log text.
      var row = document.createElement("tr");
      var link = document.createElement("a");
      link.href = root + "jobs/" + segment(job[0]) + "/index.html";
      var code = document.createElement("code");
      code.textContent = job[0];
      link.appendChild(code);
      cell(row, link);
      cell(row, document.createTextNode(job[1]));
      var badge = document.createElement("span");
      badge.className = "badge " + statusClass(job[2]);
      badge.textContent = job[2];
      cell(row, badge);
      cell(row, document.createTextNode(started(job[3])));
      rows.appendChild(row);
    });
    body.replaceChildren(rows);
    status.textContent = matches.length + " of " + index.length + " jobs match" +
      (matches.length > SHOWN ? " (the newest " + SHOWN + " shown)" : "");
    show(true);
  }

  function load() {
    if (loading) return;
    loading = true;
    status.textContent = "Loading the list of jobs…";
    var script = document.createElement("script");
    script.src = table.getAttribute("data-find-index");
    script.onload = function () {
      index = window.sitegenJobIndex || [];
      render();
    };
    script.onerror = function () {
      loading = false;
      status.textContent = "Could not load the list of jobs (" + script.src + ").";
    };
    document.head.appendChild(script);
  }

  input.addEventListener("input", function () {
    if (index) render();
    else load();
  });
})();
