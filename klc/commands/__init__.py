"""The subcommands, one module each (``klc.cli`` lists them in ``COMMAND_MODULES``).

Each module defines ``add_parser(sub)`` (its argparse subparser) and ``run(args) -> int``,
and keeps its heavy imports inside ``run``; ``console`` holds the shared stdout and stderr
consoles.
"""
