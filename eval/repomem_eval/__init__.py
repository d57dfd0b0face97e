"""RepoEval-style evaluation harness for repomem: benchmark construction, metrics and reports."""
