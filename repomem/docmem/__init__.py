"""Doc memory: the repository's docs as text memory, linked to its code.

Docs (README and other Markdown, reStructuredText and text files, Python module docstrings)
are segmented along their structure (``segments``), paginated ReadAgent-style
(``pagination``), turned into memory forms (``forms``), related to each other and to code
fragments (``relations``, ``entities``), and retrieved with doc entries and code fragments
scored together (``space``). ``strategies`` answers questions with the retrieval and
navigation loops of the memory papers; ``DocMemory.retrieve_for_code`` offers doc segments to
code completion.
"""
