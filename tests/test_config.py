"""sitegen.toml and SITEGEN_* variables: precedence, errors, and the options table in the docs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from sitegen import config
from sitegen.cli import cli

ROOT = Path(__file__).resolve().parent.parent


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run the CLI in ``cwd`` and return (exit code, output)."""
    runner = CliRunner()
    old = Path.cwd()
    try:
        import os

        os.chdir(cwd)
        result = runner.invoke(cli, args, env=env or {})
    finally:
        os.chdir(old)
    return result.exit_code, result.output


def published_title(site: Path) -> str:
    found = re.search(r"<title>([^<]*)</title>", (site / "index.html").read_text())
    assert found is not None
    return found.group(1)


@pytest.mark.slow  # five builds through the CLI
def test_precedence_flag_env_file_default(tmp_path: Path, example_logs: Path) -> None:
    (tmp_path / "sitegen.toml").write_text(
        f'event_log_dir = "{example_logs.name}"\noutput = "from-file"\ntitle = "File title"\n'
    )
    code, out = run(["build", "--format", "json"], tmp_path)
    assert code == 0, out
    assert json.loads(out)["jobs_published"] == 25
    assert "File title" in published_title(tmp_path / "from-file")

    env = {"SITEGEN_TITLE": "Env title", "SITEGEN_OUTPUT": "from-env"}
    assert run(["build", "-q"], tmp_path, env)[0] == 0
    assert "Env title" in published_title(tmp_path / "from-env")

    code, _ = run(["build", "-q", "--title", "Flag title", "--output", "from-flag"], tmp_path, env)
    assert code == 0
    assert "Flag title" in published_title(tmp_path / "from-flag")
    # Without a file the built-in default applies (the bundled examples, ./site).
    (tmp_path / "sitegen.toml").unlink()
    assert run(["build", "-q"], tmp_path)[0] == 0
    assert "Ballista job history" in published_title(tmp_path / "site")


def test_config_paths_are_relative_to_the_file(tmp_path: Path, example_logs: Path) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "history.toml").write_text(
        'event_log_dir = ["../logs"]\noutput = "../out"\nmax_jobs = 3\nraw_logs = false\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, out = run(["build", "--config", str(conf / "history.toml")], elsewhere)
    assert code == 0, out
    assert out.startswith(f"Published 3 of 25 jobs from 28 logs to {tmp_path / 'conf/../out'} ")
    assert "22 completed jobs are outside the retention." in out
    assert len(json.loads((tmp_path / "out/api/jobs").read_bytes())) == 3
    assert not list((tmp_path / "out/jobs").glob("*/eventlog.gz"))


def test_serve_keys_are_accepted_by_build(tmp_path: Path, example_logs: Path) -> None:
    (tmp_path / "sitegen.toml").write_text(
        f'event_log_dir = "{example_logs}"\nport = 9000\nhost = "127.0.0.1"\n'
    )
    assert run(["build", "-q"], tmp_path)[0] == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'outptu = "x"\n',
            "Error: sitegen.toml: unknown key 'outptu' (see `sitegen build --help`)",
        ),
        (
            'max_jobs = "ten"\n',
            "Error: sitegen.toml: key 'max_jobs' must be a whole number, not 'ten'",
        ),
        ("max_jobs = -1\n", "Error: sitegen.toml: key 'max_jobs': -1 is not in the range x>=0."),
        ('strict = "yes"\n', "Error: sitegen.toml: key 'strict' must be true or false, not 'yes'"),
        ("title = 3\n", "Error: sitegen.toml: key 'title' must be a string, not 3"),
        (
            'format = "xml"\n',
            "Error: sitegen.toml: key 'format': 'xml' is not one of 'text', 'json'.",
        ),
        (
            "output = \n",
            "Error: sitegen.toml: not valid TOML: Invalid value (at line 1, column 10)",
        ),
    ],
)
def test_config_errors_name_the_key_and_file(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "sitegen.toml").write_text(text)
    code, out = run(["build"], tmp_path)
    assert code == 2
    assert out.splitlines()[-1] == message
    assert not (tmp_path / "site").exists()


def test_bad_max_age_is_a_clear_error(tmp_path: Path, example_logs: Path) -> None:
    code, out = run(["build", "--event-log-dir", str(example_logs), "--max-age", "soon"], tmp_path)
    assert code == 1
    assert out == "Error: max age 'soon' is not a number followed by s, m, h, d or w\n"


def _options() -> list[tuple[str, click.Option]]:
    return [
        (name, p)
        for name, command in cli.commands.items()
        for p in command.params
        if isinstance(p, click.Option)
    ]


def test_every_option_is_documented_in_the_configuration_page() -> None:
    # The README keeps the few options most people set; the full table lives here.
    reference = (ROOT / "docs/configuration.md").read_text()
    missing = [
        f"{name} {opt}"
        for name, p in _options()
        for opt in (max(p.opts, key=len), *p.secondary_opts)
        if f"`{opt}" not in reference
    ]
    assert missing == []
    keys = {config.key_of(p) for name, p in _options() if name != "host-config"}
    table = set(re.findall(r"^\| `([a-z_]+)` \|", reference, flags=re.M))
    assert keys - {"config"} <= table, keys - table


def test_help_lists_defaults_and_variables() -> None:
    out = CliRunner().invoke(cli, ["build", "--help"], terminal_width=200).output
    assert "[env var: SITEGEN_OUTPUT; default: site]" in out
    assert "[env var: SITEGEN_MAX_JOBS; x>=0]" in out
    assert "default: no-robots" in out
