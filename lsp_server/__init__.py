"""The repomem language server: repository-aware completions over the Language Server Protocol."""
