// Any two runs side by side (compare/?a=<id>&b=<id>): both runs' /api stages and config and
// their findings.json, read from the site itself. The figures follow render/compare.py and
// diagnose/figures.py: a stage's duration from its first task's start to its last task's end,
// its tasks' median and slowest duration, failed attempts (findings.json: the /api stages list
// only each task's last attempt), rows (0 where tasks ran: not
// recorded; across Ballista #2435's counting change: not comparable). Text goes in as text.
"use strict";
(function () {
  function $(id) { return document.getElementById(id); }
  function about(f) { return [f.kind, f.stage_id, f.executor_id].join("\u0000"); }
  function list(id, items) {
    var ul = $(id);
    items.forEach(function (f) {
      var li = document.createElement("li");
      li.className = "finding";
      li.textContent = f.severity + " " + f.kind + ": " + f.message;
      ul.appendChild(li);
    });
    if (!items.length) { var li = document.createElement("li"); li.textContent = "None."; ul.appendChild(li); }
  }
  // Findings pair by what they are about (kind, stage, executor), as render/compare.py's rule.
  function pairFindings(now, before) {
    var had = {}, has = {};
    before.forEach(function (g) { had[about(g)] = 1; });
    now.forEach(function (g) { has[about(g)] = 1; });
    list("findings-appeared", now.filter(function (g) { return !had[about(g)]; }));
    list("findings-went", before.filter(function (g) { return !has[about(g)]; }));
    list("findings-stayed", now.filter(function (g) { return had[about(g)]; }));
    $("findings-paired").hidden = false;
  }
  // A job's built comparison (jobs/<id>/compare.html): only its findings are paired here.
  var built = $("compare-findings");
  if (built) {
    if (location.protocol === "file:") return;
    var read = function (u) { return fetch(u).then(function (r) { if (!r.ok) throw new Error(u); return r.json(); }); };
    Promise.all([read(built.getAttribute("data-now")), read(built.getAttribute("data-before"))])
      .then(function (both) { built.hidden = true; pairFindings(both[0].findings, both[1].findings); })
      .catch(function () { /* the static list and links stay */ });
    return;
  }
  var root = $("compare");
  if (!root) return;
  var params = new URLSearchParams(location.search);
  var a = params.get("a") || "", b = params.get("b") || "";
  $("compare-a").value = a;
  $("compare-b").value = b;
  if (location.protocol === "file:") { $("compare-file").hidden = false; return; }
  if (!a || !b) { $("compare-status").textContent = "Give two job ids."; return; }
  var ID = root.getAttribute("data-id");
  function at(kind, id) {
    return root.getAttribute("data-" + kind).split(ID).join(encodeURIComponent(id));
  }
  function get(url) {
    return fetch(url).then(function (r) {
      if (!r.ok) throw new Error(url + ": " + r.status);
      return r.json();
    });
  }
  function run(id) {
    return Promise.all([get(at("stages", id)), get(at("config", id)), get(at("findings", id))]);
  }
  function duration(t) {
    if (!t || !t.end_exec_time) return null;
    var d = t.exec_duration;
    if (d == null && t.start_exec_time != null) d = t.end_exec_time - t.start_exec_time;
    return d;
  }
  function figures(payload, failedAttempts) {
    var out = [];
    (payload.stages || []).forEach(function (s) {
      var tasks = (s.tasks || []).filter(Boolean), first = null, last = null, ds = [];
      tasks.forEach(function (t) {
        var st = t.start_exec_time, en = t.end_exec_time;
        if (st != null && en != null && en >= st) {
          first = first === null || st < first ? st : first;
          last = last === null || en > last ? en : last;
        }
        var d = duration(t);
        if (d != null && d >= 0) ds.push(d);
      });
      ds.sort(function (x, y) { return x - y; });
      out.push({
        id: String(s.stage_id), tasks: tasks.length,
        ms: first !== null ? last - first : 0,
        median: ds.length ? ds[Math.floor((ds.length - 1) / 2)] : null,
        max: ds.length ? ds[ds.length - 1] : null,
        failed: (failedAttempts || {})[String(s.stage_id)] || 0,
        input: s.input_rows || 0, output: s.output_rows || 0
      });
    });
    return out;
  }
  function ms(v) {
    if (v == null) return "\u2014";
    return v < 1000 ? v + " ms" : (v / 1000).toFixed(1) + " s";
  }
  function num(v) { return v == null ? "\u2014" : v.toLocaleString("en"); }
  function rows(v, stage) { return stage && v === 0 && stage.tasks ? null : v; }
  function change(now, before) {
    if (now == null || before == null) return "\u2014";
    if (before === 0) return now === 0 ? "\u00b10%" : "new";
    var p = Math.round((now - before) * 100 / before);
    return p === 0 ? "\u00b10%" : p > 0 ? "+" + p + "%" : "\u2212" + -p + "%";
  }
  function cell(tr, text, scope) {
    var td = document.createElement(scope ? "th" : "td");
    if (scope) td.scope = "row"; else td.className = "num";
    td.textContent = text;
    tr.appendChild(td);
  }
  $("compare-status").textContent = "Reading both runs\u2026";
  Promise.all([run(a), run(b)]).then(function (both) {
    var now = both[0], before = both[1];
    var comparable = now[2].counting === before[2].counting;
    var earlier = {};
    figures(before[0], before[2].failed_attempts).forEach(function (s) { earlier[s.id] = s; });
    var pairs = figures(now[0], now[2].failed_attempts).map(function (s) { var p = [s, earlier[s.id] || null]; delete earlier[s.id]; return p; });
    Object.keys(earlier).forEach(function (k) { pairs.push([null, earlier[k]]); });
    var body = $("compare-stages").tBodies[0];
    pairs.forEach(function (p) {
      var x = p[0], y = p[1], tr = document.createElement("tr");
      function f(k) { return [x ? x[k] : null, y ? y[k] : null]; }
      cell(tr, (x || y).id, true);
      var d = f("ms"); cell(tr, ms(d[0])); cell(tr, ms(d[1])); cell(tr, change(d[0], d[1]));
      d = f("median"); cell(tr, ms(d[0])); cell(tr, ms(d[1]));
      d = f("max"); cell(tr, ms(d[0])); cell(tr, ms(d[1]));
      d = f("failed"); cell(tr, num(d[0])); cell(tr, num(d[1]));
      ["input", "output"].forEach(function (k) {
        var r = [x ? rows(x[k], x) : null, y ? rows(y[k], y) : null];
        cell(tr, x && r[0] === null ? "not recorded" : num(r[0]));
        cell(tr, y && r[1] === null ? "not recorded" : num(r[1]));
        cell(tr, comparable || r[0] == null || r[1] == null ? change(r[0], r[1]) : "not comparable");
      });
      body.appendChild(tr);
    });
    $("rows-not-comparable").hidden = comparable;
    pairFindings(now[2].findings, before[2].findings);
    var cb = $("compare-config").tBodies[0], keys = {};
    Object.keys(now[1]).concat(Object.keys(before[1])).forEach(function (k) { keys[k] = 1; });
    Object.keys(keys).sort().forEach(function (k) {
      if (now[1][k] === before[1][k]) return;
      var tr = document.createElement("tr");
      cell(tr, k, true);
      [now[1][k], before[1][k]].forEach(function (v) {
        var td = document.createElement("td");
        td.textContent = v === undefined ? "(not set)" : v;
        tr.appendChild(td);
      });
      cb.appendChild(tr);
    });
    var line = $("compare-runs");
    [["This run ", a], [" against ", b]].forEach(function (p) {
      line.appendChild(document.createTextNode(p[0]));
      var link = document.createElement("a");
      link.href = at("job", p[1]);
      link.textContent = p[1];
      line.appendChild(link);
    });
    $("compare-status").textContent = "";
    $("compare-result").hidden = false;
  }).catch(function (e) {
    $("compare-status").textContent = "Could not read both runs (" + e.message + "): is each id a published job of this site?";
  });
})();
