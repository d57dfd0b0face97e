"""The resolver as the languages' hooks see it (repomem.index.resolver_types): the real
resolver has every member the protocol declares, and a language's hooks resolve the same
through an object holding only those members as through the resolver itself."""

from __future__ import annotations

from typing import Any, get_type_hints

import pytest
from repos import OTHER_LANG_FILES, make_repo

from repomem.index import langs
from repomem.index.repo import RepoIndex
from repomem.index.resolve import Resolver
from repomem.index.resolver_types import ResolverTables

METHODS = ("note_lookup", "note_key")
MEMBERS = (*get_type_hints(ResolverTables), *METHODS)


class ProtocolOnly:
    """The resolver seen through ``ResolverTables``: any other member is an error."""

    def __init__(self, resolver: Resolver) -> None:
        object.__setattr__(self, "_resolver", resolver)

    def __getattr__(self, name: str) -> Any:
        if name not in MEMBERS:
            raise AssertionError(f"a hook used {name!r}, which ResolverTables does not declare")
        return getattr(self._resolver, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in MEMBERS:
            raise AssertionError(f"a hook set {name!r}, which ResolverTables does not declare")
        setattr(self._resolver, name, value)

    # Java keeps its tables keyed on the resolver object (a weak mapping), not in ``tables``:
    # the stand-in is that key
    def __hash__(self) -> int:
        return hash(self._resolver)

    def __eq__(self, other: object) -> bool:
        return other is self or other is self._resolver


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> RepoIndex:
    root = make_repo(tmp_path_factory.mktemp("langs") / "r", OTHER_LANG_FILES, use_git=False)
    return RepoIndex.build(root, save=False)[0]


def test_the_resolver_has_every_member_the_protocol_declares(index: RepoIndex) -> None:
    assert {"by_name", "files", "defs", "settings", "tables", "_trying"} <= set(MEMBERS)
    resolver = index.resolver
    missing = [name for name in MEMBERS if not hasattr(resolver, name)]
    assert missing == []
    assert all(callable(getattr(resolver, name)) for name in METHODS)


@pytest.mark.parametrize("path", sorted(p for p in OTHER_LANG_FILES if not p.endswith(".py")))
def test_a_languages_hooks_need_only_the_protocol(index: RepoIndex, path: str) -> None:
    resolver = index.resolver
    pf = index.parse(path)
    assert pf is not None and pf.calls, path
    hooks = langs.for_language(pf.language)
    through_protocol = [hooks.resolve_call(ProtocolOnly(resolver), path, c) for c in pf.calls]  # type: ignore[arg-type]
    direct = [hooks.resolve_call(resolver, path, c) for c in pf.calls]
    assert through_protocol == direct
    assert any(t is not None for t in direct), f"{path}: no call resolved"


def test_the_notes_record_only_while_a_resolution_is_under_way(index: RepoIndex) -> None:
    resolver = index.resolver
    resolver.note_key("go", "outside")  # no resolution under way: nothing to record into
    assert resolver._trying is None
    resolver._trying = set()
    try:
        resolver.note_key("go", "goCallee")
        assert resolver._trying == {"go:goCallee"}
    finally:
        resolver._trying = None
