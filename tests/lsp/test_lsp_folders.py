"""Multi-root workspaces over stdio: each workspace folder is a repository of its own, with
its own index, settings and status, served to the documents it holds, folders added and
removed while the server runs included."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lspclient import READY_TIMEOUT_S, SERVER, complete, insert, open_doc, status
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from repos import make_repo

# Each repository holds a call the other ones lack; a file typed in completes it only from
# its own folder's index.
REPOS = {
    "alpha": (
        {
            "pkg/config.py": "def connect(opts):\n"
            "    client = make_client(opts.host, opts.port, timeout=opts.timeout)\n"
            "    return client\n",
            "pkg/app.py": "def run(opts):\n    \n    return opts\n",
        },
        "pkg/app.py",
        "client = make_client(",
        "opts.host, opts.port, timeout=opts.timeout)",
    ),
    "beta": (
        {
            "store/conf.py": "def attach(opts):\n"
            "    handle = open_store(opts.path, opts.mode, retries=opts.retries)\n"
            "    return handle\n",
            "store/main.py": "def run(opts):\n    \n    return opts\n",
        },
        "store/main.py",
        "handle = open_store(",
        "opts.path, opts.mode, retries=opts.retries)",
    ),
    "gamma": (
        {
            "jobs/queue.py": "def submit(opts):\n"
            "    job = enqueue_job(opts.name, opts.payload, priority=opts.priority)\n"
            "    return job\n",
            "jobs/run.py": "def run(opts):\n    \n    return opts\n",
        },
        "jobs/run.py",
        "job = enqueue_job(",
        "opts.name, opts.payload, priority=opts.priority)",
    ),
}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def roots(tmp_path: Path) -> dict[str, Path]:
    made = {}
    for name, (files, *_) in REPOS.items():
        root = make_repo(tmp_path / name, files)
        (root / ".repomem.toml").write_text("[completion]\nmin_confidence = 0\n")
        made[name] = root.resolve()
    return made


def folder(root: Path) -> types.WorkspaceFolder:
    return types.WorkspaceFolder(uri=root.as_uri(), name=root.name)


class Heard:
    """The ``repomem/indexReady`` and ``repomem/docsReady`` notifications (the latter ends a
    folder's indexing)."""

    def __init__(self, client: LanguageClient) -> None:
        self.docs: list[Any] = []
        self.indexed: list[Any] = []
        client.feature("repomem/docsReady")(lambda params: self.docs.append(params))
        client.feature("repomem/indexReady")(lambda params: self.indexed.append(params))
        client.feature("client/registerCapability")(lambda params: None)

    async def ready(self, *roots: Path) -> None:
        async def wait() -> None:
            while not {str(r) for r in roots} <= {d.root for d in self.docs}:
                await asyncio.sleep(0.05)

        await asyncio.wait_for(wait(), 4 * READY_TIMEOUT_S * len(roots))


async def start(client: LanguageClient, *roots: Path) -> Heard:
    heard = Heard(client)
    capabilities = client_capabilities("visual-studio-code")
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=roots[0].as_uri(),
            workspace_folders=[folder(root) for root in roots],
            initialization_options={"repomem": {"debounceMs": 0}},
        )
    )
    assert result.capabilities.workspace is not None
    folders = result.capabilities.workspace.workspace_folders
    assert folders is not None and folders.supported and folders.change_notifications
    await heard.ready(*roots)
    return heard


async def typed_completion(client: LanguageClient, root: Path, name: str) -> str:
    """Open the repository's file, type the start of its call, and complete it."""
    _, path, typed, _ = REPOS[name]
    uri = open_doc(client, root / path)
    insert(client, uri, 2, 1, 4, typed)
    items = (await complete(client, uri, 1, 4 + len(typed))).items
    return items[0].text_edit.new_text if items else ""


def change_folders(
    client: LanguageClient, added: Sequence[Path] = (), removed: Sequence[Path] = ()
) -> None:
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(
                added=[folder(r) for r in added], removed=[folder(r) for r in removed]
            )
        )
    )


@pytest.mark.asyncio
async def test_each_folder_completes_from_its_own_repository(
    client: LanguageClient, roots: dict[str, Path]
):
    alpha, beta, gamma = roots["alpha"], roots["beta"], roots["gamma"]
    heard = await start(client, alpha, beta)
    assert {(n.root, n.folder) for n in heard.indexed} == {
        (str(alpha), alpha.as_uri()),
        (str(beta), beta.as_uri()),
    }
    # one progress bar per folder, each naming its folder
    begun = [r[0].message for r in client.progress_reports.values()]
    assert sorted(begun) == [str(alpha), str(beta)]

    state = await status(client)
    assert state.root == str(alpha)  # the first folder's, as a single-folder client reads it
    assert [(f.root, f.state) for f in state.folders] == [
        (str(alpha), "ready"),
        (str(beta), "ready"),
    ]
    assert all(f.files == 8 for f in state.folders)

    for name in ("alpha", "beta"):
        _, _, typed, expected = REPOS[name]
        assert await typed_completion(client, roots[name], name) == typed + expected

    # retrieval from the folder that holds a document, else from the first folder
    def paths(found: Any) -> list[str]:
        return [f.locations[0].path for f in found.fragments if "open_store(" in f.text]

    found = await client.protocol.send_request_async(
        "repomem/retrieve", {"query": "open_store(", "k": 3, "uri": (beta / "store").as_uri()}
    )
    assert (found.root, paths(found)[:1]) == (str(beta), ["store/conf.py"])
    found = await client.protocol.send_request_async(
        "repomem/retrieve", {"query": "open_store(", "k": 3}
    )
    assert (found.root, paths(found)) == (str(alpha), [])

    # a folder added later is indexed and serves its documents; a removed one no longer does
    change_folders(client, added=[gamma])
    await heard.ready(gamma)
    _, _, typed, expected = REPOS["gamma"]
    assert await typed_completion(client, gamma, "gamma") == typed + expected
    change_folders(client, removed=[beta])
    await asyncio.sleep(0.5)  # the notification has no answer to wait for
    state = await status(client)
    assert [(f.root, f.state) for f in state.folders] == [
        (str(alpha), "ready"),
        (str(gamma), "ready"),
    ]
    # beta's documents now complete from the open file alone: its other file is not read
    uri = (beta / "store/main.py").as_uri()
    insert(client, uri, 3, 1, 4 + len("handle = open_store("), "\n    other = open_st")
    items = (await complete(client, uri, 2, len("    other = open_st"))).items
    assert all("opts.mode" not in item.text_edit.new_text for item in items)


@pytest.mark.asyncio
async def test_a_folder_inside_another_serves_its_own_documents(
    client: LanguageClient, roots: dict[str, Path], tmp_path: Path
):
    """The deepest folder holding a document serves it; settings, and the trust of them, are
    each repository's."""
    outer = roots["alpha"]
    inner = make_repo(outer / "vendor" / "beta", REPOS["beta"][0]).resolve()
    (inner / ".repomem.toml").write_text(
        '[completion]\nmin_confidence = 0\n[index]\nignore_patterns = ["pkg/sub/"]\n'
        '[backend]\nurl = "http://127.0.0.1:9/v1"\n'
    )
    await start(client, outer, inner)
    state = await status(client)
    by_root = {f.root: f for f in state.folders}
    assert by_root[str(inner)].settings.index.ignore_patterns == ["pkg/sub/"]
    assert by_root[str(outer)].settings.index.ignore_patterns == []
    assert by_root[str(inner)].files == 6  # its own files, two ignored
    # the inner repository's server URL waits for the user's trust; the outer has none to wait
    assert [u.key for u in by_root[str(inner)].untrustedSettings] == ["backend.url"]
    assert by_root[str(outer)].untrustedSettings == []
    shown = [m.message for m in client.messages if m.type == types.MessageType.Warning]
    assert len(shown) == 1 and f"repomem trust {inner}" in shown[0], shown

    _, _, typed, expected = REPOS["beta"]
    assert await typed_completion(client, inner, "beta") == typed + expected
    state = await status(client)
    by_root = {f.root: f for f in state.folders}
    assert (by_root[str(inner)].completions, by_root[str(outer)].completions) == (1, 0)
