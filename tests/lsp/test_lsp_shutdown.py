"""A clean stop of ``repomem serve``: ``shutdown`` then ``exit`` from a real client over stdio,
at the moments an editor closes early (right after ``initialize``, while indexing, as the index
becomes ready and the doc memory is read, while a question waits for the doc memory), answers
``shutdown`` and writes no traceback."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities
from pytest_lsp.client import make_test_lsp_client
from repos import make_repo

# the server as `repomem serve`, its stderr (the log) written to the file named by argv[1]
SERVER = """\
import os, sys
os.dup2(os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
from repomem.cli import main
sys.exit(main(["serve"]))
"""
RUNS = 3


async def stop_after(root: Path, log: Path, moment: str) -> int | None:
    """Start a server on ``root``, shut it down at ``moment`` and return its exit code."""
    client = make_test_lsp_client()
    await client.start_io(sys.executable, "-c", SERVER, str(log))
    server = client._server
    assert server is not None
    ready = client.protocol.wait_for_notification("repomem/indexReady")
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            )
        )
        asking = None
        if moment == "indexing":
            await asyncio.sleep(0.3)
        elif moment == "ready":
            await asyncio.wait_for(asyncio.wrap_future(ready), 60)
        elif moment == "asking":  # a question waiting for the doc memory
            params = types.ExecuteCommandParams(command="repomem.ask", arguments=["What?"])
            asking = asyncio.ensure_future(client.workspace_execute_command_async(params))
            await asyncio.sleep(0.3)
        await asyncio.wait_for(client.shutdown_async(None), 30)
        if asking is not None:  # answered, or cancelled by the shutdown: not left hanging
            await asyncio.wait_for(asyncio.gather(asking, return_exceptions=True), 30)
        client.exit(None)
        return await asyncio.wait_for(server.wait(), 30)
    finally:
        if server.returncode is None:  # a failed step above: no server is left behind
            server.kill()
        await client.stop()


@pytest.mark.asyncio
@pytest.mark.parametrize("moment", ["started", "indexing", "ready", "asking"])
async def test_shutdown_then_exit_logs_no_traceback(tmp_path: Path, moment: str):
    docs = {f"docs/page{i}.md": f"# Page {i}\n\n" + "Words about page. " * 80 for i in range(20)}
    root = make_repo(tmp_path / "repo", docs)
    for run in range(RUNS):
        log = tmp_path / f"stderr-{run}.log"
        code = await stop_after(root, log, moment)
        text = log.read_text()
        assert "Traceback" not in text and " ERROR " not in text, f"run {run}:\n{text}"
        assert code == 0, f"run {run}: exit code {code}\n{text}"
