// Progressive enhancement for the static tables: sort by a column, filter rows by text,
// find a job on any page of the jobs list, and show a timeline bar's tip on tap or focus.
// Every table is complete without this file; it only reorders and hides existing rows.
"use strict";
(function () {
  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) return "";
    var raw = cell.getAttribute("data-v");
    return raw !== null ? raw : cell.textContent.trim();
  }

  // Exact counts are shown grouped ("12,345"): compare them as the numbers they are.
  var GROUPED = /^-?\d{1,3}(,\d{3})+$/;
  function numeric(text) {
    return Number(GROUPED.test(text) ? text.replace(/,/g, "") : text);
  }

  // One collator for every comparison (localeCompare with options builds one per call),
  // made at the first text comparison: building it costs a cold page 10-20 ms of the load.
  var collator = null;

  // A row with its sort key, read once per sort (not once per comparison), and the detail
  // rows under it (class "detail": an error or message at full width), which move with it.
  function groups(body, index) {
    var out = [];
    Array.prototype.forEach.call(body.rows, function (row) {
      if (row.classList.contains("detail") && out.length) {
        out[out.length - 1].rows.push(row);
        return;
      }
      var text = cellValue(row, index);
      var number = text === "" ? NaN : numeric(text);
      out.push({ rows: [row], text: text, number: number });
    });
    return out;
  }

  function compare(a, b) {
    if (!isNaN(a.number) && !isNaN(b.number)) return a.number - b.number;
    if (!collator) collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
    return collator.compare(a.text, b.text);
  }

  function makeSortable(table) {
    var head = table.tHead;
    if (!head || head.rows.length !== 1 || !table.tBodies.length) return;
    var body = table.tBodies[0];
    Array.prototype.forEach.call(head.rows[0].cells, function (th, index) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      th.setAttribute("aria-sort", "none");
      button.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(head.rows[0].cells, function (other) {
          other.setAttribute("aria-sort", "none");
        });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var sorted = groups(body, index);
        sorted.sort(function (g1, g2) {
          var order = compare(g1, g2);
          return ascending ? order : -order;
        });
        var fragment = document.createDocumentFragment();
        sorted.forEach(function (g) {
          g.rows.forEach(function (row) { fragment.appendChild(row); });
        });
        body.appendChild(fragment);
      });
    });
  }

  // The table's wrapper (it scrolls narrow tables), before which a search box goes.
  function wrapperOf(table) {
    return table.parentNode && table.parentNode.classList.contains("table-wrap") ? table.parentNode : table;
  }

  // Put a labelled search box before the table (in the place the page reserved for it, so
  // nothing below it moves); return its input and its live status line.
  function searchBox(table, labelText, placeholder) {
    var wrap = wrapperOf(table);
    var box = wrap.previousElementSibling;
    if (!box || !box.classList.contains("table-filter") || box.firstChild) {
      box = document.createElement("div");
      box.className = "table-filter";
      wrap.parentNode.insertBefore(box, wrap);
    }
    var label = document.createElement("label");
    var input = document.createElement("input");
    input.type = "search";
    input.placeholder = placeholder;
    label.appendChild(document.createTextNode(labelText + " "));
    label.appendChild(input);
    var status = document.createElement("span");
    status.className = "muted";
    status.setAttribute("aria-live", "polite");
    box.appendChild(label);
    box.appendChild(status);
    return { input: input, status: status };
  }

  function words(input) {
    return input.value.toLowerCase().split(/\s+/).filter(Boolean);
  }

  function makeFilterable(table) {
    if (!table.tBodies.length) return;
    var body = table.tBodies[0];
    var box = searchBox(table, "Filter", "Filter the rows on this page");
    box.input.addEventListener("input", function () {
      var wanted = words(box.input);
      var all = groups(body, 0);
      var shown = 0;
      all.forEach(function (g) {
        var text = g.rows.map(function (row) { return row.textContent; }).join(" ").toLowerCase();
        var match = wanted.every(function (w) { return text.indexOf(w) !== -1; });
        g.rows.forEach(function (row) { row.hidden = !match; });
        if (match) shown += 1;
      });
      box.status.textContent = wanted.length ? shown + " of " + all.length + " rows" : "";
    });
  }

  // Several listing pages: find a job on any of them. The first search loads the script
  // named by data-find-index (every job's id, name, status and start); the matches replace
  // the page's rows and pagers until the box is cleared.
  function makeFindable(table) {
    var SHOWN = 100;
    var root = table.getAttribute("data-root") || "";
    var wrap = wrapperOf(table);
    var pagers = document.querySelectorAll("nav.pager");
    var index = null;
    var loading = false;

    var box = searchBox(table, "Find a job", "Id, name or status, on any page");
    var input = box.input;
    var status = box.status;

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
      var wanted = words(input);
      if (!wanted.length) {
        status.textContent = "";
        show(false);
        return;
      }
      var matches = index.filter(function (job) {
        var text = (job[0] + " " + job[1] + " " + job[2]).toLowerCase();
        return wanted.every(function (w) { return text.indexOf(w) !== -1; });
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
      // jobs.js names the parts (one per UTC span, newest first); each part hands its rows
      // to sitegenJobPart. Scripts, not fetches: they load from file:// too. async=false
      // runs them in the order they were added, so the rows stay newest first.
      var src = table.getAttribute("data-find-index");
      var base = src.slice(0, src.lastIndexOf("/") + 1);
      var rows = [];
      function fail(script) {
        loading = false;
        status.textContent = "Could not load the list of jobs (" + script.src + ").";
      }
      function add(url, onload) {
        var script = document.createElement("script");
        script.async = false;
        script.src = url;
        script.onload = onload;
        script.onerror = function () { fail(script); };
        document.head.appendChild(script);
      }
      window.sitegenJobPart = function (part) {
        rows.push.apply(rows, part);
      };
      add(src, function () {
        var parts = window.sitegenJobParts || [];
        if (!parts.length) {
          index = rows;
          render();
        }
        parts.forEach(function (span, n) {
          add(base + "find-" + encodeURIComponent(span) + ".js", n < parts.length - 1 ? null : function () {
            index = rows;
            render();
          });
        });
      });
    }

    input.addEventListener("input", function () {
      if (index) render();
      else load();
    });
  }

  // A bar's tip (its <title>) shows on hover only with a mouse: a tap or keyboard focus on a
  // bar writes it into the line under the picture.
  function explainBars(svg) {
    var line = svg.parentNode.querySelector(".tl-detail");
    if (!line) return;
    function show(event) {
      var bar = event.target.closest ? event.target.closest("rect.tl-bar") : null;
      var tip = bar && bar.querySelector("title");
      if (tip) line.textContent = tip.textContent;
    }
    svg.addEventListener("click", show);
    svg.addEventListener("focusin", show);
  }

  document.querySelectorAll("svg.timeline").forEach(explainBars);
  document.querySelectorAll("table[data-sortable]").forEach(makeSortable);
  document.querySelectorAll("table[data-filterable]").forEach(makeFilterable);
  document.querySelectorAll("table[data-find-index]").forEach(makeFindable);
})();
