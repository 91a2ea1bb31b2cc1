"""What an optimize run is asked to do (``OptimizeOptions``), and the loop's fixed limits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from klc.fill import Filler
    from klc.gate import GateRecord
    from klc.rule import Rule

MIN_GAIN = 0.02  # a step must be at least 2% faster (or beyond the noise, if larger)
EXPLORE = 3  # phase B: more hole values for the round's most promising holed site
MAX_ENABLING = 2  # neutral steps that only unlock new sites, in a row
MAX_ROUNDS = 64  # a driver caps its iterations

ProgressFn = Callable[[str, dict[str, Any]], None]


@dataclass
class OptimizeOptions:
    """The options of one ``optimize()`` run; every field has the command's default.

    ``skills``: the rules to apply (None: the default skill folders; only ``kind: skill``
    rules are tried when there are any). ``filler``: ``search``, ``llm`` or a ``Filler``
    (``model`` and ``seed`` are handed to a filler made by name). ``budget``: gate trials.
    ``target_sol``: stop at this fraction of the speed-of-light floor. ``arch``: NVRTC's
    target (None: the device's). ``gpu`` forces the mode (None: ask the driver);
    ``gate_fn`` replaces ``klc.gate.gate`` (same signature; tests script it); ``cache_dir``
    is where gate records are kept (default ``$KLC_CACHE_DIR/gate``); ``use_cache=False``
    runs every trial; ``unverified``: without a GPU, return the first compile-clean
    candidate; ``min_gain``: the least gain a step must show; ``include_slower`` tries the
    skills whose card's verdict is "slower" too (ranked last); ``recipes`` are the lineage
    recipes to replay (default: ``recipes.yaml`` of the skills' folders; ``[]`` for none);
    ``progress(event, data)`` is told of each trial. ``rank_by_headroom`` chooses what to
    try by the measured % of SOL (``klc.optimize.headroom``: structural skills first far
    from SOL, cheap ones only near it); off, skills go by their card's verdict and speedup.
    ``llm_timeout_s`` and ``llm_retries`` are the LLM filler's request timeout and retry
    limit (None: its defaults, 60 s and 3)."""

    skills: list[Rule] | None = None
    filler: str | Filler = "search"
    budget: int = 30
    target_sol: float = 0.9
    arch: str | None = None
    cache_dir: str | None = None
    progress: ProgressFn | None = None
    gpu: bool | None = None
    gate_fn: Callable[..., GateRecord] | None = None
    use_cache: bool = True
    unverified: bool = False
    min_gain: float = MIN_GAIN
    model: str | None = None
    seed: int = 0
    include_slower: bool = False
    recipes: list[Any] | None = None
    rank_by_headroom: bool = True
    llm_timeout_s: float | None = None
    llm_retries: int | None = None
