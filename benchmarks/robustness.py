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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.servers: the same nginx the tests start

from sitegen.builder.mapstep import process_log, root_parents  # noqa: E402
from sitegen.eventlog.classify import judge  # noqa: E402
from sitegen.eventlog.discover import LogFile  # noqa: E402
from sitegen.eventlog.reader import read_log  # noqa: E402
from sitegen.examples import EXAMPLE_LOG_DIR  # noqa: E402
from sitegen.examples.generator import JobSpec, generate_job  # noqa: E402
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
    value = rng.choice([b'"12"', b"null", b"true", b"[]", b"{}", b"[1,2]", b'{"a":1}', b"-1", b'""'])
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
    for path in sorted(EXAMPLE_LOG_DIR.glob("*.eventlog*"))[:count]:
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
    seeds = fuzz_seeds(6)
    result = FuzzResult()
    work = Path(tempfile.mkdtemp(prefix="sitegen-fuzz-"))
    pages = PageRenderer(raw_logs=True)
    pages.warm()
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
                    outcome, _ = process_log(log, staging, staging / "part", pages)
                    shutil.rmtree(staging)
                    result.classes[str(outcome.classification)] += 1
                    result.rendered += 1
                else:
                    read = read_log(path, data)
                    judge(log, read)  # what `check` adds to reading
                    result.classes[str(read.classification)] += 1
            except Exception as exc:  # noqa: BLE001 - escaped: exactly what is counted
                result.escaped += 1
                key = f"{type(exc).__name__} ({'+'.join(sorted(set(names)))})"
                if key not in result.crashes:
                    result.crashes[key] = "".join(traceback.format_exception(exc, limit=-3))
                    if crash_dir is not None:
                        crash_dir.mkdir(parents=True, exist_ok=True)
                        (crash_dir / f"crash{len(result.crashes)}.eventlog").write_bytes(data)
            result.executions += 1
            if progress and result.executions % progress == 0:
                print(f"fuzz: … {result.executions:,} executions, {result.escaped} escaped", flush=True)
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
            quoted = json.dumps(text)
            data["dot"] = DOT_LABEL.sub(lambda _: f"label = {quoted}", data["dot"])
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

    from sitegen.builder.pipeline import BuildOptions, build
    from tests.conftest import CHROMIUM_ARGS
    from tests.servers import http_server, nginx

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


# --------------------------------------------------------------------------------- main

PARTS = ("fuzz", "xss", "kill", "resources")


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
    args = parser.parse_args()
    if args.fuzz_seconds is None:
        args.fuzz_seconds = 5.0 if args.quick else 3600.0
    if args.xss_per_field is None:
        args.xss_per_field = 10 if args.quick else 1
    if args.kill_logs is None:
        args.kill_logs = 8 if args.quick else 60
    if args.scale is None:
        args.scale = 0.01 if args.quick else 1.0
    runners: dict[str, Callable[[argparse.Namespace], bool]] = {"fuzz": run_fuzz}
    for name, runner in (("xss", "run_xss"), ("kill", "run_kill"), ("resources", "run_resources")):
        if runner in globals():
            runners[name] = globals()[runner]
    ok = True
    for part in args.only.split(","):
        ok = runners[part](args) and ok
    print(f"all targets met: {'yes' if ok else 'no'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
