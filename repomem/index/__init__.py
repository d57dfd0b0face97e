"""The repository index, in pipeline order: files are scanned (``files``), parsed with
tree-sitter (``parsing``, ``splice`` for cheap edits), their names resolved (``resolve``) into a
weighted code graph (``graph``), cut into fragments (``fragments``) that are related through the
graph (``relations``, FragRel Eq. 8) and searched with BM25 (``bm25``). The index's tables
(``tables``) are built by ``build``, changed file by file by ``update``, searched by ``search``
and saved atomically by ``store``; ``repo.RepoIndex`` is the handle over them."""
