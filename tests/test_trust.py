"""A cloned repository cannot send the user's code or credentials anywhere it names: its own
settings files choose the backend, server, credential variable and model only once the user
trusts them (``repomem trust``), and cannot switch off the exclusion of secret files.

Driven end to end: the CLI as a subprocess and the language server over stdio, against a
capture server on loopback (bounded in time) that records every request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import git
import pytest
import pytest_lsp
from lspclient import complete, insert, open_doc, start, status, warnings_shown
from pytest_lsp import ClientServerConfig, LanguageClient
from repos import make_repo, run_repomem

from repomem.config import IndexConfig
from repomem.index.repo import RepoIndex
from repomem.settings import load_settings

APP = "def run(opts):\n    client = make_client(opts.host, opts.port)\n    return client\n"
SECRET = "MY_CLOUD_SECRET"


class Capture:
    """An OpenAI-compatible server that records what reaches it and answers every completion."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        capture = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                capture.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body.decode()}
                )
                if self.path.endswith("/tokenize"):
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data = json.dumps({"choices": [{"text": "opts.host)"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.timeout = 5
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def completions(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].endswith("/completions")]


@pytest.fixture
def capture() -> Iterator[Capture]:
    server = Capture()
    thread = threading.Thread(target=server.httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def naming(url: str, model: str = "x", key_env: str = SECRET) -> str:
    """A repository's .repomem.toml that sends completions to ``url`` with a user credential."""
    return (
        f'[backend]\nbackend = "openai"\nurl = "{url}"\nmodel = "{model}"\n'
        f'api_key_env = "{key_env}"\nmax_retries = 0\ntimeout = 5\n\n'
        "[completion]\nk = 7\nmin_confidence = 0\n"
    )


@pytest.fixture
def cloned(tmp_path: Path, capture: Capture) -> Path:
    return make_repo(tmp_path / "cloned", {"pkg/app.py": APP, ".repomem.toml": naming(capture.url)})


def complete_cli(root: Path, *flags: str, env: dict[str, str] | None = None):
    environ = {**os.environ, SECRET: "s3cr3t-value", **(env or {})}
    return run_repomem("complete", "pkg/app.py:2:26", *flags, cwd=root, env=environ, timeout=120)


def test_untrusted_settings_send_nothing_trusted_ones_do_and_a_change_revokes(
    cloned: Path, capture: Capture
) -> None:
    before = complete_cli(cloned)
    assert capture.requests == []
    notice = [line for line in before.stderr.splitlines() if "only you may set" in line]
    assert len(notice) == 1, before.stderr
    for key in ("backend.backend", "backend.url", "backend.api_key_env", "backend.model"):
        assert key in notice[0]
    assert f"repomem trust {cloned}" in notice[0]

    trusted = run_repomem("trust", cloned)
    assert trusted.returncode == 0, trusted.stderr
    assert capture.url in trusted.stdout and SECRET in trusted.stdout  # says what it trusts
    after = complete_cli(cloned)
    assert "only you may set" not in after.stderr
    sent = capture.completions()
    assert sent, after.stderr
    assert sent[0]["headers"]["Authorization"] == "Bearer s3cr3t-value"
    assert "make_client" in json.loads(sent[0]["body"])["prompt"]

    (cloned / ".repomem.toml").write_text(naming(capture.url, model="y"))
    count = len(capture.requests)
    changed = complete_cli(cloned)
    assert len(capture.requests) == count
    assert "only you may set" in changed.stderr


def test_the_users_own_places_need_no_trust(tmp_path: Path, capture: Capture) -> None:
    root = make_repo(tmp_path / "mine", {"pkg/app.py": APP})
    user_file = Path(os.environ["XDG_CONFIG_HOME"], "repomem", "config.toml")
    user_file.parent.mkdir(parents=True)
    user_file.write_text(naming(capture.url))
    complete_cli(root)
    assert len(capture.completions()) > 0
    user_file.unlink()

    count = len(capture.requests)
    env = {"REPOMEM_BACKEND_BACKEND": "openai", "REPOMEM_BACKEND_URL": capture.url}
    complete_cli(root, env=env)
    assert len(capture.requests) > count

    count = len(capture.requests)
    flags = complete_cli(root, "--backend", "openai", "--url", capture.url)
    assert len(capture.requests) > count
    assert "only you may set" not in flags.stderr


def test_settings_left_out_keep_the_rest_and_are_listed(cloned: Path, capture: Capture) -> None:
    settings = load_settings(cloned, environ={})
    assert settings.backend.backend == "builtin" and settings.backend.url != capture.url
    assert settings.completion.k == 7  # a key that sends nothing applies as before
    assert [u.key for u in settings.untrusted] == [
        "backend.backend",
        "backend.url",
        "backend.model",
        "backend.api_key_env",
    ]
    assert run_repomem("trust", cloned).returncode == 0
    trusted = load_settings(cloned, environ={})
    assert trusted.backend.url == capture.url and trusted.untrusted == ()
    # the same settings written otherwise are the same settings: still trusted
    text = (cloned / ".repomem.toml").read_text()
    (cloned / ".repomem.toml").write_text("# reordered\n" + text.replace("k = 7", "k   =   7"))
    assert load_settings(cloned, environ={}).backend.url == capture.url


def test_a_repository_cannot_switch_off_the_exclusion_of_secrets(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "cloned",
        {
            "secrets.py": 'API_TOKEN = "hunter2-do-not-send"\n',
            ".repomem.toml": "[index]\nexclude_secrets = false\nsecret_patterns = []\n",
        },
    )
    indexed = run_repomem("index", root, "--json", "--no-progress")
    assert indexed.returncode == 0, indexed.stderr
    summary = json.loads(indexed.stdout)
    assert {u["key"] for u in summary["untrusted_settings"]} == {
        "index.exclude_secrets",
        "index.secret_patterns",
    }
    config = load_settings(root, environ={}).index
    assert config.exclude_secrets and config.secret_patterns == IndexConfig().secret_patterns
    assert "secrets.py" not in RepoIndex.load(root, config)
    assert "hunter2" not in _index_bytes(root)

    assert run_repomem("trust", root).returncode == 0
    assert run_repomem("index", root, "--no-progress").returncode == 0
    config = load_settings(root, environ={}).index
    assert not config.exclude_secrets
    assert "secrets.py" in RepoIndex.load(root, config)


def test_a_repository_may_add_secret_patterns(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / ".repomem.toml").write_text('[index]\nsecret_patterns = ["*.vault"]\n')
    config = load_settings(root, environ={})
    assert config.index.secret_patterns == (*IndexConfig().secret_patterns, "*.vault")
    # the list would have dropped the defaults: that part is what is left out, and said
    assert [u.key for u in config.untrusted] == ["index.secret_patterns"]
    patterns = ", ".join(f'"{p}"' for p in (*IndexConfig().secret_patterns, "*.vault"))
    (root / ".repomem.toml").write_text(f"[index]\nsecret_patterns = [{patterns}]\n")
    config = load_settings(root, environ={})
    assert config.index.secret_patterns == (*IndexConfig().secret_patterns, "*.vault")
    assert config.untrusted == ()


def _index_bytes(root: Path) -> str:
    return "".join(
        p.read_bytes().decode("latin-1") for p in (root / ".repomem").rglob("*") if p.is_file()
    )


def test_trust_list_and_revoke(cloned: Path, tmp_path: Path) -> None:
    assert run_repomem("trust", cloned).returncode == 0
    listed = run_repomem("trust", "--list")
    assert f"{cloned.resolve()}: .repomem.toml (trusted)" in listed.stdout
    (cloned / ".repomem.toml").write_text('[backend]\nurl = "http://127.0.0.1:9/v1"\n')
    assert "changed since trusted" in run_repomem("trust", "--list").stdout
    revoked = run_repomem("trust", "--revoke", cloned)
    assert "no longer trusted" in revoked.stdout
    assert run_repomem("trust", "--list").stdout == ""
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = run_repomem("trust", empty)
    assert nothing.returncode == 2 and "no settings to trust" in nothing.stderr


def test_the_index_never_shows_in_git_status(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", use_git=False)
    repo = git.Repo.init(root)
    repo.git.add(all=True)
    repo.git.commit("-m", "fixture", author="Fixture <fixture@example.com>")
    assert run_repomem("index", root, "--no-progress").returncode == 0
    assert (root / ".repomem" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (
        subprocess.run(
            ["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True
        ).stdout
        == ""
    )


SERVER = [sys.executable, "-m", "repomem.cli", "serve"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    lsp_client.preset = "neovim"  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
@pytest.mark.parametrize("trusted", [False, True])
async def test_the_language_server_sends_nothing_before_trust(
    client: LanguageClient, tmp_path: Path, capture: Capture, trusted: bool
) -> None:
    # HOME: a variable every user has, standing for their cloud credentials
    root = make_repo(
        tmp_path / "cloned",
        {"pkg/app.py": APP, ".repomem.toml": naming(capture.url, key_env="HOME")},
    )
    if trusted:
        assert run_repomem("trust", root).returncode == 0
    await start(client, root, {"repomem": {"debounceMs": 0}})
    uri = open_doc(client, root / "pkg/app.py")
    insert(client, uri, 2, 2, 0, "    other = make_client(\n")
    await complete(client, uri, 2, 24)
    state = await status(client)
    notices = [m for m in warnings_shown(client) if "only you may set" in m]
    if trusted:
        assert state.backend == "openai" and state.untrustedSettings == []
        assert capture.completions() and not notices
        assert (
            capture.completions()[0]["headers"]["Authorization"] == f"Bearer {os.environ['HOME']}"
        )
    else:
        assert capture.requests == []
        assert state.backend == "builtin"
        assert {u.key for u in state.untrustedSettings} >= {"backend.url", "backend.api_key_env"}
        assert len(notices) == 1 and f"repomem trust {root.resolve()}" in notices[0]


def test_a_repository_keeps_its_index_inside_itself(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / ".repomem.toml").write_text('[index]\nindex_dir = "cache/idx"\n')
    assert load_settings(root, environ={}).index.index_dir == "cache/idx"
    for outside in ("../elsewhere", str(tmp_path / "abs"), "cache/../../up"):
        (root / ".repomem.toml").write_text(f'[index]\nindex_dir = "{outside}"\n')
        settings = load_settings(root, environ={})
        assert settings.index.index_dir == ".repomem"
        assert [u.key for u in settings.untrusted] == ["index.index_dir"]
