"""The resolver's name table (repomem.index.names): saved as arrays and read back in place,
it answers as the in-memory table did, and the files entered since shadow their saved rows."""

from __future__ import annotations

from collections.abc import Callable
from itertools import groupby
from pathlib import Path

import numpy as np
import pytest
from repos import OTHER_LANG_FILES, PY_FILES, make_repo

from repomem.index import store
from repomem.index.langs import for_language
from repomem.index.mapped import LazyDict, Vocabulary, bytes_key, bytes_keys, word_hash
from repomem.index.names import (
    NameRows,
    Names,
    PerFile,
    Recent,
    SavedNames,
    saved_vocabulary,
    vocabulary_arrays,
)
from repomem.index.parsing import parse_source
from repomem.index.repo import RepoIndex
from repomem.index.resolve import PYTHON_NS, Resolver


def _saved(names: Names, paths: list[str]) -> Names:
    """``names`` written as arrays and read back, as a loaded index reads it."""
    return Names(paths, SavedNames(names.arrays(paths)))


def test_a_vocabulary_reads_back_its_words_and_extends_a_saved_one() -> None:
    a = vocabulary_arrays("w", ["alpha", "beta", "ünïcode"])
    base = saved_vocabulary("w", a)
    assert isinstance(base, Vocabulary) and len(base) == 3
    assert [base.get(w) for w in ("alpha", "beta", "ünïcode", "gamma")] == [0, 1, 2, None]
    more = saved_vocabulary("w", vocabulary_arrays("w", ["gamma"], base))
    assert [more.get(w) for w in ("alpha", "ünïcode", "gamma")] == [0, 2, 3]


def test_a_vocabulary_finds_many_words_at_once_as_one_by_one() -> None:
    """``ids`` (a query's words in one compiled pass) gives what ``get`` gives: saved words,
    words added since, unknown ones and words sharing a hash told apart by their bytes."""
    words = ["alpha", "beta", "ünïcode", "alphabet", "a"]
    base = saved_vocabulary("w", vocabulary_arrays("w", words))
    base.setdefault("gamma", len(base))
    asked = ["beta", "gamma", "nope", "ünïcode", "alph", "alphabet", "a", "beta", ""]
    want = [base.get(w) for w in asked]
    assert base.ids(asked) == [-1 if t is None else t for t in want]
    assert want == [1, 5, None, 2, None, 3, 4, 1, None]
    # two saved words under one hash: the bytes decide (same length, different order)
    data = np.frombuffer(b"baab", np.uint8)
    offsets = np.array([0, 2, 4], np.int64)
    key = np.uint64(word_hash("ab"))
    clash = Vocabulary(data, offsets, np.array([key, key]), np.array([0, 1], np.int64))
    assert clash.ids(["ab", "ba", "ab"]) == [1, -1, 1] == [clash.get("ab"), -1, 1]


def test_the_saved_table_reads_back_as_the_table_in_memory() -> None:
    names = Names()
    names.add("b.py", ("py", "run"), 4)
    names.add("a.py", ("py", "run"), 9)  # an earlier path entered later: kept in path order
    names.add("a.py", ("py", "run"), 2)  # a file's rows stay in the order entered
    names.add("a.py", ("go", "run"), 1)
    names.add("c.py", ("py", "other"), 7)
    paths = ["a.py", "b.py", "c.py"]
    keys = [("py", "run"), ("go", "run"), ("py", "other"), ("py", "missing")]
    saved = _saved(names, paths)
    assert [saved.get(k) for k in keys] == [names.get(k) for k in keys]
    assert saved.get(("py", "run")) == (("a.py", 9), ("a.py", 2), ("b.py", 4))
    assert saved.get(("py", "missing"), ()) == ()


def test_rows_entered_a_file_at_a_time_make_the_table_entering_makes() -> None:
    """A build's ``NameRows``: byte for byte the arrays of the table of tuples entered with
    the same definitions, read in place with the same answers, and edited as a loaded one."""
    paths = ["a.py", "b.py", "c.py"]
    entries = [  # a definition's key is the last part of its name
        ("a.py", ("py", "run"), 9, "run"),
        ("a.py", ("py", "run"), 2, "A.run"),
        ("a.py", ("go", "run"), 1, "run"),
        ("b.py", ("py", "ünï"), 4, "ünï"),
        ("b.py", ("py", "run"), 3, "B.C.run"),
        ("c.py", ("py", "other"), 7, "other"),
    ]
    names, rows = Names(), NameRows(paths)
    for path, key, node, _ in entries:
        names.add(path, key, node)
    # a file's definitions of a namespace entered at once, new words repeated among them
    for (path, ns), group in groupby(entries, key=lambda e: (e[0], e[1][0])):
        of_file = list(group)
        rows.add_file(paths.index(path), ns, [e[3] for e in of_file], [e[2] for e in of_file])
    table = rows.names()

    def same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
        return a.keys() == b.keys() and all(
            a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in a
        )

    assert same(table.arrays(paths), names.arrays(paths))
    keys = [*{key for _, key, _, _ in entries}, ("py", "missing")]
    assert [table.get(k) for k in keys] == [names.get(k) for k in keys]
    loaded = _saved(names, paths)  # an edit: as over a loaded index's table
    for edited in (table, loaded, names):
        edited.remove("b.py", {("py", "ünï"), ("py", "run")})
        edited.add("b.py", ("py", "run"), 5)
    assert same(table.arrays(paths), loaded.arrays(paths))
    assert [table.get(k) for k in keys] == [names.get(k) for k in keys]
    assert table.get(("py", "run")) == (("a.py", 9), ("a.py", 2), ("b.py", 5))


def test_a_build_resolver_names_the_definitions_an_entering_one_names() -> None:
    """A resolver over a build's parses (made when read, entered as rows of ids) answers as
    one entering each parse as a dict of tuples, whatever order the files come in."""
    texts = {
        "b.py": "def run():\n    pass\n",
        "a.py": "def run():\n    pass\n\n\ndef run():\n    pass\n",
    }
    parses = {p: parse_source(p, "python", t, "d") for p, t in texts.items()}
    entered = Resolver(parses)
    made = Resolver(LazyDict(list(parses), lambda i: list(parses.values())[i]))
    key = (PYTHON_NS, "run")
    assert made.by_name.get(key) == entered.by_name.get(key)
    assert [p for p, _ in made.by_name.get(key)] == ["a.py", "a.py", "b.py"]


def test_an_edit_over_the_saved_table_shadows_its_rows() -> None:
    names = Names()
    names.add("a.py", ("py", "run"), 1)
    names.add("b.py", ("py", "run"), 2)
    names.add("b.py", ("py", "gone"), 3)
    paths = ["a.py", "b.py"]
    saved = _saved(names, paths)
    assert saved.get(("py", "run")) == (("a.py", 1), ("b.py", 2))  # remembered below
    # b.py entered again: its saved rows are passed over, its new ones take their place
    saved.remove("b.py", {("py", "run"), ("py", "gone")})
    saved.add("b.py", ("py", "run"), 5)
    saved.add("b.py", ("py", "fresh"), 6)
    assert saved.get(("py", "run")) == (("a.py", 1), ("b.py", 5))
    assert saved.get(("py", "gone")) is None
    assert saved.get(("py", "fresh")) == (("b.py", 6),)
    # a new file before a saved one in path order comes first
    saved.add("0.py", ("py", "run"), 8)
    assert saved.get(("py", "run")) == (("0.py", 8), ("a.py", 1), ("b.py", 5))
    # saved again over the new paths, without a.py: the same table, renumbered
    again = _saved(saved, ["0.py", "b.py"])
    saved.remove("a.py", {("py", "run")})
    for key in [("py", "run"), ("py", "gone"), ("py", "fresh")]:
        assert again.get(key) == saved.get(key)
    assert again.get(("py", "run")) == (("0.py", 8), ("b.py", 5))


def test_the_only_definition_of_a_name_is_counted_as_gathered() -> None:
    """``only`` answers as ``get`` does where one definition has the name, None where none
    or several have it, over the saved rows, the rows entered since and those passed over."""
    names = Names()
    names.add("a.py", ("py", "run"), 1)
    names.add("b.py", ("py", "run"), 2)
    names.add("b.py", ("py", "solo"), 3)
    names.add("c.py", ("py", "late"), 4)
    saved = _saved(names, ["a.py", "b.py", "c.py"])
    keys = [("py", "run"), ("py", "solo"), ("py", "late"), ("py", "missing"), ("py", "fresh")]

    def only_as_gathered(table: Names) -> list[tuple[str, int] | None]:
        answers = [table.only(k) for k in keys]
        gathered = [table.get(k, ()) for k in keys]
        assert answers == [g[0] if len(g) == 1 else None for g in gathered]
        assert [table.only(k) for k in keys] == answers  # the same once gathered
        return answers

    assert only_as_gathered(names) == [None, ("b.py", 3), ("c.py", 4), None, None]
    assert only_as_gathered(_saved(names, ["a.py", "b.py", "c.py"])) == only_as_gathered(names)
    # b.py entered again without its saved rows, a new file adding a name
    saved.remove("b.py", {("py", "run"), ("py", "solo")})
    saved.add("d.py", ("py", "fresh"), 5)
    saved.add("d.py", ("py", "late"), 6)
    assert only_as_gathered(saved) == [("a.py", 1), None, None, None, ("d.py", 5)]


def test_names_prefetched_are_found_without_hashing_each_and_answer_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``prefetch`` finds the saved keys' ids in one pass: ``get`` then answers as it did
    (rows entered or passed over since included) without finding a prefetched key by hash."""
    names = Names()
    names.add("a.c", ("c", "run"), 1)
    names.add("b.c", ("c", "run"), 2)
    names.add("b.c", ("c", "ünï"), 3)
    names.add("c.c", ("c", "stop"), 4)
    paths = ["a.c", "b.c", "c.c"]
    keys = [("c", "run"), ("c", "ünï"), ("c", "stop"), ("c", "missing"), ("c", "fresh")]
    plain, fetched = _saved(names, paths), _saved(names, paths)
    for table in (plain, fetched):
        table.remove("c.c", {("c", "stop")})
        table.add("d.c", ("c", "fresh"), 5)
    expected = [plain.get(k) for k in keys]
    fetched.prefetch("c", [name for _, name in keys])
    hashed: list[str] = []
    monkeypatch.setattr(
        "repomem.index.mapped.word_hash", lambda w: hashed.append(w) or word_hash(w)
    )
    assert [fetched.get(k) for k in keys] == expected
    assert expected == [(("a.c", 1), ("b.c", 2)), (("b.c", 3),), None, None, (("d.c", 5),)]
    assert hashed == ["c:ünï"]  # a word that is not ASCII is left to ``get``


def test_a_loaded_index_names_the_definitions_its_build_named(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {**PY_FILES, **OTHER_LANG_FILES}, use_git=False)
    built, _ = RepoIndex.build(root)
    loaded = RepoIndex(root, store.load(root))
    keys = [(PYTHON_NS, "helper"), (PYTHON_NS, "Core")]
    keys += [(ns, name) for ns, name in _keys(built) if name.endswith("callee")]
    assert len(keys) > 4 and all(built.resolver.by_name.get(k) for k in keys)
    for key in keys:
        assert loaded.resolver.by_name.get(key) == built.resolver.by_name.get(key), key
    # an edit on the loaded index: the file's saved rows give way to its new parse
    loaded.update_file("pkg/util.py", "def helper(x):\n    return x\n\n\ndef extra():\n    pass\n")
    assert loaded.resolver.by_name.get((PYTHON_NS, "extra")) == (("pkg/util.py", _node(loaded)),)
    assert loaded.resolver.by_name.get((PYTHON_NS, "Base")) is None


def _keys(index: RepoIndex) -> set[tuple[str, str]]:
    """Every key the index's definitions are named by, other languages' included."""
    return {
        (PYTHON_NS if pf.language == "python" else for_language(pf.language).namespace, d.name)
        for pf in index.parses().values()
        for d in pf.definitions
    }


def _node(index: RepoIndex) -> int:
    pf = index.parse("pkg/util.py")
    assert pf is not None
    return next(d.node for d in pf.definitions if d.name == "extra")


def test_per_file_tables_are_made_once_and_again_after_forget() -> None:
    made: list[str] = []
    files = {"a": "A", "b": "B"}

    def make(text: str) -> str:
        made.append(text)
        return text.lower()

    table = PerFile(files, make)  # type: ignore[arg-type]
    assert len(table) == 2 and "a" in table and "z" not in table and list(table) == ["a", "b"]
    assert made == []  # nothing is made before it is read
    assert table["a"] == "a" and table["a"] == "a" and made == ["A"]
    files["a"] = "Changed"
    table.forget("a")
    assert table["a"] == "changed" and made == ["A", "Changed"]


def test_saved_values_unread_since_the_last_drop_are_made_again() -> None:
    """An editing session's tidy drops the saved parses it made and no longer reads; what
    was set (an edited file's parse) stays."""
    made: list[int] = []

    def make(i: int) -> str:
        made.append(i)
        return f"saved {i}"

    table = LazyDict(["a", "b", "c"], make)
    assert table["a"] == "saved 0" and table["b"] == "saved 1" and made == [0, 1]
    table["c"] = "edited"
    table.drop_unread()  # everything was read since the start
    assert table["a"] == "saved 0" and made == [0, 1]
    table.drop_unread()  # "b" and "c" were not read since the last drop
    assert table["b"] == "saved 1" and table["c"] == "edited" and made == [0, 1, 1]
    del table["a"]
    table.drop_unread()
    table.drop_unread()
    assert "a" not in table and list(table) == ["b", "c"] and table["c"] == "edited"


def test_a_value_set_packed_is_held_packed_at_once() -> None:
    """``set_packed``: a value set and kept as the next drop would keep it, unread (packed
    with ``pack``, as it is without), made again from it when read."""
    table = LazyDict(["a", "b"], lambda i: f"saved {i}", lambda v: v.encode().decode)
    assert table["b"] == "saved 1"
    table.set_packed("b", "edited")
    assert table._values["b"] is None and not table._set and table["b"] == "edited"
    table.drop_unread()  # read since: kept made
    table.drop_unread()
    assert table._values["b"] is None and table["b"] == "edited"
    plain = LazyDict(["a"], lambda i: f"saved {i}")
    plain.set_packed("a", "edited")
    assert plain._values["a"] == "edited" and plain["a"] == "edited"


def test_values_set_and_unread_since_the_last_drop_are_packed_and_made_again() -> None:
    """With ``pack``, a value set (an edited file's parse) and not read since the last drop
    is kept packed there, made again from it when read, and dropped again when unread."""
    packed: list[str] = []

    def pack(value: str) -> Callable[[], str]:
        packed.append(value)
        encoded = value.encode()
        return encoded.decode

    table = LazyDict(["a", "b"], lambda i: f"saved {i}", pack)
    table["b"] = "edited"
    table.drop_unread()  # set since the start: kept as it is
    assert packed == [] and table._values["b"] == "edited"
    table.drop_unread()
    assert packed == ["edited"] and table._values["b"] is None
    assert table["b"] == "edited" and table.peek("b") == "edited"
    table.drop_unread()  # read since the last drop: kept
    assert table._values["b"] == "edited"
    table.drop_unread()  # made from its packed value: dropped, not packed again
    assert packed == ["edited"] and table._values["b"] is None and table["b"] == "edited"
    table["b"] = "again"
    assert table["b"] == "again" and "b" not in table._packed
    del table["b"]
    assert list(table) == ["a"] and not table._packed


def test_per_file_tables_past_the_bound_unread_since_the_last_drop_are_made_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("repomem.index.names._KEPT", 2)
    made: list[str] = []
    files = {"a": "A", "b": "B", "c": "C"}
    table = PerFile(files, lambda text: made.append(text) or text.lower())  # type: ignore[arg-type]
    assert table["a"] == "a" and table["b"] == "b"
    table.drop_unread()
    table.drop_unread()  # two tables: within the bound, kept however long unread
    assert table["a"] == "a" and table["b"] == "b" and made == ["A", "B"]
    table.drop_unread()
    assert table["c"] == "c"
    table.drop_unread()  # three: past the bound, those unread since the last drop go
    assert table["c"] == "c" and made == ["A", "B", "C"]
    assert table["a"] == "a" and made == ["A", "B", "C", "A"]


def test_per_file_tables_unread_for_the_idle_drops_are_made_again_within_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Within ``_KEPT`` files, a table read within the last ``_IDLE`` drops stays and one
    unread that long goes: a session keeps the tables of the files it works on lately."""
    monkeypatch.setattr("repomem.index.names._IDLE", 3)
    made: list[str] = []
    files = {"a": "A", "b": "B"}
    table = PerFile(files, lambda text: made.append(text) or text.lower())  # type: ignore[arg-type]
    assert table["a"] == "a" and table["b"] == "b"
    table.drop_unread()
    for _ in range(3):
        assert table["a"] == "a"  # read before every drop: stays
        table.drop_unread()
    assert set(table._made) == {"a"} and made == ["A", "B"]  # "b": unread for three drops
    assert table["b"] == "b" and made == ["A", "B", "B"]
    recent: Recent[str] = Recent()
    recent["x"] = "X"
    for _ in range(3):
        recent.drop_unread()
    assert recent.get("x") == "X"  # set before the first of the three drops
    for _ in range(4):  # read before the first, unread for the next three
        recent.drop_unread()
    assert recent.get("x") is None


def test_recent_values_past_the_bound_unread_since_the_last_drop_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("repomem.index.names._KEPT", 1)
    table: Recent[str] = Recent()
    table["a"] = "A"
    table.drop_unread()
    table.drop_unread()  # one value: within the bound, kept however long unread
    assert table.get("a") == "A"
    table["b"] = "B"
    table.drop_unread()  # both read (or set) since the last drop
    assert table.get("b") == "B"
    table.drop_unread()  # two: past the bound, "a", unread since the last drop, goes
    assert table.get("a") is None and table.get("b") == "B"
    table.clear()
    assert table.get("b") is None


def test_what_a_c_file_sees_is_dropped_with_the_resolvers_unread_tables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A build resolves each C file once: what its includes bring in (``CFamily._visible``)
    goes with the resolver's other tables unread since the last drop, and comes back the
    same when asked again."""
    monkeypatch.setattr("repomem.index.names._KEPT", 1)
    texts = {"a.h": "int f(void);\n"}
    texts |= {f"m{i}.c": f'#include "a.h"\nint g{i}(void) {{ return f(); }}\n' for i in range(3)}
    r = Resolver({p: parse_source(p, "c", t, "d") for p, t in texts.items()})
    resolved = {p: r.calls_of(p) for p in texts if p.endswith(".c")}
    visible = for_language("c").tables(r).visible  # type: ignore[attr-defined]
    assert visible.get("m0.c") == ({"a.h": 0}, visible.get("m0.c")[1])
    r.drop_unread()
    r.drop_unread()
    assert [visible.get(p) for p in resolved] == [None, None, None]
    assert {p: r.calls_of(p) for p in resolved} == resolved


def test_bytes_keys_are_each_slices_bytes_key() -> None:
    """A file's windows' keys made at once are each window's ``bytes_key`` (signed, little
    endian), empty and repeated slices included."""
    rng = np.random.default_rng(0)
    text = rng.integers(0, 256, 3000, dtype=np.uint8).tobytes()
    spans = np.sort(rng.integers(0, len(text), (200, 2)), axis=1)
    spans[:3] = [[0, 0], [5, 5], [0, len(text)]]
    keys = bytes_keys(text, spans)
    assert keys.dtype == np.int64 and keys.flags.writeable
    assert keys.tolist() == [bytes_key(text[lo:hi]) for lo, hi in spans.tolist()]
    assert bytes_keys(text, np.empty((0, 2), np.int64)).tolist() == []
