"""Start real servers on 127.0.0.1 for the tests: nginx, Apache, Caddy, python -m http.server."""

from __future__ import annotations

import contextlib
import http.client
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sitegen.publish import hosting


def free_port() -> int:
    """Return a TCP port that is free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """Wait until something accepts connections on ``port``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on {port}")


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes


def get(port: int, path: str) -> Response:
    """GET ``path`` once, without following redirects."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


@contextlib.contextmanager
def nginx(nginx_bin: str, site: Path, workdir: Path) -> Iterator[int]:
    """Run nginx in the foreground with sitegen's generated server block."""
    port = free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    server = hosting.nginx(site.resolve(), f"127.0.0.1:{port}")
    temp = "".join(
        f"    {name}_temp_path {workdir}/{name};\n"
        for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    conf = workdir / "nginx.conf"
    conf.write_text(
        ("user root;\n" if os.geteuid() == 0 else "")
        + f"daemon off;\npid {workdir}/nginx.pid;\nerror_log {workdir}/error.log;\n"
        + "events { worker_connections 64; }\n"
        + f"http {{\n    access_log off;\n{temp}"
        + server
        + "}\n"
    )
    with running([nginx_bin, "-p", str(workdir), "-c", str(conf)], port):
        yield port


# The modules the site's .htaccess needs, and what serving files needs at all.
APACHE_MODULES = ("mpm_event", "authz_core", "dir", "mime", "rewrite", "headers")


@contextlib.contextmanager
def apache(apache_bin: str, site: Path, workdir: Path) -> Iterator[int]:
    """Run Apache in the foreground on a copy of the site, obeying its ``.htaccess``."""
    port = free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    modules = Path("/usr/lib/apache2/modules")
    loads = "".join(f"LoadModule {m}_module {modules}/mod_{m}.so\n" for m in APACHE_MODULES)
    # Apache will not serve as root: it drops to www-data, which must be able to read the
    # site; pytest's temp dirs are private, so the site is copied to a readable place.
    with tempfile.TemporaryDirectory(prefix="sitegen-apache-") as shared:
        os.chmod(shared, 0o755)
        root = Path(shared) / "site"
        shutil.copytree(site, root)
        user = "User www-data\nGroup www-data\n" if os.geteuid() == 0 else ""
        conf = workdir / "httpd.conf"
        conf.write_text(
            f"{loads}{user}ServerName localhost\nListen 127.0.0.1:{port}\n"
            f"PidFile {workdir}/httpd.pid\nErrorLog {workdir}/error.log\n"
            f"Mutex file:{workdir} default\n"
            "TypesConfig /etc/mime.types\n"
            f'DocumentRoot "{root}"\n'
            f'<Directory "{root}">\n  AllowOverride All\n  Require all granted\n</Directory>\n'
        )
        with running([apache_bin, "-X", "-f", str(conf)], port):
            yield port


@contextlib.contextmanager
def caddy(caddy_bin: str, site: Path, workdir: Path) -> Iterator[int]:
    """Run Caddy with ``sitegen host-config caddy``'s Caddyfile (admin endpoint off)."""
    port = free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    conf = workdir / "Caddyfile"
    conf.write_text("{\n    admin off\n}\n" + hosting.caddy(site.resolve(), f"127.0.0.1:{port}"))
    # Caddy keeps state under $HOME / XDG dirs: keep it in the test's directory.
    env = {**os.environ, "HOME": str(workdir), "XDG_DATA_HOME": str(workdir / "data"),
           "XDG_CONFIG_HOME": str(workdir / "config")}  # fmt: skip
    command = [caddy_bin, "run", "--config", str(conf), "--adapter", "caddyfile"]
    with running(command, port, quiet=True, env=env):
        yield port


@contextlib.contextmanager
def http_server(site: Path) -> Iterator[int]:
    """Run ``python -m http.server`` on the site: the zero-config host."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "http.server",
        str(port),
        "--bind",
        "127.0.0.1",
        "-d",
        str(site),
    ]
    with running(command, port, quiet=True):
        yield port


@contextlib.contextmanager
def running(
    command: list[str], port: int, quiet: bool = False, env: dict[str, str] | None = None
) -> Iterator[None]:
    """Run a server process until the block ends, once it accepts connections on ``port``."""
    out = subprocess.DEVNULL if quiet else None
    proc = subprocess.Popen(command, stdout=out, stderr=out, env=env)
    try:
        wait_for_port(port, proc)
        yield
    finally:
        proc.terminate()
        proc.wait(10)
