"""The static analyses the guards read, in layers: each module imports only those before it.

``tree`` (memos, node lookups, citing code, the ``Place`` an analysis looks at) ->
``declarations`` (what a name is) -> ``writes`` (write entries, address holders, aliases,
escapes) -> ``types`` (types of expressions) -> ``constants`` (the C constant evaluator, and
the block's dimensions, which each needs from the other) -> ``launch`` (thread dependence,
barriers, shared memory) -> ``loops`` (trip counts) -> ``alignment`` (known alignments and
multiples).

Every name another package reads is public (no leading underscore): the guards, the fillers
and the spec drafter use ``Place``, ``Evaluator``, ``lookup``, ``text_of``, ``block_dims``,
``writes_to``, ... (``tests/test_architecture.py`` holds that no module outside
``klc.analysis`` imports one of its underscore names); an underscore name is internal to its
module or to the package.
"""

from klc.analysis import (  # noqa: F401  (every layer, in order)
    alignment,
    constants,
    declarations,
    launch,
    loops,
    tree,
    types,
    writes,
)
