"""The repository index, in pipeline order: files are scanned (``files``), parsed with
tree-sitter (``parsing``, ``splice`` for cheap edits), their names resolved (``resolve``) into a
weighted code graph (``graph``), cut into fragments (``fragments``) that are related through the
graph (``relations``, FragRel Eq. 8) and searched with BM25 (``bm25``); ``repo.RepoIndex`` ties
them together and ``store`` saves them atomically."""
