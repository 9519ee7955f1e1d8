// The query page (sql/): SQL over the site's Parquet tables (data/) in the browser, with
// DuckDB-Wasm. Only this page loads the engine, from the URLs it names (the site's own copy in
// sql/engine/, or a CDN). Each table of data/manifest.json becomes a view over its files,
// made the first time a query names it (its files' footers are read then: HTTP range reads).
"use strict";
(function () {
  var root = document.getElementById("sql");
  if (!root) return;
  function $(id) { return document.getElementById(id); }
  var box = $("sql-text");
  var statusLine = $("sql-status");
  var errorBox = $("sql-error");
  // Rows drawn at once: a result of a million rows stays sortable and copyable whole.
  var SHOWN = 1000;
  // Arrow's type ids (its schema's, the same in every Arrow library).
  var INT = 2, DECIMAL = 7, DATE = 8, TIME = 9, TIMESTAMP = 10;

  function say(text) { statusLine.textContent = text; }

  if (location.protocol === "file:") {
    // A page opened from a file may not read the site's other files (fetch, workers).
    $("sql-app").hidden = true;
    $("sql-file").hidden = false;
    return;
  }
  if (root.getAttribute("data-tables") !== "published") return; // its notice says so

  function absolute(href, base) { return new URL(href, base || document.baseURI).href; }
  function quoteName(name) { return '"' + String(name).replace(/"/g, '""') + '"'; }
  function quoteText(text) { return "'" + String(text).replace(/'/g, "''") + "'"; }

  // The manifest's Arrow type names as SQL types (for the view of a table with no file yet).
  function sqlType(type) {
    if (type === "string") return "VARCHAR";
    if (type === "int64") return "BIGINT";
    if (type === "double") return "DOUBLE";
    if (/^timestamp/.test(type)) return "TIMESTAMP";
    return "VARCHAR";
  }

  function viewSql(name, table, manifestUrl) {
    var columns = table.columns || [];
    var files = (table.files || []).map(function (f) { return absolute(f.path, manifestUrl); });
    if (!files.length) {
      var empty = columns.map(function (c) {
        return "CAST(NULL AS " + sqlType(c.type) + ") AS " + quoteName(c.name);
      });
      return "CREATE VIEW " + quoteName(name) + " AS SELECT " + (empty.join(", ") || "NULL AS none") + " WHERE false";
    }
    // Times are written in UTC (TIMESTAMP WITH TIME ZONE to DuckDB, whose functions on it
    // need the ICU extension this engine lacks): a plain TIMESTAMP in UTC, as the pages show.
    var times = columns.filter(function (c) { return /^timestamp/.test(c.type); }).map(function (c) {
      return "CAST(" + quoteName(c.name) + " AS TIMESTAMP) AS " + quoteName(c.name);
    });
    var list = "[" + files.map(quoteText).join(", ") + "]";
    return "CREATE VIEW " + quoteName(name) + " AS SELECT *" +
      (times.length ? " REPLACE (" + times.join(", ") + ")" : "") + " FROM read_parquet(" + list + ")";
  }

  // DuckDB-Wasm compiles its wasm with instantiateStreaming, which refuses a response of any
  // other type than application/wasm, and then never answers: a host that sends another gets
  // the same bytes under the right type.
  function wasmUrl(url) {
    return fetch(url, { method: "HEAD" }).then(function (head) {
      var type = (head.headers.get("content-type") || "").split(";")[0].trim();
      if (type === "application/wasm") return url;
      return fetch(url).then(function (r) { return r.blob(); }).then(function (blob) {
        return URL.createObjectURL(new Blob([blob], { type: "application/wasm" }));
      });
    });
  }

  function newWorker(url, local) {
    if (local) return new Worker(url);
    // A worker cannot be started from another origin: a blob of ours loads the CDN's.
    var source = "importScripts(" + JSON.stringify(url) + ");";
    return new Worker(URL.createObjectURL(new Blob([source], { type: "text/javascript" })));
  }

  function NoTables(message) { this.name = "NoTables"; this.message = message; }

  var manifestUrl = absolute(root.getAttribute("data-manifest"));
  var engine = (function start() {
    var local = root.getAttribute("data-engine") === "local";
    var moduleUrl = absolute(root.getAttribute("data-module"));
    var workerUrl = absolute(root.getAttribute("data-worker"));
    var wasm = absolute(root.getAttribute("data-wasm"));
    say("Loading the SQL engine (DuckDB-Wasm: up to 18 MB, the first time)…");
    var manifest = fetch(manifestUrl).then(function (r) {
      if (!r.ok) throw new NoTables("data/manifest.json: HTTP " + r.status);
      return r.json();
    });
    // The wasm (the big part) is fetched only once the manifest shows there is something to
    // query; the module and the manifest come meanwhile.
    return Promise.all([import(moduleUrl), manifest]).then(function (loaded) {
      var duckdb = loaded[0];
      var db = new duckdb.AsyncDuckDB(new duckdb.ConsoleLogger(duckdb.LogLevel.WARNING), newWorker(workerUrl, local));
      return (local ? wasmUrl(wasm) : Promise.resolve(wasm)).then(function (url) {
        return db.instantiate(url);
      }).then(function () { return db.connect(); });
    }).then(function (conn) {
      // Nothing but the site is read: no extension is fetched from the network.
      return conn.query("SET autoinstall_known_extensions = false").then(function () {
        return conn.query("SET autoload_known_extensions = false");
      }).then(function () { return manifest; }).then(function (m) {
        listTables(m);
        return { conn: conn, tables: m.tables || {}, made: {} };
      });
    });
  })();

  engine.then(function () {
    say("Ready: write a query, or pick an example.");
  }, function (err) {
    if (err instanceof NoTables) {
      $("sql-app").hidden = true;
      $("sql-off").hidden = false;
      say("");
      return;
    }
    say("The SQL engine did not load.");
    showError(String(err && err.message || err));
  });

  // Make the views of the tables a query names, once each: a name anywhere in its text will
  // do (DuckDB's own parse, getTableNames, fails on a query naming a view already made).
  function ensureViews(e, sql) {
    var named = Object.keys(e.tables).filter(function (name) {
      var escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      return new RegExp("(^|[^A-Za-z0-9_])" + escaped + "($|[^A-Za-z0-9_])", "i").test(sql);
    });
    return makeViews(e, named);
  }

  function makeViews(e, names) {
    var todo = names.map(function (n) { return String(n).toLowerCase(); }).filter(function (n) {
      return Object.prototype.hasOwnProperty.call(e.tables, n) && !e.made[n];
    });
    return todo.reduce(function (done, name) {
      return done.then(function () {
        return e.conn.query(viewSql(name, e.tables[name], manifestUrl)).then(function () { e.made[name] = true; });
      });
    }, Promise.resolve());
  }

  // A table named otherwise (quoted, say) is made when DuckDB asks for it.
  var MISSING = /Table with name ([^ ]+) does not exist/;

  function query(e, sql, tries) {
    return e.conn.query(sql).catch(function (err) {
      var missing = MISSING.exec(String(err && err.message));
      var name = missing && missing[1].toLowerCase();
      if (!name || tries <= 0 || !Object.prototype.hasOwnProperty.call(e.tables, name) || e.made[name]) throw err;
      return makeViews(e, [name]).then(function () { return query(e, sql, tries - 1); });
    });
  }

  var running = false;
  function run() {
    var sql = box.value;
    if (running || !sql.trim()) return;
    running = true;
    $("sql-run").disabled = true;
    errorBox.hidden = true;
    var started = performance.now();
    say("Running…");
    engine.then(function (e) {
      return ensureViews(e, sql).then(function () { return query(e, sql, 5); });
    }).then(function (table) {
      var seconds = (performance.now() - started) / 1000;
      show(table);
      var n = table.numRows;
      say((n === 1 ? "1 row" : n.toLocaleString("en") + " rows") + " in " + seconds.toFixed(2) + " s" +
        (n > SHOWN ? " (the first " + SHOWN.toLocaleString("en") + " shown; Copy as CSV copies all)" : "") + ".");
    }, function (err) {
      if (err instanceof NoTables) return;
      say("The query failed.");
      showError(String(err && err.message || err));
    }).then(function () {
      running = false;
      $("sql-run").disabled = false;
    });
  }

  function showError(message) {
    errorBox.querySelector("pre").textContent = message;
    errorBox.hidden = false;
  }

  // ---- The result: Arrow columns, shown as text, sorted by a header, copied as CSV.

  var result = null;

  function pad(n, width) { return String(n).padStart(width || 2, "0"); }

  function decimal(value, scale) {
    var digits = String(value);
    if (!scale) return digits;
    var negative = digits[0] === "-";
    if (negative) digits = digits.slice(1);
    digits = pad(digits, scale + 1);
    var text = digits.slice(0, -scale) + "." + digits.slice(-scale);
    return negative ? "-" + text : text;
  }

  function time(micros) {
    var seconds = Number(micros / 1000000n);
    var rest = Number(micros % 1000000n);
    return pad(Math.floor(seconds / 3600)) + ":" + pad(Math.floor(seconds / 60) % 60) + ":" +
      pad(seconds % 60) + (rest ? "." + pad(rest, 6) : "");
  }

  // A time in UTC as the pages write it; one no Date holds (infinity) as the number it is.
  function utc(ms, dateOnly) {
    var date = new Date(ms);
    if (isNaN(date.getTime())) return String(ms);
    var iso = date.toISOString();
    return dateOnly ? iso.slice(0, 10) : iso.replace("T", " ").replace("Z", "").replace(/\.000$/, "");
  }

  // One value as text (null as null).
  function text(value, type) {
    if (value === null || value === undefined) return null;
    var id = type.typeId;
    if (id === TIMESTAMP) return utc(value, false);
    if (id === DATE) return utc(value, true);
    if (id === DECIMAL) return decimal(value, type.scale);
    if (id === TIME && typeof value === "bigint") return time(value);
    if (typeof value === "object" && !(value instanceof Date)) {
      return JSON.stringify(value, function (k, v) { return typeof v === "bigint" ? v.toString() : v; });
    }
    return String(value);
  }

  function numeric(type) {
    return type.typeId === INT || type.typeId === DECIMAL || type.typeId === 3; // 3: floating point
  }

  function show(table) {
    var fields = table.schema.fields;
    result = {
      fields: fields,
      columns: fields.map(function (f, i) { return table.getChildAt(i); }),
      rows: table.numRows,
      order: null,
    };
    var head = document.createElement("tr");
    fields.forEach(function (f, i) {
      var th = document.createElement("th");
      th.scope = "col";
      if (numeric(f.type)) th.className = "num";
      th.setAttribute("aria-sort", "none");
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.textContent = f.name;
      button.addEventListener("click", function () { sortBy(i, th); });
      th.appendChild(button);
      head.appendChild(th);
    });
    var thead = $("sql-table").tHead;
    thead.textContent = "";
    thead.appendChild(head);
    drawRows();
    $("sql-results").hidden = false;
  }

  function value(column, row) { return result.columns[column].get(row); }

  function drawRows() {
    var body = $("sql-table").tBodies[0];
    var fragment = document.createDocumentFragment();
    var count = Math.min(result.rows, SHOWN);
    for (var n = 0; n < count; n++) {
      var row = result.order ? result.order[n] : n;
      var tr = document.createElement("tr");
      for (var c = 0; c < result.fields.length; c++) {
        var type = result.fields[c].type;
        var td = document.createElement("td");
        var shown = text(value(c, row), type);
        if (shown === null) {
          td.className = "null";
          td.textContent = "null";
        } else {
          if (numeric(type)) td.className = "num";
          td.textContent = shown;
        }
        tr.appendChild(td);
      }
      fragment.appendChild(tr);
    }
    body.textContent = "";
    body.appendChild(fragment);
  }

  // Two values of one column, neither null.
  function compare(a, b) {
    if (a === b) return 0;
    if (typeof a === "object" && typeof b === "object" && !(a instanceof Date)) {
      a = String(a);
      b = String(b);
      // Decimals: their unscaled integers (one column shares one scale).
      if (/^-?\d+$/.test(a) && /^-?\d+$/.test(b)) {
        a = BigInt(a);
        b = BigInt(b);
      }
    }
    return a < b ? -1 : a > b ? 1 : 0;
  }

  function sortBy(column, th) {
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    th.parentNode.querySelectorAll("th").forEach(function (other) { other.setAttribute("aria-sort", "none"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var keys = [];
    for (var i = 0; i < result.rows; i++) keys.push(value(column, i));
    var order = keys.map(function (_, i) { return i; });
    order.sort(function (x, y) {
      var a = keys[x], b = keys[y];
      var nulls = (a === null || a === undefined) - (b === null || b === undefined);
      if (nulls) return nulls; // nulls last, either way
      var c = compare(a, b);
      return (ascending ? c : -c) || x - y;
    });
    result.order = order;
    drawRows();
  }

  function csvField(field) {
    if (field === null) return "";
    return /[",\r\n]/.test(field) ? '"' + field.replace(/"/g, '""') + '"' : field;
  }

  function csv() {
    var lines = [result.fields.map(function (f) { return csvField(f.name); }).join(",")];
    for (var n = 0; n < result.rows; n++) {
      var row = result.order ? result.order[n] : n;
      var cells = [];
      for (var c = 0; c < result.fields.length; c++) cells.push(csvField(text(value(c, row), result.fields[c].type)));
      lines.push(cells.join(","));
    }
    return lines.join("\r\n") + "\r\n";
  }

  function copy(textToCopy) {
    // The clipboard API needs a secure context (https, or localhost): elsewhere, a selection.
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(textToCopy);
    var area = document.createElement("textarea");
    area.value = textToCopy;
    area.setAttribute("readonly", "");
    area.className = "offscreen";
    document.body.appendChild(area);
    area.select();
    var ok = document.execCommand("copy");
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error("the browser refused to copy"));
  }

  $("sql-csv").addEventListener("click", function () {
    if (!result) return;
    var rows = result.rows;
    copy(csv()).then(function () {
      say("Copied " + (rows === 1 ? "1 row" : rows.toLocaleString("en") + " rows") + " as CSV.");
    }, function (err) {
      say("Could not copy: " + (err && err.message || err) + ".");
    });
  });

  // ---- The tables, from the manifest.

  function listTables(manifest) {
    var holder = $("sql-tables");
    holder.textContent = "";
    Object.keys(manifest.tables || {}).forEach(function (name) {
      var table = manifest.tables[name];
      var files = table.files || [];
      var rows = files.reduce(function (sum, f) { return sum + (f.rows || 0); }, 0);
      var details = document.createElement("details");
      var summary = document.createElement("summary");
      var code = document.createElement("code");
      code.textContent = name;
      summary.appendChild(code);
      summary.appendChild(document.createTextNode(
        ": " + rows.toLocaleString("en") + (rows === 1 ? " row" : " rows") + ", " +
        (files.length === 1 ? "1 file" : files.length + " files")));
      details.appendChild(summary);
      var wrap = document.createElement("div");
      wrap.className = "table-wrap";
      var t = document.createElement("table");
      t.className = "config";
      var caption = document.createElement("caption");
      caption.textContent = "The columns of " + name;
      t.appendChild(caption);
      var head = t.createTHead().insertRow();
      ["Column", "Type", "What it holds"].forEach(function (label) {
        var th = document.createElement("th");
        th.scope = "col";
        th.textContent = label;
        head.appendChild(th);
      });
      var body = t.createTBody();
      (table.columns || []).forEach(function (c) {
        var tr = body.insertRow();
        var th = document.createElement("th");
        th.scope = "row";
        var name = document.createElement("code");
        name.textContent = c.name;
        th.appendChild(name);
        tr.appendChild(th);
        tr.insertCell().textContent = sqlType(c.type);
        tr.insertCell().textContent = c.doc || "";
      });
      wrap.appendChild(t);
      details.appendChild(wrap);
      holder.appendChild(details);
    });
  }

  // ---- The controls.

  $("sql-form").addEventListener("submit", function (event) {
    event.preventDefault();
    run();
  });
  box.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      run();
    }
  });
  document.querySelectorAll("button.sql-example").forEach(function (button) {
    button.addEventListener("click", function () {
      box.value = button.getAttribute("data-sql");
      run();
    });
  });
})();
