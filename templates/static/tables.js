// Progressive enhancement for the static tables: sort by a column, filter rows by text.
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

  function compare(a, b) {
    var x = numeric(a), y = numeric(b);
    if (a !== "" && b !== "" && !isNaN(x) && !isNaN(y)) return x - y;
    return a.localeCompare(b, undefined, { numeric: true, sensitivity: "base" });
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
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (r1, r2) {
          var order = compare(cellValue(r1, index), cellValue(r2, index));
          return ascending ? order : -order;
        });
        var fragment = document.createDocumentFragment();
        rows.forEach(function (row) { fragment.appendChild(row); });
        body.appendChild(fragment);
      });
    });
  }

  function makeFilterable(table) {
    if (!table.tBodies.length) return;
    var body = table.tBodies[0];
    var box = document.createElement("div");
    box.className = "table-filter";
    var label = document.createElement("label");
    var input = document.createElement("input");
    input.type = "search";
    input.placeholder = "Filter the rows on this page";
    label.appendChild(document.createTextNode("Filter "));
    label.appendChild(input);
    var status = document.createElement("span");
    status.className = "muted";
    status.setAttribute("aria-live", "polite");
    box.appendChild(label);
    box.appendChild(status);
    var wrap = table.parentNode && table.parentNode.classList.contains("table-wrap") ? table.parentNode : table;
    wrap.parentNode.insertBefore(box, wrap);
    input.addEventListener("input", function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      Array.prototype.forEach.call(body.rows, function (row) {
        var text = row.textContent.toLowerCase();
        var match = words.every(function (w) { return text.indexOf(w) !== -1; });
        row.hidden = !match;
        if (match) shown += 1;
      });
      status.textContent = words.length ? shown + " of " + body.rows.length + " rows" : "";
    });
  }

  document.querySelectorAll("table[data-sortable]").forEach(makeSortable);
  document.querySelectorAll("table[data-filterable]").forEach(makeFilterable);
})();
