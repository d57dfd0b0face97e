"""The doc memory's strategies, memory forms and look-ups by name.

Plain tuples in a module that imports nothing, so that the command line can offer them as
choices without loading the memory (``repomem --help`` imports every command).
"""

from __future__ import annotations

STRATEGIES = ("single", "rerank", "iterative", "readagent", "graph", "factqa")
FORMS = ("chunk", "gist", "summary", "triple", "fact")
ALL_FORMS = (*FORMS, "mixed")
BUILT_FORMS = ("gist", "summary", "triple", "fact")  # forms that need building
LOOKUPS = ("parallel", "sequential")
