"""repomem: repository-aware code completion with relation-aware retrieval (FragRel)."""

__version__ = "0.1.0"
