"""The CUDA front end: source bytes -> a lossless tree -> a model of the unit, with semantic
facts from libclang where the tree cannot tell.

Its modules, from the bottom (each imports only those above it in this list):

- ``syntax``: the tree-sitter-cuda grammar, field ids, the per-thread parser, node helpers;
- ``macros``: macro recovery (masks, and what a masked macro meant);
- ``model``: plain data (``Unit``, ``Function``, ``Param``, loops, launches, shared arrays,
  problems) and the shape of the facts a unit receives (``UnitFacts``, ``TypeFact``);
- ``build``: the model built from the tree, in stages, on a unit's first question;
- ``libclang`` and ``facts``: libclang set up for CUDA with no toolkit, and ``Facts``, the
  types and constant values it gives (beside the model: the model never imports them);
- ``parse``: reading and parsing, the one place that makes a ``Unit`` and hands it its
  builder and its facts.

``docs/architecture.md`` ("klc.cuda") draws where this sits among klc's layers.
"""
