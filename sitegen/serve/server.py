"""``sitegen serve``: build, serve the site at the exact ``/api/*`` paths, rebuild on change.

It rebuilds with the engine of ``sitegen build --watch`` (``builder.watch``). A stdlib HTTP
server stands in for the ``livereload`` package: livereload injects its
script into any body containing ``</head>`` whatever the content type (a job named
``</head>`` would corrupt the JSON), and its script comes from another port, which the
pages' Content-Security-Policy (``script-src 'self'``) blocks.
"""

from __future__ import annotations

import errno
import http.server
import json
import mimetypes
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from sitegen.builder.watch import Publish, Watcher
from sitegen.errors import UsageError
from sitegen.layout import CONTENT_TYPES, files_for, match
from sitegen.publish.hosting import HIDDEN
from sitegen.render.templates import default_template_dir

if TYPE_CHECKING:
    from sitegen.builder.options import BuildOptions
    from sitegen.builder.plan.events import Hint
    from sitegen.builder.report import BuildReport

RELOAD_PREFIX = "/__sitegen/"
RELOAD_SCRIPT = f'<script src="{RELOAD_PREFIX}livereload.js"></script>'.encode()
SCRIPT_FILE = Path(__file__).parent / "livereload.js"
POLL_SECONDS = 25.0


@dataclass
class Generation:
    """The state pages poll: a counter bumped by every good rebuild, and the last error."""

    number: int = 0
    error: str | None = None


class SiteState:
    """What the server and the rebuild thread share."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.generation = Generation()
        self.changed = threading.Condition()

    def publish(self, error: str | None) -> None:
        """Record a rebuild's result and wake every waiting page."""
        with self.changed:
            if error is None:
                self.generation.number += 1
            self.generation.error = error
            self.changed.notify_all()

    def wait(self, since: int, seen_error: str | None, timeout: float) -> Generation:
        """Block until a rebuild newer than ``since`` (or a new error), or the timeout."""
        with self.changed:
            self.changed.wait_for(
                lambda: self.generation.number > since or self.generation.error != seen_error,
                timeout,
            )
            return Generation(self.generation.number, self.generation.error)


def resolve(root: Path, url_path: str) -> tuple[Path | None, str | None]:
    """Map a request path to (file, redirect) exactly as the generated nginx config does."""
    decoded = unquote(url_path)
    if "\x00" in decoded or any(part == ".." for part in decoded.split("/")):
        return None, None
    if decoded.lstrip("/") in HIDDEN:
        return None, None
    real_root = root.resolve()
    if decoded.startswith("/api/"):
        for rel in files_for(decoded):
            candidate = root / rel
            if candidate.is_file() and candidate.resolve().is_relative_to(real_root):
                return candidate, None
        return None, None
    target = root / decoded.lstrip("/")
    if not target.resolve().is_relative_to(real_root):
        return None, None
    if target.is_dir():
        if not url_path.endswith("/"):
            return None, url_path.rsplit("/", 1)[-1] + "/"
        target = target / "index.html"
    return (target, None) if target.is_file() else (None, None)


def content_type(url_path: str, path: Path) -> str:
    """Return the content type a configured host sends: by endpoint, else by extension."""
    endpoint = match(unquote(url_path))
    if endpoint is not None:
        return endpoint.body.value
    guessed = mimetypes.guess_type(path.name)[0]
    return CONTENT_TYPES.get(path.suffix.lstrip(".")) or guessed or "application/octet-stream"


def make_handler(
    state: SiteState, base_path: str = "/"
) -> type[http.server.BaseHTTPRequestHandler]:
    """Return a request handler class bound to ``state``, serving the site at ``base_path``."""

    class Handler(http.server.BaseHTTPRequestHandler):
        server_version = "sitegen-serve"

        def log_message(self, format: str, *args: object) -> None:
            """Stay quiet: the console is for build summaries."""

        def do_GET(self) -> None:
            """Serve a file, the reload script, or a long-poll for the next rebuild."""
            path = urlsplit(self.path).path
            if path.startswith(RELOAD_PREFIX):
                self._reload(path, urlsplit(self.path).query)
                return
            file: Path | None = None
            redirect: str | None = None
            if path + "/" == base_path:
                redirect = base_path
            elif path.startswith(base_path):
                # The site as the host will serve it, under the path of --base-url.
                path = "/" + path[len(base_path) :]
                file, redirect = resolve(state.root, path)
            if redirect is not None:
                self.send_response(301)
                self.send_header("Location", redirect)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if file is None:
                status, file, ctype = 404, state.root / "404.html", CONTENT_TYPES["html"]
            else:
                status, ctype = 200, content_type(path, file)
            body = file.read_bytes() if file.is_file() else b"Not found"
            if ctype.startswith("text/html") and not path.startswith("/api/"):
                body = inject(body)
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            if path.startswith("/api/"):
                self.send_header("Access-Control-Allow-Origin", "*")
            self.end_headers()
            self.wfile.write(body)

        def _reload(self, path: str, query: str) -> None:
            """Answer the reload script and its long-poll."""
            if path == RELOAD_PREFIX + "livereload.js":
                body, ctype = SCRIPT_FILE.read_bytes(), CONTENT_TYPES["js"]
            elif path == RELOAD_PREFIX + "poll":
                params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
                since = int(params.get("since", "-1") or -1)
                seen = unquote(params["error"]) if params.get("error") else None
                gen = state.wait(since, seen, POLL_SECONDS if since >= 0 else 0)
                body = json.dumps({"generation": gen.number, "error": gen.error}).encode()
                ctype = CONTENT_TYPES["json"]
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

    return Handler


def inject(html: bytes) -> bytes:
    """Add the reload script to an HTML page (a same-origin file, allowed by the CSP)."""
    at = html.rfind(b"</body>")
    return html[:at] + RELOAD_SCRIPT + html[at:] if at >= 0 else html + RELOAD_SCRIPT


def serve(
    options: BuildOptions,
    build: Callable[[Hint | None], BuildReport],
    output: Path,
    host: str,
    port: int,
    on_build: Callable[[BuildReport | None, str | None], None],
    ready: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
    base_path: str = "/",
) -> None:
    """Build once, then serve ``output`` at ``base_path`` and rebuild when a watched path changes.

    Setting ``stop`` (or Ctrl-C) shuts the server down.
    """
    state = SiteState(output)
    try:
        httpd = http.server.ThreadingHTTPServer((host, port), make_handler(state, base_path))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            message = f"port {port} on {host} is already in use; choose another with --port"
            raise UsageError(message) from None
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    httpd.daemon_threads = True

    def published(done: Publish) -> None:
        # A failed rebuild (a broken template too) keeps serving the last good site.
        on_build(done.report, done.error)
        state.publish(done.error)

    # The same engine as `sitegen build --watch`, watching the shipped templates too; a failed
    # rebuild (a template being edited) waits for the next change, not for a timer.
    watcher = Watcher(
        options,
        lambda _, hint: build(hint),
        published,
        extra_paths=[default_template_dir()],
        retry=None,
    )
    if stop is not None:
        watcher.stop = stop
    stop = watcher.stop
    # Watching starts before the first build: a log written while it runs is seen.
    watcher.begin()
    try:
        on_build(build(None), None)
    except BaseException:
        httpd.server_close()
        raise
    state.publish(None)

    def shut_down_on_stop() -> None:
        stop.wait()
        httpd.shutdown()

    threading.Thread(target=watcher.loop, daemon=True).start()
    threading.Thread(target=shut_down_on_stop, daemon=True).start()
    if ready:
        ready(f"http://{host}:{httpd.server_address[1]}{base_path}")
    try:
        httpd.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        httpd.server_close()
