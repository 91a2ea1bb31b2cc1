"""``klc spec``: draft a kernel's klc-spec block, and check one against the signature.

    klc spec init KERNEL.cu [--kernel NAME] [--in-place | -o OUT]
    klc spec check KERNEL.cu...

``init`` drafts the block (klc.spec_draft says from what), marks every field it guessed
(``# guessed: ...`` lines in the block) and checks that the draft loads and fits the
signature. It prints the block; ``--in-place`` puts it at the top of the file, ``-o`` writes
the file with it to OUT (atomically). Where a field cannot be found it is a ``TODO``: the
draft is printed, nothing is written, exit 1.

``check`` loads each file's block and binds it to its kernel (the checks the gate makes
before it compiles): every field, name and expression, the argument order and types, the
roles against ``const``, the launch's values at every size; it names the lines still marked
as guessed.

Exit 0: drafted (written) / valid; 1: a draft with TODO fields (not written); 2: bad input.
"""

from __future__ import annotations

import argparse
import re


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("spec", help="draft a kernel's klc-spec block from its signature and "
                       "host launch (init), or check a spec against the signature (check)")
    s = p.add_subparsers(dest="spec_command", metavar="SUBCOMMAND")
    i = s.add_parser("init", help="draft the klc-spec block of a kernel file; every guessed "
                     "field is marked")
    i.add_argument("kernel_file", metavar="KERNEL")
    i.add_argument("--kernel", metavar="NAME", help="the kernel to draft for, when the file "
                   "has several")
    out = i.add_mutually_exclusive_group()
    out.add_argument("--in-place", action="store_true",
                     help="put the drafted block at the top of the file")
    out.add_argument("-o", "--output", metavar="OUT",
                     help="write the file with the drafted block to OUT")
    c = s.add_parser("check", help="check klc-spec blocks against their kernels' signatures")
    c.add_argument("files", nargs="+", metavar="KERNEL")
    from klc.commands.args import add_build_flags

    for q in (i, c):
        add_build_flags(q)


def run(args: argparse.Namespace) -> int:
    from klc.errors import KlcError

    if args.spec_command == "init":
        return _init(args)
    if args.spec_command == "check":
        return _check(args)
    raise KlcError("klc spec: name a subcommand: init or check")


def _read(path: str) -> bytes:
    from klc.cuda.parse import check_text
    from klc.fsutil import read_input

    data = read_input(path, "kernel file")
    check_text(path, data)
    return data


def _init(args: argparse.Namespace) -> int:
    from rich.console import Console

    from klc.cuda.parse import parse_bytes
    from klc.errors import KlcError, shown, where
    from klc.fsutil import atomic_write
    from klc.spec import check_spec, find_spec_block, load_spec
    from klc.spec_draft import draft_spec, with_block

    err = Console(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True)
    path = args.kernel_file
    source = _read(path)
    span = find_spec_block(source)
    if span is not None:
        unit = parse_bytes(source, path)
        line, col = unit.position(span[0])
        raise KlcError(f"{where(path, line, col)}: the file already has a klc-spec block (klc spec "
                       "check validates it)")
    unit = parse_bytes(source, path)
    if unit.problems:
        raise KlcError(unit.problems[0].describe(path))
    try:
        draft = draft_spec(unit, args.kernel)
    except KlcError:
        raise
    except (RecursionError, ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
        # the drafter met code it does not model: one line, as for bad input
        raise KlcError(f"{shown(path)}: klc spec init cannot draft this kernel "
                       f"({type(e).__name__}: {e}); write the spec by hand (docs/spec.md)"
                       ) from None
    print(draft.text, end="")
    if draft.todo:
        for t in draft.todo:
            err.print(f"klc: TODO: {t}", markup=False)
        err.print(f"klc: the draft has {len(draft.todo)} field(s) klc could not find (TODO): "
                  "fill them in by hand" + ("; nothing written" if args.in_place or args.output
                                            else ""))
        return 1
    combined = with_block(source, draft.text)
    try:
        spec = load_spec(combined, path)
        assert spec is not None
        check_spec(spec, parse_bytes(combined, path))
    except KlcError as e:  # the drafter's own fault: say so, write nothing
        raise KlcError(f"{shown(path)}: the drafted spec does not check ({e}); nothing written") \
            from None
    where = "from the host launch" if draft.host_launch else "from the kernel alone"
    err.print(f"klc: drafted the spec of {draft.kernel} {where}; {len(draft.guessed)} guessed "
              "field(s), marked '# guessed': review them, then klc gate")
    if args.in_place:
        atomic_write(path, combined, in_place=True)
    elif args.output:
        atomic_write(args.output, combined)
    return 0


def _check(args: argparse.Namespace) -> int:
    from rich.console import Console

    from klc.cuda.parse import parse_bytes
    from klc.errors import KlcError, shown
    from klc.spec import check_spec, find_spec_block, load_spec

    out = Console(highlight=False, markup=False, emoji=False, soft_wrap=True)
    for path in args.files:
        source = _read(path)
        spec = load_spec(source, path)
        if spec is None:
            raise KlcError(f"{shown(path)}: no klc-spec block (klc spec init drafts one)")
        bound = check_spec(spec, parse_bytes(source, path))
        span = find_spec_block(source)
        marked = []
        if span is not None:
            first = source[:span[0]].count(b"\n") + 1
            for i, line in enumerate(source[span[0]:span[1]].decode("utf-8", "replace")
                                     .splitlines()):
                if re.match(r"\s*#\s*(guessed:|klc spec init drafted)", line) or \
                        "# guessed" in line:
                    marked.append(first + i)
        sizes = ", ".join(f"{k}={v}" for k, v in spec.sizes.items())
        line = (f"{shown(path)}: ok: {bound.name_expression}, {len(bound.args)} arguments, sizes "
                f"{sizes}" + (f"; {len(marked)} line(s) still marked as guessed (lines "
                              f"{', '.join(map(str, marked[:8]))}"
                              f"{', ...' if len(marked) > 8 else ''})" if marked else ""))
        out.print(line, markup=False)
    return 0
