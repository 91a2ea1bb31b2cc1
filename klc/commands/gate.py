"""``klc gate``: compile, verify and profile a kernel under its klc-spec (:mod:`klc.gate`).

Exit 0: passed or compiled only; 1: failed.
"""

from __future__ import annotations

import argparse
import json

from klc.commands import args as arg_types
from klc.commands.console import out


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("gate", help="compile, verify and profile a kernel (against a reference "
                       "with --against) under its klc-spec; exit 0 passed or compiled-only, "
                       "1 failed")
    p.add_argument("kernel", metavar="KERNEL", help="a .cu file with a klc-spec block")
    p.add_argument("--against", metavar="REFERENCE",
                   help="the reference kernel file (default: the kernel against itself)")
    p.add_argument("--arch", help="target arch for NVRTC, e.g. sm_90 (default: the device's, "
                   "or sm_90 without a GPU)")
    p.add_argument("--stages", default="compile,verify,profile",
                   help="comma-separated stages to run (default: compile,verify,profile)")
    p.add_argument("--timeout", type=arg_types.seconds, metavar="S",
                   help="seconds for verify and profile together (default: the spec's "
                   "timeout_s, or 60)")
    p.add_argument("--json", action="store_true", help="print the gate record as JSON")


def run(args: argparse.Namespace) -> int:
    from klc.cuda.parse import read_source
    from klc.gate import gate
    from klc.gate.report import print_record

    reference = read_source(args.against) if args.against else None
    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
    record = gate(read_source(args.kernel), args.kernel, reference=reference,
                  reference_path=args.against, arch=args.arch, stages=stages,
                  timeout_s=args.timeout)
    if args.json:
        print(json.dumps(record.to_json(), indent=2))
    else:
        print_record(record, out)
    return 1 if record.verdict == "failed" else 0
