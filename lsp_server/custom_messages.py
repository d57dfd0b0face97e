"""The params of repomem's custom messages (``repomem/retrieve``, ``repomem/visibleRanges``,
the commands' arguments) checked and parsed, and the ``repomem/retrieve`` result built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from lsp_server.folders import Folder, folder_root
from repomem.core import RetrievedFragment

RETRIEVE = "repomem/retrieve"
VISIBLE_RANGES = "repomem/visibleRanges"


def param(params: Any, name: str, default: Any) -> Any:
    """A field of a custom message's params (pygls hands them over as named tuples)."""
    if isinstance(params, dict):
        return params.get(name, default)
    if isinstance(params, tuple) and hasattr(params, "_fields"):
        return getattr(params, name, default)
    return None


def line_ranges(ranges: Any) -> list[tuple[int, int]] | None:
    """LSP ranges (as dicts or pygls's named tuples) as ``[start, end)`` line pairs, the end
    line included; None where any is malformed."""
    if not isinstance(ranges, list | tuple) or len(ranges) > 100:
        return None
    out = []
    for r in ranges:
        start = param(param(r, "start", None), "line", None)
        end = param(param(r, "end", None), "line", None)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
            return None
        if start < 0 or end < start:
            return None
        out.append((start, end + 1))
    return out


def retrieve_params(params: Any) -> tuple[str, int, str | None]:
    """``repomem/retrieve``'s query, ``k`` (default 10) and document URI (None: the first
    folder's)."""
    query = param(params, "query", None)
    k = param(params, "k", 10)
    uri = param(params, "uri", None)
    if (
        not isinstance(query, str)
        or not isinstance(k, int)
        or isinstance(k, bool)
        or k < 1
        or not isinstance(uri, str | None)
    ):
        raise JsonRpcInvalidParams(
            f"{RETRIEVE} expects {{'query': string, 'k'?: positive integer, 'uri'?: string}},"
            f" got {params!r}"
        )
    return query, k, uri


def retrieved(folder: Folder, found: list[RetrievedFragment]) -> dict[str, Any]:
    """``repomem/retrieve``'s result: the fragments with their locations and scores."""
    return {
        "root": str(folder.root) if folder.root else None,
        "fragments": [
            {
                "locations": [
                    {"path": loc.path, "startLine": loc.start, "endLine": loc.end}
                    for loc in fragment.locations
                ],
                "score": fragment.s_rel,
                "text": fragment.text,
            }
            for fragment in found
        ],
    }


def folder_uri(name: Any, command: str) -> str:
    """The URI a command's folder argument (a URI or a path) names."""
    if not isinstance(name, str) or not name:
        raise JsonRpcInvalidParams(f"{command}: a folder is a URI or a path, got {name!r}")
    return name if "://" in name else Path(name).resolve().as_uri()


def workspace_folders(params: types.InitializeParams) -> list[tuple[Path, str]]:
    """The existing directories of the workspace folders (else of the root), each with the
    URI the client gave, without repeats."""
    given = [(f.uri, None) for f in params.workspace_folders or []]
    if not given:
        given = [(params.root_uri, params.root_path)]
    folders: dict[Path, str] = {}
    for uri, path in given:
        root = folder_root(uri, path)
        if root is not None and root not in folders:
            folders[root] = uri or root.as_uri()
    return list(folders.items())
