"""Moved to :mod:`klc.batch.listing`; the old import path.  SHIM(issue 20)"""

from klc.batch.listing import *  # noqa: F403  # SHIM(issue 20)
from klc.batch.listing import _STATE, _init, _load, _rule_info  # noqa: F401  # SHIM(issue 20)
from klc.interrupts import tune_gc  # noqa: F401  # SHIM(issue 20)
