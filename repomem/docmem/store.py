"""Persistence of the doc memory next to the code index, keyed by each document's digest.

``<index_dir>/docmem.json.gz`` holds, per document path, the content digest it was built from,
its segments and, per builder (``extractive`` or the model that built them), its pages and
memory forms; ``docmem-embeddings.npz`` holds segment embeddings keyed by the digest of the
segment's text, for one embedding model. Both are written to a temporary file and renamed
over the old one, so an interrupted write leaves the previous memory. A document whose digest
changed is rebuilt; the others are reused. A file that cannot be read is ignored (the memory is
rebuilt), since it is a cache of what the docs say.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repomem.docmem.forms import Entry
from repomem.docmem.segments import Segment
from repomem.errors import RepomemError

FORMAT = 1
FILE_NAME = "docmem.json.gz"
EMBEDDINGS_NAME = "docmem-embeddings.npz"


@dataclass
class Built:
    """What one builder made of a document."""

    pages: list[tuple[int, int]] | None = None
    forms: dict[str, list[Entry]] = field(default_factory=dict)


@dataclass
class StoredDoc:
    digest: str
    language: str
    segments: list[Segment]
    builders: dict[str, Built] = field(default_factory=dict)


class DocStoreError(RepomemError):
    """The doc memory cannot be written next to the index."""


def _atomic_write(path: Path, data: bytes) -> None:
    try:
        _replace(path, data)
    except OSError as exc:
        reason = exc.strerror or exc
        raise DocStoreError(f"cannot write the doc memory to {path}: {reason}") from exc


def _replace(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o644)  # a cache others may read, like the index beside it
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _entry_json(e: Entry) -> list[Any]:
    return [e.form, e.text, list(e.segments), e.origin, e.line]


def _entry(data: list[Any]) -> Entry:
    form, text, segs, origin, line = data
    return Entry(form, text, tuple(segs), origin, line)


def save(directory: Path, params: dict[str, Any], docs: dict[str, StoredDoc]) -> None:
    payload = {
        "format": FORMAT,
        "params": params,
        "docs": {
            path: {
                "digest": d.digest,
                "language": d.language,
                "segments": [
                    [s.kind, s.start, s.end, list(s.headings), s.text] for s in d.segments
                ],
                "builders": {
                    name: {
                        "pages": [list(p) for p in b.pages] if b.pages is not None else None,
                        "forms": {f: [_entry_json(e) for e in es] for f, es in b.forms.items()},
                    }
                    for name, b in d.builders.items()
                },
            }
            for path, d in docs.items()
        },
    }
    raw = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    _atomic_write(directory / FILE_NAME, gzip.compress(raw, compresslevel=1))


def load(directory: Path, params: dict[str, Any]) -> dict[str, StoredDoc]:
    """The stored documents, or none when the file is missing, unreadable or was built with
    other segmentation parameters."""
    try:
        payload = json.loads(gzip.decompress((directory / FILE_NAME).read_bytes()))
        if payload.get("format") != FORMAT or payload.get("params") != params:
            return {}
        docs = {}
        for path, d in payload["docs"].items():
            segments = [
                Segment(path, kind, start, end, tuple(headings), text)
                for kind, start, end, headings, text in d["segments"]
            ]
            builders = {
                name: Built(
                    [tuple(p) for p in b["pages"]] if b["pages"] is not None else None,
                    {f: [_entry(e) for e in es] for f, es in b["forms"].items()},
                )
                for name, b in d["builders"].items()
            }
            docs[path] = StoredDoc(d["digest"], d["language"], segments, builders)
        return docs
    except (OSError, ValueError, KeyError, TypeError, EOFError):
        return {}


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def save_embeddings(directory: Path, model: str, vectors: dict[bytes, np.ndarray]) -> None:
    keys = np.array(list(vectors), dtype="S16")
    dim = next(iter(vectors.values())).size if vectors else 0
    values = np.stack(list(vectors.values())) if vectors else np.zeros((0, dim), np.float32)
    buffer = io.BytesIO()
    np.savez(buffer, model=np.array(model), keys=keys, vectors=values.astype(np.float32))
    _atomic_write(directory / EMBEDDINGS_NAME, buffer.getvalue())


def load_embeddings(directory: Path, model: str) -> dict[bytes, np.ndarray]:
    try:
        with np.load(directory / EMBEDDINGS_NAME, allow_pickle=False) as npz:
            if str(npz["model"]) != model:
                return {}
            return dict(zip(npz["keys"].tolist(), npz["vectors"], strict=True))
    except (OSError, ValueError, KeyError):
        return {}
