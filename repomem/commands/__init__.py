"""Sub-commands of the ``repomem`` CLI: each module defines ``NAME``, ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``. Packages outside ``repomem`` (the LSP
server, the evaluation harness) add theirs through the ``repomem.commands`` entry-point group,
so that ``repomem`` never imports them."""
