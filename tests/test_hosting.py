"""The /api mirror on a real nginx (configured host) and on python -m http.server (zero-config)."""

from __future__ import annotations

import contextlib
import gzip
import http.client
import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, unquote, urljoin, urlsplit

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.report import BuildReport
from sitegen.examples import EXAMPLE_LOG_DIR
from sitegen.layout import STATE_NAME
from sitegen.publish.hosting import HIDDEN, PAGE_CACHE, STATIC_CACHE
from tests.conftest import require
from tests.helpers.endpoints import endpoints
from tests.helpers.logs import job_lines, write
from tests.helpers.servers import Response, apache, caddy, get, http_server, nginx

UGLY_IDS = ["with space", "100%done", "a#b", "why?", "a+b", "ünïcødé-日本", ".dotted", "stages"]


@pytest.fixture(scope="module")
def ugly_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ugly")
    logs = root / "logs"
    logs.mkdir()
    for n, job_id in enumerate(UGLY_IDS):
        write(logs / f"ugly-{n}.eventlog", job_lines(job_id, name=f"<b>{job_id}</b>", stages=3))
    report = build(BuildOptions(logs, root / "site"))
    assert report.published == len(UGLY_IDS)
    return root / "site"


@pytest.fixture(scope="module")
def root_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled examples built with --base-url / (read-only)."""
    site = tmp_path_factory.mktemp("root-site") / "site"
    build(BuildOptions(EXAMPLE_LOG_DIR, site, base_url="/"))
    return site


def test_every_endpoint_is_listed(example_site: tuple[Path, BuildReport]) -> None:
    site, report = example_site
    paths = [url for url, _, _ in endpoints(site)]
    # 5 site endpoints, 4 per job, one per stage.
    assert len(paths) == 5 + 4 * report.published + sum(j.num_stages for j in report.jobs)


# The configured hosts, each run for real from the config sitegen writes for it.
HOSTS = {"nginx": (nginx, "nginx"), "apache": (apache, "apache2"), "caddy": (caddy, "caddy")}


@contextlib.contextmanager
def configured_host(host: str, site: Path, workdir: Path) -> Iterator[int]:
    """Serve ``site`` with a real ``host`` configured as sitegen says; yield its port."""
    start, binary = HOSTS[host]
    with start(require(binary), site, workdir) as port:
        yield port


@pytest.mark.slow  # a real server
@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("which", ["examples", "ugly"])
def test_configured_host_serves_exact_paths(
    which: str, host: str, example_site: tuple[Path, BuildReport], ugly_site: Path, tmp_path: Path
) -> None:
    site = example_site[0] if which == "examples" else ugly_site
    with configured_host(host, site, tmp_path / host) as port:
        count = 0
        for url, exact, endpoint in endpoints(site):
            for query in ("", "?plan_format=tree"):
                resp = get(port, url + query)
                assert resp.status == 200, (url, resp.status)
                assert resp.body == (site / exact).read_bytes(), url
                assert resp.headers["content-type"] == endpoint.body.value, url
                assert resp.headers["access-control-allow-origin"] == "*"
                count += 1
        assert count > 40
        missing = ["/api/job/nope", "/api/job/nope/stages", "/api/nothing", "/nope.html"]
        for path in missing + [f"/{name}" for name in HIDDEN]:
            resp = get(port, path)
            assert resp.status == 404, path
            assert b"Not found" in resp.body, path
            assert resp.headers["content-type"] == "text/html; charset=utf-8", path
        page = get(port, "/")
        assert page.status == 200 and page.headers["content-type"] == "text/html; charset=utf-8"


@pytest.mark.slow  # a real server
@pytest.mark.parametrize("host", HOSTS)
def test_configured_host_serves_pages_and_assets_alike(
    host: str, example_site: tuple[Path, BuildReport], ugly_site: Path, tmp_path: Path
) -> None:
    site, report = example_site
    job = quote(report.jobs[0].job_id, safe="")
    with configured_host(host, site, tmp_path / host) as port:
        types = {
            f"/jobs/{job}/": "text/html; charset=utf-8",
            "/static/style.css": "text/css; charset=utf-8",
            "/static/tables.js": "text/javascript; charset=utf-8",
            f"/jobs/{job}/eventlog.gz": "application/gzip",
        }
        for path, expected in types.items():
            resp = get(port, path)
            assert (resp.status, resp.headers["content-type"]) == (200, expected), path
        assert get(port, "/static/favicon.svg").headers["content-type"].startswith("image/svg+xml")
    with configured_host(host, ugly_site, tmp_path / f"{host}-ugly") as port:
        for job_id in UGLY_IDS:
            page = ugly_site / "jobs" / job_id / "index.html"
            url = f"/jobs/{quote(job_id, safe='')}/"
            resp = get(port, url)
            assert (resp.status, resp.body) == (200, page.read_bytes()), job_id
            # Pages link relatively: without the slash, the host redirects to it.
            for query in ("", "?from=list"):
                moved = get(port, url.rstrip("/") + query)
                assert moved.status in (301, 308), job_id
                location = urlsplit(moved.headers["location"])
                assert unquote(location.path) == f"/jobs/{job_id}/", (job_id, query)
                assert location.query == query[1:], (job_id, query)


@pytest.mark.slow  # a real server
@pytest.mark.parametrize(
    ("host", "base_url"),
    [("nginx", None), ("caddy", None), ("apache", None), ("nginx", "/"), ("caddy", "/")],
)
def test_404_page_deep_in_the_site_links_back(
    host: str,
    base_url: str | None,
    example_site: tuple[Path, BuildReport],
    root_site: Path,
    tmp_path: Path,
) -> None:
    # The examples built with this base URL (example_site: with none), shared by the hosts.
    site = {None: example_site[0], "/": root_site}[base_url]
    with configured_host(host, site, tmp_path / host) as port:
        page = get(port, "/jobs/no-such-job/deeper/stage-9.html")
        assert page.status == 404 and b"Not found" in page.body
        # Every link but the in-page ones (the skip link to #main).
        hrefs = re.findall(r'href="([^"#][^"]*)"', page.body.decode())
        assert len(hrefs) >= 8
        # Resolve each link as a browser would, against the address the 404 was shown at.
        statuses = {
            h: get(port, urlsplit(urljoin("/jobs/no-such-job/deeper/", h)).path).status
            for h in hrefs
        }
    # Without --base-url the page links from the host's root, where these configs serve it.
    assert set(statuses.values()) == {200}, statuses
    assert "/static/style.css" in hrefs
    # What the page says where it cannot know its address: only without --base-url.
    assert (b"--base-url" in page.body) == (base_url is None)


def test_nginx_config_from_cli_is_complete(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from sitegen.cli import cli

    result = CliRunner().invoke(
        cli, ["host-config", "nginx", "--root", str(tmp_path), "--listen", "127.0.0.1:9"]
    )
    assert result.exit_code == 0
    assert result.output.startswith("# Generated by `sitegen host-config nginx`")
    assert f"root {tmp_path.resolve()};" in result.output
    assert "listen 127.0.0.1:9;" in result.output
    assert result.output.count("{") == result.output.count("}")
    caddy = CliRunner().invoke(cli, ["host-config", "caddy", "--root", str(tmp_path)])
    assert "http://127.0.0.1:8080 {" in caddy.output and "file_server" in caddy.output


class CountingRedirects(urllib.request.HTTPRedirectHandler):
    def __init__(self) -> None:
        self.hops = 0

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        self.hops += 1
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def fetch_following(port: int, path: str) -> tuple[bytes, int, str]:
    """GET like reqwest does: follow redirects; return body, hops and final path."""
    counter = CountingRedirects()
    opener = urllib.request.build_opener(counter)
    with opener.open(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
        return resp.read(), counter.hops, urlsplit(resp.geturl()).path


@pytest.mark.slow  # a real server
@pytest.mark.parametrize("which", ["examples", "ugly"])
def test_zero_config_host_answers_every_endpoint(
    which: str, example_site: tuple[Path, BuildReport], ugly_site: Path
) -> None:
    site = example_site[0] if which == "examples" else ugly_site
    with http_server(site) as port:
        for url, exact, endpoint in endpoints(site):
            body, hops, final = fetch_following(port, url + "?plan_format=tree")
            if endpoint.is_prefix:
                # One redirect to the directory, then its HTML-safe copy.
                assert hops == 1 and final.endswith("/"), url
                assert b"<" not in body and b">" not in body, url
                assert json.loads(body) == json.loads((site / exact).read_bytes()), url
            else:
                # A plain file: no redirect, exact bytes (served as octet-stream, never HTML).
                assert hops == 0, url
                assert body == (site / exact).read_bytes(), url
        with pytest.raises(urllib.error.HTTPError) as err:
            fetch_following(port, "/api/job/" + quote("no such job", safe=""))
        assert err.value.code == 404


def test_host_files_are_written(example_site: tuple[Path, BuildReport]) -> None:
    site, _ = example_site
    assert (site / ".nojekyll").read_bytes() == b""
    htaccess = (site / ".htaccess").read_text()
    # (What Apache makes of it is tested on a real Apache above.)
    # Each extensionless endpoint file is typed by name, and by its own body type only.
    typed = dict(re.findall(r'<FilesMatch "(.+)">\n\s+ForceType "?([^"\n]+)"?\n', htaccess))
    for _, exact, endpoint in endpoints(site):
        name = exact.name
        matches = [kind for pattern, kind in typed.items() if re.fullmatch(pattern, name)]
        assert matches == [endpoint.body.value], exact
    headers = (site / "_headers").read_text()
    assert headers.startswith("/api/*\n  Access-Control-Allow-Origin: *\n")
    assert (
        "/api/job/:job_id/stage/:stage_id/dot\n  Content-Type: text/plain; charset=utf-8\n"
        in headers
    )
    assert "/api/job/:job_id/stages\n  Content-Type: application/json\n" in headers
    redirects = (site / "_redirects").read_text().splitlines()
    # The state and its journals answer 404 on Netlify too (nginx, Caddy, Apache: above).
    hidden = [f"/{n}  /404.html  404!" for n in HIDDEN if n.startswith(".sitegen")]
    assert STATE_NAME in hidden[0] and len(hidden) == 5
    assert redirects[1 : 1 + len(hidden)] == hidden
    assert redirects[-1] == "/api/job/:job_id  /api/job/:job_id/index.json  200!"


def _get_gzip(port: int, path: str) -> Response:
    """GET ``path`` as a browser does, accepting gzip; the body stays as sent."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers={"Accept-Encoding": "gzip"})
        resp = conn.getresponse()
        return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


@pytest.mark.slow  # a real server
@pytest.mark.parametrize("host", ["nginx", "caddy"])
def test_assets_travel_compressed_with_a_cache_lifetime(
    host: str, example_site: tuple[Path, BuildReport], tmp_path: Path
) -> None:
    site = example_site[0]
    with configured_host(host, site, tmp_path / host) as port:
        for path in ("/static/style.css", "/static/tables.js", "/index.html"):
            resp = _get_gzip(port, path)
            assert resp.status == 200, path
            assert resp.headers.get("content-encoding") == "gzip", path
            assert gzip.decompress(resp.body) == (site / path.lstrip("/")).read_bytes(), path
            lifetime = resp.headers.get("cache-control")
            # Assets keep their names across builds: an hour; pages revalidate every time.
            assert lifetime == (STATIC_CACHE if "static" in path else PAGE_CACHE), path
        # The API's bodies are served as stored, even to a client that accepts gzip.
        api = _get_gzip(port, "/api/jobs")
        assert "content-encoding" not in api.headers
        assert api.body == (site / "api/jobs").read_bytes()
