"""Memory an index's updates freed goes back to the system when the index is tidied."""

from __future__ import annotations

import mmap
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pages import resident_file_pages, resident_pages, written_pages
from repos import OTHER_LANG_FILES, make_repo
from test_index import EDITS, QUERIES, apply_on_disk, assert_same, snapshot

from repomem.index import repo, trim, update
from repomem.index.repo import RepoIndex

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not GLIBC, reason="malloc_trim and mallopt are glibc's")
def _saved_and_loaded(tmp_path: Path) -> tuple[Path, RepoIndex]:
    """A repository of several languages, indexed and saved, and its index loaded mapped."""
    root = make_repo(tmp_path / "r", OTHER_LANG_FILES, use_git=False)
    RepoIndex.build(root)
    return root, RepoIndex.load(root)


def test_glibc_is_asked_to_trim_and_to_share_arenas() -> None:
    assert trim.release_memory()
    assert trim.limit_arenas(8)  # (a bound the tests' few threads do not reach)


# a worker thread frees 16 MB of small blocks; how much of it ``release_memory`` gives back
_THREAD_FREED = """
import ctypes, threading
from repomem.index import trim
trim.limit_arenas()
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.free(libc.malloc(16 << 20))  # a large block freed raises the trim threshold, as numpy's do
def work():
    blocks = [libc.malloc(4096) for _ in range(4096)]
    for b in blocks:
        ctypes.memset(b, 1, 4096)
    for b in reversed(blocks):
        libc.free(b)
def anon():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("RssAnon"))
thread = threading.Thread(target=work)
thread.start()
thread.join()
before = anon()
trim.release_memory()
print(before - anon())
"""


@pytest.mark.skipif(not GLIBC, reason="malloc_trim and mallopt are glibc's")
def test_what_worker_threads_freed_goes_back_when_memory_is_released() -> None:
    """The relation searches' threads take their kernels' work arrays from the allocator: in
    an arena of their own, its free top stayed resident through every trim."""
    done = subprocess.run(
        [sys.executable, "-c", _THREAD_FREED], capture_output=True, text=True, check=True
    )
    assert int(done.stdout) > 12 << 10  # kB of the 16 MB


def test_tidying_the_index_releases_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    idx, _ = RepoIndex.build(make_repo(tmp_path / "r", use_git=False), save=False)
    released: list[bool] = []
    monkeypatch.setattr("repomem.index.repo.release_memory", lambda: released.append(True))
    idx.update_file("pkg/new.py", "def made():\n    return 1\n")
    assert not released  # an update itself does not pay for it
    idx.tidy()
    assert released == [True]


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="Linux's pagemap")
def test_tidying_hands_back_the_mapped_pages_read_and_written(tmp_path: Path) -> None:
    """A loaded index's pages that queries read leave the resident set when it is warmed or
    tidied; those updates wrote into the mapped tables (the process's own copies) and into
    the row pools' row arrays become pages of files of their own at a tidy and leave it too
    (they stayed for the rest of the session); the index still answers and updates as a
    rebuild of the same files does, and a page written again after it moved keeps what was
    written."""
    root, loaded = _saved_and_loaded(tmp_path)
    assert loaded.tables.mappings  # the arrays are mapped from the index's files
    loaded.warm()
    assert resident_file_pages(loaded.tables.mappings) == 0
    snapshot(loaded)  # reads every relation row and fragment
    assert resident_file_pages(loaded.tables.mappings) > 0
    edits = list(EDITS.items())
    apply_on_disk(root, dict(edits))
    for rel, text in edits[:2]:
        loaded.update_file(rel, text)  # writes into the mapped tables (their own copies)
    assert written_pages(loaded.tables.mappings) > 0
    rows = loaded.tables.row_maps()  # the pools' row arrays, written as their rows change
    assert len(rows) == 4 and written_pages(rows) > 0
    loaded.tidy()
    assert resident_file_pages(loaded.tables.mappings) == 0
    assert written_pages(loaded.tables.mappings) == 0
    assert resident_pages(loaded.tables.row_maps()) == 0
    for rel, text in edits[2:]:
        loaded.update_file(rel, text)
        snapshot(loaded)  # reads the moved pages back
    loaded.tidy()
    assert written_pages(loaded.tables.mappings) == 0
    assert_same(loaded, RepoIndex.build(root, save=False)[0], QUERIES)
    kept = [(rel, text) for rel, text in edits if text is not None]
    for rel, text in kept[:2]:  # the files changed again, then as they were
        loaded.update_file(rel, text + "\n# again\n")
        loaded.tidy()
        loaded.update_file(rel, text)
    assert_same(loaded, RepoIndex.build(root, save=False)[0], QUERIES)


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="Linux's pagemap")
def test_written_pages_move_to_their_file_and_keep_their_bytes(tmp_path: Path) -> None:
    """``WrittenPages.spill`` on a private map of a file: the pages written (and only those)
    leave the process's own memory, every byte reads as written, a later write through the
    map is kept though its page is handed back, and the mapped file is left as it was."""
    path = tmp_path / "a.npy"
    np.save(path, np.arange(64 * 1024, dtype=np.int64))  # 128 pages
    a = np.load(path, mmap_mode="c")
    (m,) = trim.mappings_of([a])
    a[1000] = -1
    a[40_000:41_000] = -2
    expected = np.array(a)
    assert written_pages([m]) == 1 + 3
    spilled = trim.WrittenPages(tmp_path)
    assert spilled.spill([m]) == 4 * mmap.PAGESIZE
    assert written_pages([m]) == 0
    assert np.array_equal(a, expected)
    a[1001] = -3
    expected[1001] = -3
    trim.release_mapped([m])
    assert resident_pages([m]) == 0
    assert np.array_equal(a, expected)
    assert spilled.spill([m]) == 0  # a page written again is the file's already
    assert np.array_equal(np.load(path), np.arange(64 * 1024, dtype=np.int64))
    assert trim.WrittenPages(None).spill([m]) == 0  # no folder: nowhere to go


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="Linux's pagemap")
def test_an_update_hands_back_the_mapped_pages_it_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pages of a loaded index that queries read leave the resident set before an
    update applies its change, and those it read as it ends, without waiting for a pause;
    what it wrote into the mapped tables stays, and the index still answers and updates as
    a rebuild of the same files does (every page read counts: no allowance)."""
    monkeypatch.setattr(repo, "READ_ALLOWANCE", 0)
    root, loaded = _saved_and_loaded(tmp_path)
    loaded.warm()
    at_start: list[int] = []
    apply = repo.update_file

    def update_file(*args: object) -> bool:
        at_start.append(resident_file_pages(loaded.tables.mappings))
        return apply(*args)

    monkeypatch.setattr(repo, "update_file", update_file)
    edits = list(EDITS.items())
    apply_on_disk(root, dict(edits))
    for rel, text in edits:
        snapshot(loaded)  # reads every relation row and fragment
        assert resident_file_pages(loaded.tables.mappings) > 0
        loaded.update_file(rel, text)
        assert resident_file_pages(loaded.tables.mappings) == 0
    assert at_start == [0] * len(edits)
    assert_same(loaded, RepoIndex.build(root, save=False)[0], QUERIES)


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="Linux's pagemap")
def test_an_update_hands_back_its_searches_pages_before_recomputing_relations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What an update's searches read of the mapped index leaves the resident set before
    the relations near the change are recomputed, whose reads would otherwise come on top
    of it (every page read counts: no allowance); the index still updates as a rebuild."""
    monkeypatch.setattr(repo, "READ_ALLOWANCE", 0)
    root, loaded = _saved_and_loaded(tmp_path)
    loaded.warm()
    searched: list[int] = []
    at_recompute: list[int] = []
    near, recompute = update._fragments_near, update._recompute_relations_near

    def fragments_near(*args: object) -> np.ndarray:
        found = near(*args)  # type: ignore[arg-type]
        searched.append(resident_file_pages(loaded.tables.mappings))
        return found

    def recompute_relations_near(*args: object) -> None:
        at_recompute.append(resident_file_pages(loaded.tables.mappings))
        recompute(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(update, "_fragments_near", fragments_near)
    monkeypatch.setattr(update, "_recompute_relations_near", recompute_relations_near)
    edits = list(EDITS.items())
    apply_on_disk(root, dict(edits))
    for rel, text in edits:
        loaded.update_file(rel, text)
    assert any(searched)  # the searches read pages of the mapped tables
    assert at_recompute == [0] * len(edits)
    assert_same(loaded, RepoIndex.build(root, save=False)[0], QUERIES)


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="Linux's statm")
def test_an_update_hands_back_no_pages_while_few_were_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Handing pages back looks at every page of the mapped index, so an update does it
    only once more than ``READ_ALLOWANCE`` bytes of file pages were read since the last
    time; a tidy does it whatever was read."""
    root, loaded = _saved_and_loaded(tmp_path)
    loaded.warm()
    released: list[int] = []
    release = repo.release_mapped

    def release_mapped(mappings: object) -> int:
        released.append(1)
        return release(mappings)  # type: ignore[arg-type]

    monkeypatch.setattr(repo, "release_mapped", release_mapped)
    edits = list(EDITS.items())
    apply_on_disk(root, dict(edits))
    snapshot(loaded)  # reads a few hundred kB, well inside the allowance
    loaded.update_file(*edits[0])
    assert released == [] and resident_file_pages(loaded.tables.mappings) > 0
    loaded.tidy()
    assert released and resident_file_pages(loaded.tables.mappings) == 0
    monkeypatch.setattr(repo, "READ_ALLOWANCE", 0)
    released.clear()
    snapshot(loaded)
    loaded.update_file(*edits[1])
    assert released and resident_file_pages(loaded.tables.mappings) == 0


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="Linux's pagemap")
def test_written_pages_stay_where_no_map_or_no_file_can_be_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each run of pages moved splits its map: past half the maps the system allows, the
    runs left stay the process's own; so they do where the folder takes no file. Either
    way every byte reads as written."""
    path = tmp_path / "a.npy"
    np.save(path, np.zeros(64 * 1024, np.int64))
    a = np.load(path, mmap_mode="c")
    (m,) = trim.mappings_of([a])
    a[[0, 10_000, 20_000, 30_000]] = 7  # four runs of one page each
    monkeypatch.setattr(trim, "_maps_allowed", lambda: trim._maps_held() + 5)
    assert trim.WrittenPages(tmp_path).spill([m]) == 2 * mmap.PAGESIZE
    assert written_pages([m]) == 2
    monkeypatch.undo()
    assert trim.WrittenPages(tmp_path / "gone").spill([m]) == 0
    assert written_pages([m]) == 2
    assert a.sum() == 4 * 7


def _made_parses(index: RepoIndex) -> int:
    """Saved parses a loaded index holds made, for itself and for its resolver."""
    t = index.tables
    return sum(len(d._made) for d in (t.parsed, t.resolver.files))


def test_tidying_drops_the_saved_parses_no_longer_read(tmp_path: Path) -> None:
    """The parses an edit's resolution made from the saved index leave memory at the pause
    after the one that found them still in use, and are made again when next read: a
    session reaching file after file holds what it used lately, and still updates as a
    rebuild of the same files does."""
    root, loaded = _saved_and_loaded(tmp_path)
    loaded.warm()
    edits = list(EDITS.items())
    apply_on_disk(root, dict(edits))
    loaded.update_file(*edits[0])
    snapshot(loaded)  # reads every file's parse
    assert _made_parses(loaded) > 0
    loaded.tidy()  # read since the last pause: kept
    assert _made_parses(loaded) > 0
    loaded.tidy()
    assert _made_parses(loaded) == 0
    for rel, text in edits[1:]:
        loaded.update_file(rel, text)
        loaded.tidy()
    assert_same(loaded, RepoIndex.build(root, save=False)[0], QUERIES)


def test_tidying_packs_the_parses_and_calls_set_and_no_longer_read(tmp_path: Path) -> None:
    """The parses and calls an edit set (the edited file's, and those of the files resolved
    again or whose calls followed a moved definition) are kept packed from the pause after
    the one that found them still in use, and made again, as saved ones, when next read:
    the index still updates and saves as a rebuild of the same files does."""
    root, loaded = _saved_and_loaded(tmp_path)
    loaded.warm()
    edits = list(EDITS.items())
    apply_on_disk(root, dict(edits))
    loaded.update_file(*edits[0])
    t = loaded.tables
    path = edits[0][0]
    # the file's parse, and the calls of it and of the files resolved again with it
    held = [(t.parsed, [path]), (t.resolver.files, [path]), (t.calls, sorted(t.calls._set))]
    assert path in held[2][1]
    loaded.tidy()  # set since the last pause: kept as set
    assert all(p in d._set and p not in d._packed for d, paths in held for p in paths)
    loaded.tidy()
    assert all(p in d._packed and d._values[p] is None for d, paths in held for p in paths)
    for rel, text in edits[1:]:
        loaded.update_file(rel, text)
        loaded.tidy()
    loaded.tidy()
    assert_same(loaded, RepoIndex.build(root, save=False)[0], QUERIES)
    loaded.save()
    assert_same(RepoIndex.load(root), RepoIndex.build(root, save=False)[0], QUERIES)


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="Linux's pagemap")
def test_fresh_zeros_are_resident_only_where_written() -> None:
    """Room made with ``fresh_zeros`` costs no memory until it is written."""
    zeros = trim.fresh_zeros((4, 1 << 18), np.int64)  # 8 MB
    assert zeros.shape == (4, 1 << 18)
    zeros[1, :10] = 7
    assert zeros[1, 10] == 0 and zeros[1, 9] == 7
    page = mmap.PAGESIZE
    address = zeros.__array_interface__["data"][0]
    with open("/proc/self/pagemap", "rb") as fh:
        fh.seek(address // page * 8)
        entries = np.frombuffer(fh.read(zeros.nbytes // page * 8), np.uint64)
    present = int(np.count_nonzero(entries >> np.uint64(63)))
    assert 1 <= present <= 2


def test_a_mapped_load_compacts_bm25_into_its_index_folder(tmp_path: Path) -> None:
    """A loaded index's BM25 compaction is written to its index folder and mapped back (files
    with no name, handed back at a tidy); one read into memory keeps compacting in memory."""
    root, loaded = _saved_and_loaded(tmp_path)
    assert loaded.tables.bm25.spool == root / loaded.config.index_dir
    assert RepoIndex.load(root, mapped=False).tables.bm25.spool is None
    bm25 = loaded.tables.bm25
    fid = int(loaded.tables.live_ids()[0])
    bm25.remove(fid)
    bm25.compact()
    assert bm25.spooled_maps
    loaded.tidy()
    assert loaded.retrieve("def", k=3) is not None


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="Linux's pagemap")
def test_bm25s_spooled_pages_go_back_with_the_mapped_index_in_one_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pages of BM25's compacted rows and postings (mapped from the index folder) that
    retrieval read go back with the mapped index's pages in one look at the page map, at a
    tidy and at an update past the allowance; the index still answers as a rebuild does."""
    root, loaded = _saved_and_loaded(tmp_path)
    passes: list[list[mmap.mmap]] = []
    release = repo.release_mapped

    def release_mapped(mappings: list[mmap.mmap]) -> int:
        passes.append(list(mappings))
        return release(mappings)

    monkeypatch.setattr(repo, "release_mapped", release_mapped)
    edits = list(EDITS.items())
    apply_on_disk(root, dict(edits))
    loaded.update_file(*edits[0])
    bm25 = loaded.tables.bm25
    bm25.compact()
    spooled = bm25.spooled_maps
    assert spooled
    for query in QUERIES:  # BM25 reads the postings
        loaded.retrieve(query)
    assert resident_file_pages(spooled) > 0
    passes.clear()
    loaded.tidy()
    assert len(passes) == 1
    assert {id(m) for m in [*spooled, *loaded.tables.mappings]} <= {id(m) for m in passes[0]}
    assert resident_file_pages(spooled) == 0
    monkeypatch.setattr(repo, "READ_ALLOWANCE", 0)
    for query in QUERIES:
        loaded.retrieve(query)
    assert resident_file_pages(spooled) > 0
    loaded.update_file(*edits[1])
    assert resident_file_pages(bm25.spooled_maps) == 0
    for rel, text in edits[2:]:
        loaded.update_file(rel, text)
    assert_same(loaded, RepoIndex.build(root, save=False)[0], QUERIES)


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="Linux's pagemap")
def test_released_zeros_leave_the_resident_set_and_read_zero() -> None:
    """``release_zeros`` hands back the pages of ``fresh_zeros`` arrays written back to
    zero; an array of the allocator's is left alone."""
    zeros = trim.fresh_zeros(1 << 20, np.float64)  # 8 MB
    zeros[:: 1 << 12] = 1.0
    zeros[:] = 0.0
    assert resident_pages([zeros]) > 100
    plain = np.ones(1 << 12)
    assert trim.release_zeros([zeros[10:], plain]) >= zeros.nbytes
    assert resident_pages([zeros]) == 0
    assert not zeros.any() and plain.all()
    zeros[5] = 2.0  # still writable: a fresh page
    assert zeros[5] == 2.0


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="Linux's pagemap")
def test_tidying_hands_back_the_pages_the_relation_searches_wrote(tmp_path: Path) -> None:
    """An update's relation searches write their work arrays across the graph; a tidy
    hands those pages back (a session reaching new parts of the graph kept them all), and
    the next updates still index as a rebuild does."""
    from repomem.index import relations

    root, loaded = _saved_and_loaded(tmp_path)
    loaded.warm()
    edits = list(EDITS.items())
    apply_on_disk(root, dict(edits))
    loaded.update_file(*edits[0])
    scratch = [a for arrays in relations._scratch._free for a in arrays]
    assert resident_pages(scratch) > 0
    loaded.tidy()
    assert resident_pages(scratch) == 0
    for rel, text in edits[1:]:
        loaded.update_file(rel, text)
    assert_same(loaded, RepoIndex.build(root, save=False)[0], QUERIES)
