"""The optional parts of klc and the extras that install them.

The core install (``pip install klc-cuda``) is what ``parse``, ``list``, ``apply``, ``check``,
``test`` and ``gate`` need. Each heavier dependency belongs to one extra, and a command that
needs a missing one says which::

    klc-cuda[ray]   ray         klc batch --executor ray
    klc-cuda[plot]  matplotlib  the plots of reports (optimize, batch, lineage)
    klc-cuda[tune]  optuna      the search filler's TPE sampler (without it: random sampling)
    klc-cuda[llm]   openai      --filler llm
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

from klc.errors import KlcError

EXTRAS = {"ray": "ray", "matplotlib": "plot", "optuna": "tune", "openai": "llm"}


def hint(module: str) -> str:
    """``pip install 'klc-cuda[EXTRA]'`` for the extra that installs ``module``."""
    return f"pip install 'klc-cuda[{EXTRAS[module]}]'"


def missing(module: str, what: str) -> str:
    """The sentence saying that ``what`` needs ``module``, which is not installed, and how to
    install it."""
    return (f"{what} needs the {module} package, which is not installed: "
            f"{hint(module)}")


def available(module: str) -> bool:
    """Whether ``module`` can be imported (found on the path; nothing is imported)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module set to None in sys.modules, a broken parent
        return False


def require(module: str, what: str) -> ModuleType:
    """Import ``module``, or raise KlcError naming the extra that installs it (``what``: the
    command or option that needs it, e.g. ``--executor ray``)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is not None and e.name.split(".")[0] != module.split(".")[0]:
            raise  # installed, but broken inside: not the missing-extra case
        raise KlcError(missing(module.split(".")[0], what)) from None


def deferred(name: str) -> ModuleType:
    """The module ``name``, imported when an attribute of it is first asked
    (``importlib.util.LazyLoader``): a dependency most runs of a command never use (the YAML
    reader of a kernel's klc-spec block, which most files lack) costs them no import."""
    held = sys.modules.get(name)
    if held is not None:
        return held
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        return importlib.import_module(name)  # (raises what a plain import raises)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
