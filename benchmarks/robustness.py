"""Hostile logs, hostile text, killed builds, huge inputs: the figures of docs/robustness.md.

Run:  python benchmarks/robustness.py                      (the documented longer run)
      python benchmarks/robustness.py --quick              (what CI runs: seconds a part)
      python benchmarks/robustness.py --only fuzz --fuzz-executions 1000000
      python benchmarks/robustness.py --only resources --scale 1.0

Four parts, each ending in a line that says whether its targets are met:
  fuzz       structure-aware mutations of real logs through the reader, ``check``'s judge
             and (now and then) the whole map step: executions, escaped exceptions (target 0)
  xss        a corpus of payloads in every text field of logs, notes and --pages, each page
             loaded in Chromium over nginx, ``python -m http.server`` and file://:
             executions (target 0) and unescaped markup (target 0)
  kill       kill -9 of builds (whole process group, or the main process alone) at points of
             full and incremental builds, nginx polled meanwhile: broken observations
             (target 0), recoveries equal to a clean build byte for byte, leftovers (target 0)
  resources  a huge JobEnd line, many TaskEnd lines, many stages, a dense DAG: time, peak RSS
             and what the pages cut or simplified (the /api bytes are never cut)

Servers listen on 127.0.0.1 only; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.helpers.servers: the same nginx the tests start

from sitegen.builder.map.context import MapContext  # noqa: E402
from sitegen.builder.map.jobs import process_log, root_parents  # noqa: E402
from sitegen.eventlog.classify import judge  # noqa: E402
from sitegen.eventlog.discover import LogFile  # noqa: E402
from sitegen.eventlog.reader import read_log  # noqa: E402
from sitegen.examples import EXAMPLE_LOG_DIR  # noqa: E402
from sitegen.examples.generator import JobSpec, generate_job  # noqa: E402
from sitegen.layout import BOOKKEEPING  # noqa: E402
from sitegen.render.pages import PageRenderer  # noqa: E402

# ---------------------------------------------------------------------------------- fuzz

NUMBER = re.compile(rb"-?\d+(?:\.\d+)?")
STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
PAIR = re.compile(rb'"[a-z_]+":(?:-?\d+|"(?:[^"\\]|\\.)*"|true|false|null)')


def _splice(line: bytes, found: re.Match[bytes] | None, new: bytes) -> bytes:
    """Replace one match in ``line`` (or insert ``new`` somewhere when nothing matched)."""
    if found is None:
        return line[: len(line) // 2] + new + line[len(line) // 2 :]
    return line[: found.start()] + new + line[found.end() :]


def _pick(rng: random.Random, pattern: re.Pattern[bytes], line: bytes) -> re.Match[bytes] | None:
    """Return one random match of ``pattern`` in ``line`` (sampled: lines can be long)."""
    start = rng.randrange(max(1, len(line) - 2_000)) if len(line) > 4_000 else 0
    matches = list(pattern.finditer(line, start, start + 4_000))
    return rng.choice(matches) if matches else None


def m_nesting(rng: random.Random, line: bytes) -> bytes:
    depth = rng.choice([50, 500, 1_000, 5_000, 100_000])
    kind = rng.choice([(b"[", b"]"), (b'{"a":', b"}")])
    deep = kind[0] * depth + b"1" + kind[1] * depth
    return _splice(line, _pick(rng, rng.choice([NUMBER, STRING]), line), deep)


def m_huge_number(rng: random.Random, line: bytes) -> bytes:
    value = rng.choice(
        [b"18446744073709551616", b"9223372036854775808", b"-9223372036854775809",
         b"1" + b"0" * 310, b"1e999", b"-1e999", b"1e-999", b"0.0000000001",
         b"-0", b"1" * 5000, b"12345678901234567890.5"]
    )  # fmt: skip
    return _splice(line, _pick(rng, NUMBER, line), value)


def m_wrong_type(rng: random.Random, line: bytes) -> bytes:
    value = rng.choice(
        [b'"12"', b"null", b"true", b"[]", b"{}", b"[1,2]", b'{"a":1}', b"-1", b'""']
    )
    return _splice(line, _pick(rng, rng.choice([NUMBER, STRING]), line), value)


def m_nan(rng: random.Random, line: bytes) -> bytes:
    value = rng.choice([b"NaN", b"Infinity", b"-Infinity", b"nan", b"undefined"])
    return _splice(line, _pick(rng, NUMBER, line), value)


def m_bad_utf8(rng: random.Random, line: bytes) -> bytes:
    junk = rng.choice(
        [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\\ud800", b"\\udfff\\ud800",
         b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\\u0000", b"\x1b[31m", b"\x85"]
    )  # fmt: skip
    at = rng.randrange(len(line) + 1)
    return line[:at] + junk + line[at:]


def m_truncate(rng: random.Random, line: bytes) -> bytes:
    return line[: rng.randrange(len(line) + 1)]


def m_long_line(rng: random.Random, line: bytes) -> bytes:
    size = rng.choice([10_000, 100_000, 1_000_000])
    filler = rng.choice([b"x", b"\\n", b"<", b"\xc3\xa9", b" "]) * (size // 2)
    return _splice(line, _pick(rng, STRING, line), b'"' + filler + b'"')


def m_duplicate_key(rng: random.Random, line: bytes) -> bytes:
    found = _pick(rng, PAIR, line)
    if found is None:
        return line.replace(b'"ev":', b'"ev":"X","ev":', 1)
    pair = found.group()
    key = pair.split(b":", 1)[0]
    other = rng.choice([pair, key + b':"dup"', key + b":0", key + b":null"])
    return line[: found.end()] + b"," + other + line[found.end() :]


def m_flip(rng: random.Random, line: bytes) -> bytes:
    if not line:
        return b"\x00"
    at = rng.randrange(len(line))
    return line[:at] + bytes([line[at] ^ (1 << rng.randrange(8))]) + line[at + 1 :]


LINE_MUTATORS: dict[str, Callable[[random.Random, bytes], bytes]] = {
    "nesting": m_nesting,
    "huge-number": m_huge_number,
    "wrong-type": m_wrong_type,
    "nan": m_nan,
    "bad-utf8": m_bad_utf8,
    "truncation": m_truncate,
    "long-line": m_long_line,
    "duplicate-key": m_duplicate_key,
    "bit-flip": m_flip,
}


def mutate(rng: random.Random, lines: list[bytes]) -> tuple[bytes, list[str]]:
    """Apply one to three mutations to a log; return it and the mutators' names."""
    lines = list(lines)
    names = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        if rng.random() < 0.08:
            names.append("lines")
            op = rng.randrange(3)
            n = rng.randrange(len(lines))
            if op == 0 and len(lines) > 1:
                del lines[n]
            elif op == 1:
                lines.insert(rng.randrange(len(lines) + 1), lines[n])
            else:
                lines.append(lines[n])
            continue
        name = rng.choice(list(LINE_MUTATORS))
        names.append(name)
        # The JobEnd line decides the log: damage it more often than its share.
        n = len(lines) - 1 if rng.random() < 0.4 else rng.randrange(len(lines))
        ending = b"\n" if lines[n].endswith(b"\n") else b""
        lines[n] = LINE_MUTATORS[name](rng, lines[n].removesuffix(b"\n")) + ending
    data = b"".join(lines)
    if "truncation" in names and rng.random() < 0.5:
        data = data[: rng.randrange(len(data) + 1)]  # the whole file cut, mid-line
    return data, names


def fuzz_seeds(count: int) -> list[list[bytes]]:
    """Real logs: the bundled examples, each kept to a few TaskEnd lines (more mutations/s)."""
    seeds = []
    # The smallest logs: a mutation costs as much as the line it copies.
    logs = sorted(EXAMPLE_LOG_DIR.glob("*.eventlog*"), key=lambda p: (p.stat().st_size, p.name))
    for path in logs[:count]:
        lines = path.read_bytes().splitlines(keepends=True)
        tasks = [n for n, line in enumerate(lines) if line.startswith(b'{"ev":"TaskEnd"')]
        seeds.append([line for n, line in enumerate(lines) if n not in tasks[4:]])
    return seeds


@dataclass
class FuzzResult:
    executions: int = 0
    rendered: int = 0
    escaped: int = 0
    seconds: float = 0.0
    classes: Counter[str] = field(default_factory=Counter)
    crashes: dict[str, str] = field(default_factory=dict)


def fuzz(
    seconds: float,
    executions: int,
    seed: int,
    render_every: int,
    crash_dir: Path | None,
    progress: int = 0,
) -> FuzzResult:
    """Mutate real logs; run the reader, check's judge and now and then the map step."""
    rng = random.Random(seed)
    seeds = fuzz_seeds(4)
    result = FuzzResult()
    work = Path(tempfile.mkdtemp(prefix="sitegen-fuzz-"))
    pages = PageRenderer()
    pages.warm()
    step = MapContext(pages, raw_logs=True)
    started = time.perf_counter()
    deadline = started + seconds
    try:
        while result.executions < executions and time.perf_counter() < deadline:
            data, names = mutate(rng, rng.choice(seeds))
            path = work / "fuzz.eventlog"
            log = LogFile(work, path.name, "fuzz", False, len(data), 0, path.name)
            full = render_every > 0 and result.executions % render_every == 0
            try:
                if full:
                    # The whole map step (reading, pages, API files), as a build runs it.
                    path.write_bytes(data)
                    staging = work / f"staging{result.rendered}"
                    for parent in root_parents(pages):
                        (staging / parent).mkdir(parents=True, exist_ok=True)
                    outcome, _ = process_log(log, staging, staging / "part", step)
                    shutil.rmtree(staging)
                    result.classes[str(outcome.classification)] += 1
                    result.rendered += 1
                else:
                    read = read_log(path, data)
                    judge(log, read)  # what `check` adds to reading
                    result.classes[str(read.classification)] += 1
            except Exception as exc:  # escaped from the code under test: counted
                result.escaped += 1
                key = f"{type(exc).__name__} ({'+'.join(sorted(set(names)))})"
                if key not in result.crashes:
                    result.crashes[key] = "".join(traceback.format_exception(exc, limit=-3))
                    if crash_dir is not None:
                        crash_dir.mkdir(parents=True, exist_ok=True)
                        (crash_dir / f"crash{len(result.crashes)}.eventlog").write_bytes(data)
            result.executions += 1
            if progress and result.executions % progress == 0:
                print(
                    f"fuzz: … {result.executions:,} executions, {result.escaped} escaped",
                    flush=True,
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result.seconds = time.perf_counter() - started
    return result


def run_fuzz(args: argparse.Namespace) -> bool:
    result = fuzz(
        args.fuzz_seconds,
        args.fuzz_executions,
        args.seed,
        args.render_every,
        args.crash_dir,
        progress=0 if args.quick else 50_000,
    )
    rate = result.executions / result.seconds if result.seconds else 0.0
    print(
        f"fuzz: {result.executions:,} executions in {result.seconds:.1f} s "
        f"({rate:,.0f}/s; {result.rendered:,} through the whole map step), "
        f"escaped exceptions: {result.escaped}"
    )
    print("fuzz: classified " + ", ".join(f"{k} {v:,}" for k, v in result.classes.most_common()))
    for key, trace in result.crashes.items():
        print(f"fuzz: CRASH {key}\n{trace}")
    met = result.escaped == 0
    print(f"fuzz: target 0 escaped: {'met' if met else 'NOT met'}")
    return met


# ----------------------------------------------------------------------------------- xss

# Each payload marks what it would inject with data-xss (found in the DOM: unescaped markup)
# and runs alert() or sets window.__xss when it executes.
XSS_VECTORS = [
    "<script>alert({n})</script>",
    "<img data-xss={n} src=x onerror=alert({n})>",
    "<svg data-xss={n} onload=alert({n})>",
    '"><b data-xss={n}>x</b>',
    "'><b data-xss={n}>x</b>",
    "</title><b data-xss={n}>",
    "</textarea><b data-xss={n}>",
    "</script><script>alert({n})</script>",
    "--><b data-xss={n}>",
    "]]><b data-xss={n}>",
    '<iframe data-xss={n} srcdoc="<script>parent.alert({n})</script>"></iframe>',
    '<a data-xss={n} href="javascript:alert({n})">x</a>',
    "javascript:alert({n})",
    '<math><mi data-xss={n} xlink:href="javascript:alert({n})">x</mi></math>',
    "<details data-xss={n} open ontoggle=alert({n})>",
    "<body data-xss={n} onload=alert({n})>",
    "<input data-xss={n} autofocus onfocus=alert({n})>",
    '<object data-xss={n} data="javascript:alert({n})"></object>',
    '<embed data-xss={n} src="javascript:alert({n})">',
    '<meta data-xss={n} http-equiv="refresh" content="0;url=javascript:alert({n})">',
    '<base data-xss={n} href="javascript:alert({n})//">',
    '<style data-xss={n}>*{{background:url("javascript:alert({n})")}}</style>',
    "<form data-xss={n}><button formaction=javascript:alert({n})>x</button></form>",
    '" onmouseover="window.__xss={n}" data-xss="{n}',
    "' onfocus='window.__xss={n}' data-xss='{n}",
    '<noscript><p title="</noscript><img data-xss={n} src=x onerror=alert({n})>">',
    "<svg><script>alert({n})</script></svg>",
    '<svg><a data-xss={n} xlink:href="javascript:alert({n})"><text>x</text></a></svg>',
    "{{{{7*7}}}}<b data-xss={n}>",
    "\\u003cb data-xss={n}\\u003e",
    "&lt;b data-xss={n}&gt;",
    "<![CDATA[<b data-xss={n}>]]>",
    "<x data-xss={n} contenteditable onblur=alert({n})>",
    "<video data-xss={n}><source onerror=alert({n})></video>",
    "<audio data-xss={n} src=x onerror=alert({n})>",
    "<marquee data-xss={n} onstart=alert({n})>",
    "[x](javascript:alert({n}))",
    '![x](x" onerror="alert({n}))',
    "<a data-xss={n} href=data:text/html,<script>alert({n})</script>>x</a>",
    "%3Cb%20data-xss%3D{n}%3E",
]


def xss_payloads() -> list[str]:
    """Return the corpus: every vector plain, upper-cased, split by a newline, after a quote."""
    out = []
    for variant in range(4):
        for vector in XSS_VECTORS:
            text = vector.format(n=len(out) + 1)
            if variant == 1:
                text = re.sub(r"<(/?)([a-z]+)", lambda m: f"<{m[1]}{m[2].upper()}", text)
            elif variant == 2:
                text = text.replace(" data-xss", "\ndata-xss").replace("<", "<\x00", 1)
            elif variant == 3:
                text = "\"'>" + text
            out.append(text)
    return out


def _inject(value: Any, text: str, keep: frozenset[str], key: str = "") -> Any:
    """Return ``value`` with every string (and config key) replaced by ``text``."""
    if isinstance(value, str):
        return value if key in keep else text
    if isinstance(value, list):
        return [_inject(v, text, keep, key) for v in value]
    if isinstance(value, dict):
        if key == "config":
            return {f"{text}{n}": text for n in range(len(value))}
        return {k: _inject(v, text, keep, k) for k, v in value.items()}
    return value


DOT_LABEL = re.compile(r'label\s*=\s*"(?:[^"\\]|\\.)*"')


def xss_log(job_id: str, text: str, seed: int) -> bytes:
    """A generated failed job with ``text`` in every text field but its id and record kinds."""
    lines = []
    spec = JobSpec(job_id=job_id, job_name="x", stages=2, tasks_per_stage=3, outcome="failed")
    keep = frozenset({"ev", "job_id", "dot"})
    for raw in generate_job(spec, seed=seed):
        record = json.loads(raw)
        data = _inject(record["data"], text, keep)
        if "dot" in data:  # DOT stays DOT: the payload goes into every label
            label = "label = " + json.dumps(text).replace("\\", "\\\\")
            data["dot"] = DOT_LABEL.sub(label, data["dot"])
        lines.append(json.dumps({"ev": record["ev"], "version": 1, "data": data}) + "\n")
    return "".join(lines).encode()


def write_xss_corpus(root: Path, payloads: list[str], per_field: int) -> tuple[Path, Path]:
    """Write logs, notes and --pages carrying the payloads; return (log dir, pages dir)."""
    logs, pages = root / "logs", root / "pages"
    (logs / "notes").mkdir(parents=True)
    pages.mkdir()
    blocks = ["".join(payloads[i : i + per_field]) for i in range(0, len(payloads), per_field)]
    for k, block in enumerate(blocks):
        job_id = f"xss{k:03d}"
        (logs / f"{job_id}.eventlog").write_bytes(xss_log(job_id, block, seed=k))
        note = f"# {block}\n\n{block}\n\n[{block}](javascript:alert(1))\n\n<div>{block}</div>\n"
        (logs / "notes" / f"{job_id}.md").write_text(note)
        if k < 3:
            (pages / f"page{k}.md").write_text(f"# {block}\n\n{block}\n\n| {block} |\n|---|\n")
    # Payloads as job ids (those that can be path segments) and as file names.
    ids = [p for p in payloads if "/" not in p and "\x00" not in p and len(p) < 150][:6]
    for k, job_id in enumerate(ids):
        (logs / f"id{k}.eventlog").write_bytes(xss_log(job_id, "x", seed=100 + k))
    (logs / f"{ids[0]}.eventlog").write_bytes(b"not a log " + ids[1].encode())
    return logs, pages


DETECT = """() => {
  const bad = [];
  for (const el of document.querySelectorAll('*')) {
    if (el.hasAttribute('data-xss')) bad.push(el.tagName + '[data-xss]');
    for (const a of el.attributes) if (a.name.startsWith('on')) bad.push(el.tagName + '@' + a.name);
    if (el.tagName === 'SCRIPT' && !el.src) bad.push('inline script');
    if (['IFRAME', 'OBJECT', 'EMBED', 'BASE'].includes(el.tagName)) bad.push(el.tagName);
    if (el.tagName === 'META' && (el.httpEquiv || '').toLowerCase() === 'refresh') bad.push('meta refresh');
    for (const name of ['href', 'xlink:href', 'src', 'action', 'formaction', 'data']) {
      const v = el.getAttribute(name) || '';
      if (/^\\s*(javascript|vbscript|data):/i.test(v)) bad.push(el.tagName + ' ' + name);
    }
  }
  return {bad: bad, fired: window.__xss || null};
}"""


@dataclass
class XssResult:
    payloads: int = 0
    pages: int = 0
    loads: int = 0
    executions: int = 0
    unescaped: int = 0
    http_errors: int = 0
    findings: list[str] = field(default_factory=list)
    # What the detector saw on a control page holding raw payloads (must not be zero).
    control: tuple[int, int] = (0, 0)


def _load_all(browser: Any, urls: list[str], result: XssResult, where: str) -> None:
    """Load each page in a fresh context; count executions and injected markup."""
    context = browser.new_context()
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        for url in urls:
            response = page.goto(url, wait_until="load", timeout=30_000)
            result.loads += 1
            if response is not None and response.status >= 400:
                result.http_errors += 1
                result.findings.append(f"{where}: HTTP {response.status} {url}")
            found = page.evaluate(DETECT)
            fired = len(dialogs) + (1 if found["fired"] else 0)
            if fired:
                result.executions += fired
                result.findings.append(f"{where}: EXECUTED {dialogs} {found['fired']} at {url}")
            if found["bad"]:
                result.unescaped += len(found["bad"])
                result.findings.append(f"{where}: UNESCAPED {found['bad'][:3]} at {url}")
            dialogs.clear()
    finally:
        context.close()


def xss(per_field: int, work: Path) -> XssResult:
    """Build the corpus and load every page over nginx, http.server and file://."""
    from playwright.sync_api import sync_playwright

    from sitegen.builder.options import BuildOptions
    from sitegen.builder.pipeline import build
    from tests.conftest import CHROMIUM_ARGS
    from tests.helpers.servers import http_server, nginx

    result = XssResult()
    payloads = xss_payloads()
    result.payloads = len(payloads)
    logs, pages = write_xss_corpus(work, payloads, per_field)
    site = work / "site"
    build(BuildOptions(log_dirs=logs, output=site, pages_dir=pages, workers=2))
    html = sorted(str(p.relative_to(site)) for p in site.rglob("*.html"))
    result.pages = len(html)
    # nginx serves /api/* as the API (JSON, text): its HTML copies are for zero-config hosts.
    pages_only = [p for p in html if not p.startswith("api/")]
    nginx_bin = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
    if nginx_bin is None:
        raise SystemExit("xss: nginx is not installed")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    # The detector must see what it looks for: a page with the payloads raw (no CSP).
    control = work / "control.html"
    control.write_text("<!doctype html><title>control</title>" + "".join(payloads[:40]))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            seen = XssResult()
            _load_all(browser, [control.as_uri()], seen, "control")
            result.control = (seen.executions, seen.unescaped)
            with nginx(nginx_bin, site, work / "nginx") as port:
                base = f"http://127.0.0.1:{port}/"
                _load_all(browser, [base + quote_path(p) for p in pages_only], result, "nginx")
            with http_server(site) as port:
                base = f"http://127.0.0.1:{port}/"
                _load_all(browser, [base + quote_path(p) for p in html], result, "http.server")
            _load_all(browser, [(site / p).as_uri() for p in html], result, "file")
        finally:
            browser.close()
    return result


def quote_path(rel: str) -> str:
    """Return a site path as a URL path (job ids with %, #, ? in them are escaped)."""
    from urllib.parse import quote

    return quote(rel)


def run_xss(args: argparse.Namespace) -> bool:
    with tempfile.TemporaryDirectory(prefix="sitegen-xss-") as tmp:
        result = xss(args.xss_per_field, Path(tmp))
    print(
        f"xss: {result.payloads} payloads ({args.xss_per_field} per field value), "
        f"{result.pages} pages, {result.loads} page loads over nginx, http.server and file://: "
        f"executions {result.executions}, unescaped markup {result.unescaped}, "
        f"HTTP errors {result.http_errors}"
    )
    print(
        f"xss: detector control (raw payloads, no CSP): executions {result.control[0]}, "
        f"unescaped markup {result.control[1]}"
    )
    for finding in result.findings[:20]:
        print(f"xss: {finding}")
    met = (
        result.executions == 0
        and result.unescaped == 0
        and result.payloads >= 150
        and min(result.control) > 0
    )
    print(f"xss: target 0 executions, 0 unescaped: {'met' if met else 'NOT met'}")
    return met


# ---------------------------------------------------------------------------------- kill

EPOCH = "1767225600"  # SOURCE_DATE_EPOCH: every build of the same logs makes the same bytes


def _tree(root: Path) -> dict[str, bytes]:
    """Return every file below ``root`` by relative path, with its bytes, the state aside.

    The state database is SQLite: the same rows written in another order are other bytes.
    """
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and str(p.relative_to(root)) not in BOOKKEEPING
    }


def _descendants(pid: int) -> set[int]:
    """Return the ids of ``pid``'s descendants (Linux /proc)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            with contextlib.suppress(OSError):
                for child in (task / "children").read_text().split():
                    if int(child) not in found:
                        found.add(int(child))
                        todo.append(int(child))
    return found


def _alive(pid: int) -> bool:
    """Tell whether ``pid`` runs (a zombie counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@dataclass
class Poller:
    """GET the published site from nginx in a loop; count what a reader would see broken."""

    port: int
    observations: int = 0
    broken: int = 0
    examples: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def _bad(self, what: str) -> None:
        self.broken += 1
        if len(self.examples) < 5:
            self.examples.append(what)

    def run(self, max_requests: int, max_seconds: float) -> None:
        from sitegen.render import urls
        from tests.helpers.servers import get

        deadline = time.monotonic() + max_seconds
        n = 0
        while not self.stop.is_set() and self.observations < max_requests:
            if time.monotonic() > deadline:
                break
            n += 1
            listing = get(self.port, "/api/jobs")
            self.observations += 1
            try:
                jobs = json.loads(listing.body) if listing.status == 200 else None
            except ValueError:
                jobs = None
            if not isinstance(jobs, list) or not jobs:
                self._bad(f"/api/jobs: HTTP {listing.status}, {listing.body[:60]!r}")
                continue
            job_id = jobs[n % len(jobs)]["job_id"]
            # Everything a listed job links to must be there (the publish order's promise).
            for path in (f"/api/job/{job_id}", "/" + str(urls.job_page(job_id)), "/"):
                response = get(self.port, path)
                self.observations += 1
                if response.status != 200:
                    self._bad(f"{path}: HTTP {response.status} while /api/jobs lists {job_id}")
                elif path.startswith("/api/"):
                    try:
                        json.loads(response.body)
                    except ValueError:
                        self._bad(f"{path}: not JSON")


@dataclass
class KillResult:
    points: int = 0
    landed: int = 0
    recovered: int = 0
    leftover_processes: int = 0
    leftover_dirs: int = 0
    observations: int = 0
    broken: int = 0
    notes: list[str] = field(default_factory=list)


def _change_logs(logs: Path, step: int) -> None:
    """Move the logs on, as a scheduler does: a new job, a rewritten log, now and then one gone."""
    from sitegen.examples.generator import write_log

    write_log(
        logs, JobSpec(job_id=f"new{step:03d}", job_name="q", stages=3, tasks_per_stage=12), step
    )
    existing = sorted(logs.glob("*.eventlog"))
    victim = existing[step % len(existing)]
    spec = JobSpec(job_id=victim.name.removesuffix(".eventlog"), job_name="again", stages=2)
    victim.write_bytes(b"".join(generate_job(spec, seed=1000 + step)))
    if step % 3 == 2:
        existing[(step + 1) % len(existing)].unlink()


def kill_builds(points: int, logs_count: int, work: Path) -> KillResult:
    """Kill builds at ``points`` moments of full and incremental builds; check what follows."""
    from sitegen.builder.options import BuildOptions
    from sitegen.builder.pipeline import build
    from sitegen.examples.generator import write_log
    from tests.helpers.servers import nginx

    logs, pub = work / "logs", work / "pub"
    logs.mkdir()
    pub.mkdir()
    for n in range(logs_count):
        spec = JobSpec(job_id=f"job{n:03d}", job_name="q", stages=3, tasks_per_stage=12)
        write_log(logs, spec, seed=n)
    site = pub / "site"
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH}
    command = [sys.executable, "-m", "sitegen", "build", "-q", "--event-log-dir", str(logs)]
    # Logs are rewritten in place below (_change_logs), which only a stat of each log sees.
    command += ["--output", str(site), "--workers", "2", "--verify-logs"]
    subprocess.run(command, env=env, check=True, timeout=600)

    def timed(extra: list[str]) -> float:
        started = time.perf_counter()
        subprocess.run(command + extra, env=env, check=True, timeout=600)
        return time.perf_counter() - started

    # The quicker of two runs each: a slow first run put the later kill points past the end
    # of builds that then ran faster (13 of 20 landed once, in CI).
    full_seconds = min(timed(["--clean"]), timed(["--clean"]))
    _change_logs(logs, 0)
    incremental_seconds = timed([])
    _change_logs(logs, 999)  # another change of the same size
    incremental_seconds = min(incremental_seconds, timed([]))
    result = KillResult(points=points)
    references: dict[int, dict[str, bytes]] = {}
    nginx_bin = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
    if nginx_bin is None:
        raise SystemExit("kill: nginx is not installed")
    with nginx(nginx_bin, site, work / "nginx") as port:
        poller = Poller(port)
        thread = threading.Thread(target=poller.run, args=(5_000_000, 3600.0), daemon=True)
        thread.start()
        try:
            state = 1
            for point in range(points):
                full = point % 2 == 0
                group = (point // 2) % 2 == 0
                if not full:
                    _change_logs(logs, state)
                    state += 1
                length = full_seconds if full else incremental_seconds
                # Spread over the build: from interpreter start to the publish at its end.
                at = length * (0.1 + 0.85 * ((point // 2) + 0.5) / max(1, points // 2))
                proc = subprocess.Popen(
                    command + (["--clean"] if full else []), env=env, start_new_session=True
                )
                seen: set[int] = set()
                deadline = time.monotonic() + at
                while time.monotonic() < deadline and proc.poll() is None:
                    seen |= _descendants(proc.pid)
                    time.sleep(0.005)
                if proc.poll() is None:
                    result.landed += 1
                    if group:
                        os.killpg(proc.pid, signal.SIGKILL)
                    else:
                        proc.kill()  # the main process alone: its workers must follow
                proc.wait(60)
                settle = time.monotonic() + 5
                while any(_alive(p) for p in seen) and time.monotonic() < settle:
                    time.sleep(0.05)
                alive = [p for p in seen if _alive(p)]
                result.leftover_processes += len(alive)
                for pid in alive:  # ours: stop them so the next point starts clean
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                recovery = subprocess.run(command, env=env, timeout=600, capture_output=True)
                if state not in references:
                    ref = work / f"ref{state}"
                    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
                    try:
                        build(BuildOptions(log_dirs=logs, output=ref / "site", workers=2))
                    finally:
                        del os.environ["SOURCE_DATE_EPOCH"]
                    references[state] = _tree(ref / "site")
                    shutil.rmtree(ref)
                same = recovery.returncode == 0 and _tree(site) == references[state]
                result.recovered += same
                if not same:
                    result.notes.append(
                        f"point {point} ({'full' if full else 'incremental'}, "
                        f"{'group' if group else 'main only'}, {at:.2f} s): recovery differs "
                        f"(rc {recovery.returncode}) {recovery.stderr[-200:]!r}"
                    )
                extra = sorted(p.name for p in pub.iterdir() if p.name != "site")
                result.leftover_dirs += len(extra)
                if extra:
                    result.notes.append(f"point {point}: left beside the site: {extra}")
        finally:
            poller.stop.set()
            thread.join(30)
    result.observations, result.broken = poller.observations, poller.broken
    result.notes += poller.examples
    result.notes.append(
        f"a full build took {full_seconds:.2f} s, an incremental one {incremental_seconds:.2f} s"
    )
    return result


def run_kill(args: argparse.Namespace) -> bool:
    with tempfile.TemporaryDirectory(prefix="sitegen-kill-") as tmp:
        result = kill_builds(args.kill_points, args.kill_logs, Path(tmp))
    print(
        f"kill: {result.points} kill -9 points ({result.landed} landed before the build ended; "
        "full and incremental, whole group and main process only), "
        f"{result.observations:,} polled requests against nginx: broken {result.broken}, "
        f"recovered byte for byte {result.recovered}/{result.points}, "
        f"leftover processes {result.leftover_processes}, leftover dirs {result.leftover_dirs}"
    )
    for note in result.notes:
        print(f"kill: {note}")
    met = (
        result.broken == 0
        and result.recovered == result.points
        and result.leftover_processes == 0
        and result.leftover_dirs == 0
        and result.observations > 0
    )
    print(
        f"kill: targets 0 broken, {result.points}/{result.points} recovered, 0 leftovers: "
        f"{'met' if met else 'NOT met'}"
    )
    return met


# ----------------------------------------------------------------------------- resources


def _job_end(lines: list[bytes]) -> dict[str, Any]:
    """Decode a generated log's JobEnd record."""
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def case_big_job_end(directory: Path, size: int) -> str:
    """A JobEnd line carrying a logical plan of ``size`` bytes."""
    lines = list(generate_job(JobSpec(job_id="bigplan", job_name="q", stages=2), seed=1))
    record = _job_end(lines)
    record["data"]["job"]["logical_plan"] = "@@PLAN@@"
    unit = b"Projection: l_returnflag, l_linestatus, sum(l_quantity)\\n  "
    plan = unit * max(1, size // len(unit))
    with (directory / "bigplan.eventlog").open("wb") as out:
        out.writelines(lines[:-1])
        head, tail = json.dumps(record).encode().split(b"@@PLAN@@")
        out.write(head + plan + tail + b"\n")
    return "bigplan"


def case_many_tasks(directory: Path, tasks: int) -> str:
    """A log with ``tasks`` TaskEnd lines."""
    lines = list(generate_job(JobSpec(job_id="manytasks", job_name="q", stages=2), seed=2))
    template = next(line for line in lines if line.startswith(b'{"ev":"TaskEnd"'))
    record = json.loads(template)
    record["data"]["task_id"] = 999_999_999
    text = json.dumps(record, separators=(",", ":")).encode().replace(b"999999999", b"%d")
    with (directory / "manytasks.eventlog").open("wb") as out:
        out.writelines(line for line in lines[:-1] if not line.startswith(b'{"ev":"TaskEnd"'))
        for start in range(0, tasks, 10_000):
            out.write(b"".join(text % n + b"\n" for n in range(start, min(tasks, start + 10_000))))
        out.write(lines[-1])
    return "manytasks"


def case_many_stages(directory: Path, stages: int) -> str:
    """A JobEnd whose stages payload and DOT hold ``stages`` stages."""
    lines = list(generate_job(JobSpec(job_id="manystages", job_name="q", stages=2), seed=3))
    record = _job_end(lines)
    data = record["data"]
    one = data["stages"]["stages"][0]
    one["tasks"] = one.get("tasks", [])[:1]
    data["stages"]["stages"] = [{**one, "stage_id": str(n + 1)} for n in range(stages)]
    data["index"]["num_stages"] = data["index"]["completed_stages"] = stages
    clusters = [
        f'\tsubgraph cluster{n} {{\n\t\tlabel = "Stage {n + 1} [Successful]";\n'
        f'\t\tstage_{n + 1}_0 [shape=box, label="ShuffleWriterExec"]\n\t}}\n'
        for n in range(stages)
    ]
    edges = [f"\tstage_{n}_0 -> stage_{n + 1}_0\n" for n in range(1, stages)]
    data["dot"] = "digraph G {\n" + "".join(clusters) + "".join(edges) + "}\n"
    with (directory / "manystages.eventlog").open("wb") as out:
        out.writelines(lines[:-1])
        out.write(json.dumps(record).encode() + b"\n")
    return "manystages"


def case_dense_dag(directory: Path, clusters: int, edges: int) -> str:
    """A DOT with ``clusters`` stages and ``edges`` stage-to-stage links."""
    lines = list(generate_job(JobSpec(job_id="densedag", job_name="q", stages=2), seed=4))
    record = _job_end(lines)
    dot = ["digraph G {\n"]
    for n in range(clusters):
        dot.append(f'subgraph cluster{n} {{ label = "Stage {n + 1} [Successful]";\n')
        dot.append(f'stage_{n + 1}_0 [shape=box, label="ShuffleWriterExec"] }}\n')
    made = 0
    for span in range(1, clusters):
        for a in range(1, clusters + 1 - span):
            if made == edges:
                break
            dot.append(f"stage_{a}_0 -> stage_{a + span}_0\n")
            made += 1
    record["data"]["dot"] = "".join(dot) + "}\n"
    with (directory / "densedag.eventlog").open("wb") as out:
        out.writelines(lines[:-1])
        out.write(json.dumps(record).encode() + b"\n")
    return "densedag"


def measured_build(logs: Path, out: Path) -> tuple[int, float, int]:
    """Build in a child process; return (exit status, seconds, peak RSS in MB)."""
    command = [sys.executable, "-m", "sitegen", "build", "-q", "--event-log-dir", str(logs)]
    started = time.perf_counter()
    proc = subprocess.Popen([*command, "--output", str(out), "--workers", "1"])
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, time.perf_counter() - started, usage.ru_maxrss // 1024


def layout_times() -> bool:
    """Time the stage DAG layout alone: a 1,000-stage DAG, and the issue's dense one."""
    from sitegen.svg.layered import Box, layered

    rng = random.Random(4)
    stages = [Box(str(n), 140, 60) for n in range(1000)]
    tree = [(str(rng.randrange(n)), str(n)) for n in range(1, 1000)]
    dense = [(str(a), str(a + span)) for span in range(1, 299) for a in range(299 - span)][:12_800]
    ok = True
    for title, boxes, edges, limit in (
        ("1,000-stage DAG", stages, tree, 1.0),
        ("dense DAG of 299 stages, 12,800 edges", stages[:299], dense, 5.0),
    ):
        started = time.process_time()
        layout = layered(boxes, edges)
        seconds = time.process_time() - started
        met = seconds < limit
        ok = ok and met
        print(
            f"resources: layout of a {title}: {seconds:.2f} s of CPU"
            f"{' (simplified)' if layout.simplified else ''}, under {limit:.0f} s: "
            f"{'met' if met else 'NOT met'}"
        )
    return ok


def run_resources(args: argparse.Namespace) -> bool:
    from sitegen.svg.dag import SIMPLIFIED
    from sitegen.text.formatting import MAX_PAGE_TEXT

    s = args.scale
    big = int(200_000_000 * s)
    tasks = int(2_000_000 * s)
    stages = max(100, int(50_000 * s))
    clusters, edges = (299, 12_800) if s >= 0.1 else (99, 1_485)
    cases: list[tuple[str, Callable[[Path], str], str]] = [
        (f"{big / 1e6:,.0f} MB JobEnd line", lambda d: case_big_job_end(d, big), "cut"),
        (f"{tasks:,} TaskEnd lines", lambda d: case_many_tasks(d, tasks), ""),
        (f"{stages:,} stages", lambda d: case_many_stages(d, stages), ""),
        (f"dense DAG, {clusters} stages, {edges:,} edges",
         lambda d: case_dense_dag(d, clusters, edges), "simplified"),
    ]  # fmt: skip
    ok = True
    for title, make, expect in cases:
        with tempfile.TemporaryDirectory(prefix="sitegen-res-") as tmp:
            logs = Path(tmp) / "logs"
            logs.mkdir()
            job_id = make(logs)
            log_mb = sum(p.stat().st_size for p in logs.iterdir()) / 1e6
            rc, seconds, peak = measured_build(logs, Path(tmp) / "site")
            site = Path(tmp) / "site"
            page = site / "jobs" / job_id / "index.html"
            text = page.read_text() if page.is_file() else ""
            api = site / "api/job" / job_id / "index.json"
            said = []
            if "cut here:" in text:
                said.append(f"the page cut the plan at {MAX_PAGE_TEXT:,} characters")
            if SIMPLIFIED in text:
                said.append("the DAG says 'Picture simplified'")
            stage_pages = len(list((site / "jobs" / job_id).glob("stage-*.html")))
            met = rc == 0 and page.is_file()
            if expect == "cut":
                whole = api.is_file() and api.stat().st_size >= big
                met = met and "cut here:" in text and whole
                said.append(f"/api/job/{job_id} {api.stat().st_size / 1e6:,.0f} MB, whole")
            if expect == "simplified":
                met = met and SIMPLIFIED in text
            ok = ok and met
            print(
                f"resources: {title} ({log_mb:,.0f} MB of log): {seconds:.1f} s, peak RSS "
                f"{peak:,} MB; job page {len(text.encode()) / 1e3:,.0f} KB, "
                f"{stage_pages:,} stage pages; "
                + ("; ".join(said) or "nothing cut")
                + f": {'met' if met else 'NOT met'}"
            )
    ok = layout_times() and ok
    print(
        f"resources: targets (finished, cut or simplified where needed): "
        f"{'met' if ok else 'NOT met'}"
    )
    return ok


# ------------------------------------------------------------------------------- hostile

MiB = 1 << 20


def _tree_rss(root: int) -> tuple[int, int]:
    """Return (RSS of the largest process, RSS of all) of ``root`` and its descendants, bytes."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        tree.add(pid)
        todo += [child for child, parent in parents.items() if parent == pid and child not in tree]
    sizes = [rss.get(pid, 0) for pid in tree]
    return max(sizes, default=0), sum(sizes)


def sampled_build(logs: Path, out: Path, *extra: str) -> tuple[int, float, int, int, str]:
    """Build in a child process, sampling memory; (exit, seconds, max RSS, sum RSS, stdout)."""
    command = [sys.executable, "-m", "sitegen", "build", "--format", "json"]
    command += ["--event-log-dir", str(logs), "--output", str(out), *extra]
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak_one = peak_all = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak_one, peak_all
        while not done.wait(0.05):
            one, every = _tree_rss(proc.pid)
            peak_one, peak_all = max(peak_one, one), max(peak_all, every)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out_text, err_text = proc.communicate(timeout=900)
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    return proc.returncode, seconds, peak_one, peak_all, out_text + err_text


def _stream(path: Path, kind: str, pieces: Any) -> None:
    """Write ``pieces`` compressed (``gzip`` or ``zstd``), streaming: a bomb is never held."""
    if kind == "gzip":
        import zlib

        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        with path.open("wb") as out:
            for piece in pieces:
                out.write(packer.compress(piece))
            out.write(packer.flush())
        return
    import zstandard

    with (
        path.open("wb") as raw,
        zstandard.ZstdCompressor(level=3, write_checksum=True).stream_writer(raw) as out,
    ):
        for piece in pieces:
            out.write(piece)


def _blocks(byte: bytes, size: int) -> Any:
    block = byte * MiB
    for _ in range(size // MiB):
        yield block


def _hostile_cases(size: int) -> list[tuple[str, str, Callable[[Path], str], tuple[str, ...]]]:
    """(title, file name, writer of the log, extra build options) of every hostile case."""
    job = list(generate_job(JobSpec(job_id="hostile", job_name="q", stages=2), seed=5))
    gib = f"{size / (1 << 30):g} GiB" if size >= 1 << 30 else f"{size // MiB} MiB"

    def bomb(kind: str, body: Callable[[], Any]) -> Callable[[Path], str]:
        def make(logs: Path) -> str:
            name = f"hostile.eventlog.{'gz' if kind == 'gzip' else 'zst'}"
            _stream(logs / name, kind, body())
            return name

        return make

    def huge_line() -> Any:
        yield job[0]
        yield b'{"ev":"TaskEnd","version":1,"data":"'
        yield from _blocks(b"x", size)

    def after_end() -> Any:
        yield from job
        yield from _blocks(b"x", size)

    def blank_lines() -> Any:
        yield from job[:-1]
        yield from _blocks(b"\n", size // 2)
        yield job[-1]
        yield from _blocks(b"\n", size // 2)

    def text(field: str) -> Callable[[Path], str]:
        def make(logs: Path) -> str:
            long = "t" * (10 * MiB)
            lines = []
            for line in job:
                record = json.loads(line)
                data = record["data"]
                if field == "job_name" and record["ev"] in ("JobStart", "JobEnd"):
                    if record["ev"] == "JobStart":
                        data["job_name"] = long
                    else:
                        data["index"]["job_name"] = data["job"]["job_name"] = long
                if field == "executor_id" and record["ev"] == "TaskEnd":
                    data["executor_id"] = long
                if field == "error" and record["ev"] == "JobEnd":
                    data["status"] = {"Failed": long}
                if field == "config" and record["ev"] == "JobEnd":
                    data["config"]["datafusion.long"] = long
                lines.append(json.dumps(record, separators=(",", ":")).encode() + b"\n")
            (logs / "hostile.eventlog").write_bytes(b"".join(lines))
            return "hostile.eventlog"

        return make

    def collisions(logs: Path) -> str:
        import unicodedata

        for n in range(15):
            for job_id in (f"AbC{n:04d}", f"abc{n:04d}"):
                spec = JobSpec(job_id=job_id, job_name="q", stages=1)
                (logs / f"{job_id}.eventlog").write_bytes(b"".join(generate_job(spec, seed=n)))
        for n in range(15):
            for form in ("NFC", "NFD"):
                job_id = unicodedata.normalize(form, f"café{n}")
                spec = JobSpec(job_id=job_id, job_name="q", stages=1)
                (logs / f"{job_id}.eventlog").write_bytes(b"".join(generate_job(spec, seed=n)))
        return ""

    return [
        (f"gzip bomb, one {gib} line", "gzip", bomb("gzip", huge_line), ()),
        (f"zstd bomb, one {gib} line", "zstd", bomb("zstd", huge_line), ()),
        (f"gzip bomb, {gib} of garbage after JobEnd", "gzip", bomb("gzip", after_end), ()),
        (f"zstd bomb, {gib} of garbage after JobEnd", "zstd", bomb("zstd", after_end), ()),
        (f"gzip bomb, {gib} of empty lines around JobEnd", "gzip", bomb("gzip", blank_lines), ()),
        (f"zstd bomb, {gib} of empty lines around JobEnd", "zstd", bomb("zstd", blank_lines), ()),
        ("10 MiB job_name", "", text("job_name"), ()),
        ("10 MiB executor id", "", text("executor_id"), ()),
        ("10 MiB failure message", "", text("error"), ()),
        ("10 MiB config value", "", text("config"), ()),
        ("30 colliding id pairs (15 by case, 15 NFC/NFD)", "", collisions, ()),
    ]


def run_hostile(args: argparse.Namespace) -> bool:
    size = args.bomb_size
    cache = ROOT / ".bench" / "hostile"
    ok = True
    for title, kind, make, extra in _hostile_cases(size):
        with tempfile.TemporaryDirectory(prefix="sitegen-hostile-") as tmp:
            logs = Path(tmp) / "logs"
            shutil.copytree(EXAMPLE_LOG_DIR, logs)
            key = re.sub(r"[^a-z0-9]+", "-", title.lower())
            kept = cache / key
            if kind and kept.is_dir():  # bombs take a while to make: made once, kept
                name = next(p.name for p in kept.iterdir())
                shutil.copy(kept / name, logs / name)
            else:
                name = make(logs)
                if kind:
                    kept.mkdir(parents=True, exist_ok=True)
                    shutil.copy(logs / name, kept / name)
            log_bytes = sum(p.stat().st_size for p in logs.iterdir())
            hostile = (logs / name).stat().st_size if name else log_bytes
            site = Path(tmp) / "site"
            rc, seconds, one, every, out = sampled_build(logs, site, "--workers", "2", *extra)
            try:
                report = json.loads(out.splitlines()[0])
            except (ValueError, IndexError):
                report = {"jobs_published": -1, "problems": []}
            site_bytes = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
            state = site / ".sitegen-state.sqlite"
            state_bytes = state.stat().st_size if state.is_file() else 0
            # The examples' own site, measured once: what the hostile log adds to it.
            base = _examples_site_bytes()
            pages = [p for p in site.rglob("*.html") if "api" not in p.parts]
            biggest = max((p.stat().st_size for p in pages), default=0)
            said = [p["message"] for p in report["problems"] if p["file"] == name] if name else []
            kinds = Counter(p["kind"] for p in report["problems"])
            # The examples publish 25 jobs; a long-text job is one more, the colliding ids 60.
            expected = 25 if kind else (26 if name else 85)
            published = report["jobs_published"]
            added = site_bytes - base
            met = (
                rc == 0
                and "Traceback" not in out
                and one < 1 << 30
                and (published >= expected if kind else published == expected)
                and (biggest < 2_000_000)
                and (kind != "" or added <= 4 * hostile + 200_000 * (30 if not name else 1))
                and seconds < 60
            )
            ok = ok and met
            detail = f"; {said[0][:90]}" if said else ""
            if not name:
                detail = f"; {kinds['id-collision']} id-collision warnings"
            print(
                f"hostile: {title} ({hostile / 1e3:,.0f} KB on disk): exit {rc}, {seconds:.1f} s, "
                f"peak RSS {one / MiB:,.0f} MB largest process / {every / MiB:,.0f} MB all, "
                f"{published} jobs published, site +{added / 1e6:,.2f} MB "
                f"({added / hostile:.2f} bytes a log byte; state {state_bytes / 1e6:,.1f} MB), "
                f"largest page {biggest / 1e3:,.0f} KB{detail}: {'met' if met else 'NOT met'}"
            )
    print(
        f"hostile: targets (exit 0, others published, < 1 GiB a process, < 60 s, pages < 2 MB, "
        f"site <= 4x the log + 200 KB): {'met' if ok else 'NOT met'}"
    )
    return ok


_EXAMPLES_SITE: list[int] = []


def _examples_site_bytes() -> int:
    """Return the bytes of the examples' site built alone (once)."""
    if not _EXAMPLES_SITE:
        with tempfile.TemporaryDirectory(prefix="sitegen-hostile-") as tmp:
            site = Path(tmp) / "site"
            subprocess.run(
                [sys.executable, "-m", "sitegen", "build", "-q", "--event-log-dir",
                 str(EXAMPLE_LOG_DIR), "--output", str(site), "--workers", "2"],
                check=True,
            )  # fmt: skip
            _EXAMPLES_SITE.append(sum(p.stat().st_size for p in site.rglob("*") if p.is_file()))
    return _EXAMPLES_SITE[0]


# --------------------------------------------------------------------------------- main

PARTS = ("fuzz", "xss", "kill", "resources", "hostile")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(PARTS), help="Comma-separated parts to run.")
    parser.add_argument("--quick", action="store_true", help="CI budgets: seconds a part.")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--fuzz-seconds", type=float, default=None)
    parser.add_argument("--fuzz-executions", type=int, default=1_000_000)
    parser.add_argument(
        "--render-every", type=int, default=1000, help="Run the whole map step every N executions."
    )
    parser.add_argument("--crash-dir", type=Path, default=None, help="Keep crashing inputs here.")
    parser.add_argument("--xss-per-field", type=int, default=None)
    parser.add_argument("--kill-points", type=int, default=20)
    parser.add_argument("--kill-logs", type=int, default=None)
    parser.add_argument("--scale", type=float, default=None, help="Resource case sizes, 0..1.")
    parser.add_argument(
        "--bomb-size", type=int, default=None, help="Bytes a hostile bomb inflates to."
    )
    args = parser.parse_args()
    if args.fuzz_seconds is None:
        args.fuzz_seconds = 5.0 if args.quick else 3600.0
    if args.xss_per_field is None:
        args.xss_per_field = 10 if args.quick else 1
    if args.kill_logs is None:
        args.kill_logs = 8 if args.quick else 60
    if args.scale is None:
        args.scale = 0.01 if args.quick else 1.0
    if args.bomb_size is None:
        args.bomb_size = 512 * MiB if args.quick else 10 << 30
    runners: dict[str, Callable[[argparse.Namespace], bool]] = {"fuzz": run_fuzz}
    for name, runner in (
        ("xss", "run_xss"),
        ("kill", "run_kill"),
        ("resources", "run_resources"),
        ("hostile", "run_hostile"),
    ):
        if runner in globals():
            runners[name] = globals()[runner]
    ok = True
    for part in args.only.split(","):
        ok = runners[part](args) and ok
    print(f"all targets met: {'yes' if ok else 'no'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
