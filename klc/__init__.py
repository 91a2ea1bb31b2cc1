"""klc, the kernel lineage compiler.

Learns *when* a GPU optimization is sound from expert CUDA kernels, stores that knowledge as
structural rewrite rules, and applies the rules to new kernels under a compile / verify /
profile gate. See README.md and the design notes for the data flow.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("klc-cuda")  # the distribution (pyproject: name)
except PackageNotFoundError:  # running from a checkout that was not installed
    __version__ = "0.0.0+checkout"

__all__ = ["__version__"]
