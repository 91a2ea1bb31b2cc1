"""The static analyses the guards read, in layers: each module imports only those before it.

``tree`` (memos, node lookups, citing code, the ``Place`` an analysis looks at) ->
``declarations`` (what a name is) -> ``writes`` (write entries, address holders, aliases,
escapes) -> ``types`` (types of expressions) -> ``constants`` (the C constant evaluator) ->
``launch`` (block dimensions, thread dependence, shared memory) -> ``loops`` (trip counts) ->
``alignment`` (known alignments and multiples).

Importing the package imports every layer, so that ``launch`` has installed the block's
extent into the constant evaluator (``constants.block_extent``) before anything evaluates.

Names with a leading underscore are internal to ``klc.analysis`` and ``klc.guards`` (the
predicates read them across the layers); the rest of klc uses the public ones:
``declarations_named``, ``declaration_signatures``, ``has_type_kind``, ``SIZES``, ``Place``.
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
