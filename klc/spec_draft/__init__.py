"""``klc spec init``: draft a kernel's klc-spec block from what the file already says.

What is read, and what each drafted field comes from (each one is marked in the draft with a
``# guessed: ...`` comment saying so; a field that cannot be found is a ``TODO`` and the draft
is refused until a person fills it in):

- **args and roles**: the signature. A pointer is a buffer: ``const`` or never written is
  ``in``; written and never read is ``out``; written and read (``+=``, an atomic, read
  before the write) is ``inout``. Any other parameter is a scalar.
- **sizes**: the integer parameters that bound an index, a guard or a loop. With a host
  launch in the file (``kernel<<<grid, block>>>(args)``, in ``main`` or in a launcher), the
  sizes are the host's variables set from constants (``int B = 8;``, ``#define N (1 <<
  20)``), with their values, and each scalar argument is the host's expression of them
  (``klc.spec_draft.host`` resolves launcher parameters through their callers, ``dim3``
  axes, macros); a size the file gives no value (a launcher's parameter nothing passes a
  constant to, ``atoi(argv[1])``, ``p->dim``) is chosen as below, and the draft says why.
  Without a launch, sizes get values that make the largest buffer about 2^24 elements, the
  sizes that bound a per-thread loop 64.
- **shapes**: from the index expressions. Every access ``p[e]`` of a buffer (directly, or
  through a local pointer ``q = p + off``) has its largest index computed: the guarded
  thread index (``i < n``), loop variables (``c < cols``) and locals are substituted, and
  each free variable is set to its smallest or largest value. The shape is that largest
  index plus one, written as the simplest expression of the sizes equal to it at several
  sizes (``[rows, cols]``, ``["n - k + 1"]``), else as computed. An index read from another
  buffer (``table[ids[t] * dim + c]``) makes a new size for the range of those values, and
  the index buffer's init ``randint(0, that size)``; an 8-bit index ranges over 256.
- **grid and block**: the host launch where there is one (an unguarded index then spans
  the launch's threads); else the thread index: a block of
  256 threads (or the size of a ``__shared__`` array indexed by the thread, or the literal
  that multiplies ``blockIdx``), 32 x 8 for two dimensions, and a grid of
  ``ceil_div(extent, block)`` over the guard's extent, or the guard's extent itself for an
  index that is ``blockIdx`` alone (a block per row).
- **inits**: ``normal`` for inputs (``randint`` for index buffers), poison for outputs (the
  gate's default), a float scalar the launch gives as its number, else ``uniform(0.5, 2)``,
  3 for an integer scalar that is not a size.
- **types**: as the compiler sees them (``klc.spec.aliases``: typedefs, ``using``, macros,
  ``-D`` switches, headers through ``-I``).

The draft is checked by loading it and binding it to the signature (the gate's own
``check_spec``) before it is shown or written.

The package, in the order a draft runs: ``kernel`` reads the kernel (locals, loops, guards,
accesses, thread indices), ``host`` its host launch, ``draft`` runs the stages and writes the
block, ``exprs`` holds the expression text helpers they share.
"""

from klc.spec_draft.draft import Draft, draft_spec, with_block
from klc.spec_draft.kernel import DraftError

__all__ = ["Draft", "DraftError", "draft_spec", "with_block"]
