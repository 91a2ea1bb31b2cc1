"""Subcommands that live in their own module: ``lineage``, ``optimize``, ``batch``.

Each module defines ``add_parser(sub)`` and ``run(args) -> int`` and is registered by
``klc.cli`` (see ``_COMMAND_MODULES`` there).
"""
