"""``klc learn``: reverse the steps of recorded walks into the skills library.

    klc learn LINEAGE_DIR... [--out skills] [--passes DIR] [--golden DIR] [--json]

Every accepted step of every walk becomes the inverse of its pass; a pass seen in several
walks gives one skill whose card lists each measured effect. Skills are written one file per
family into --out (atomically; nothing is written when any walk or skill is bad), and each
walk's skills in forward order into --out/recipes.yaml (klc/recipes.py). Where
matplotlib is installed, each walk's report.md and lineage.png are redrawn too.

A learning that would turn a skill measured on a GPU into an unmeasured one (its walks were
gated by compile only) is refused unless ``--force``.

Exit 0: skills written; 2: bad input, or measured skills at stake (nothing written).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("learn", help="turn the steps of recorded lineage walks (klc lineage "
                       "--out DIR) into skills: inverse rules with cards from the measurements")
    p.add_argument("lineages", nargs="+", metavar="LINEAGE_DIR",
                   help="folders written by klc lineage (each holds lineage.json)")
    p.add_argument("--out", default="skills", metavar="DIR",
                   help="the skills folder to write (default: skills)")
    p.add_argument("--passes", metavar="DIR", help="the passes the walks used (default: the "
                   "folder each lineage.json names)")
    p.add_argument("--golden", metavar="DIR", help="also write a golden test per skill into "
                   "DIR/<skill>/ (its first step: version N in, version N - 1 expected)")
    p.add_argument("--json", action="store_true", help="print the skills learned as JSON")
    p.add_argument("--force", action="store_true", help="write even where a skill measured "
                   "on a GPU would become unmeasured (walks gated by compile only)")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from klc.errors import KlcError
    from klc.lineage import load_lineage, write_report
    from klc.reverse import learn, measured_losses, write_skills
    from klc.round_trip import golden_cases, write_golden

    err = Console(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True)
    if not Path(args.out).is_dir():
        raise KlcError(f"--out {args.out}: no such folder")
    learned = learn(args.lineages, args.passes)
    lost = [] if args.force else measured_losses(learned, args.out)
    if lost:
        unmeasured = [d for d in args.lineages if load_lineage(d).get("gating") != "full"]
        raise KlcError(f"--out {args.out}: {len(lost)} measured skills would become "
                       f"unmeasured ({', '.join(lost[:3])}{', ...' if len(lost) > 3 else ''})"
                       f": {len(unmeasured)} of the walks were gated by compile only"
                       f"{' (' + ', '.join(unmeasured[:3]) + ')' if unmeasured else ''}; walk "
                       "them again on a GPU, or give --force (nothing written)")
    cases, notes = golden_cases(learned) if args.golden else ([], [])
    written = write_skills(learned, args.out)
    from klc.recipes import write as write_recipes

    written.append(write_recipes(learned, args.out))
    if args.golden:
        written += write_golden(cases, args.golden)
    for d in args.lineages:  # the plots, where matplotlib is installed
        try:
            write_report(load_lineage(d), Path(d))
        except KlcError as e:
            err.print(f"klc: note: report of {d} not redrawn: {e}", markup=False)
        except OSError as e:
            err.print(f"klc: note: report of {d} not redrawn: {e.strerror or e}", markup=False)
    summary = [{"skill": i.rule.name, "pass": i.inverse.pass_rule.name, "file":
                f"{args.out}/{i.family}.rule", "verdict": i.rule.card.verdict,
                "steps": [f"{o.lineage['family']}:{o.step['index']}" for o in i.observations],
                "holes": {k: str(h.default) for k, h in i.rule.holes.items()}}
               for i in learned]
    if args.json:
        sys.stdout.write(json.dumps(summary, indent=1) + "\n")
    else:
        for s in summary:
            print(f"{s['skill']:<32} {s['verdict']:<11} from {s['pass']} "
                  f"({len(s['steps'])} steps) -> {s['file']}")
        for c in cases:
            if not c.back:
                err.print(f"klc: note: golden case {c.skill}/{c.name}: the skill's output is "
                          "not byte for byte the version before the step (an erased value "
                          "comes back as its number, or the skill applies at more sites)",
                          markup=False)
        err.print(f"wrote {len(written)} files ({len(learned)} skills)")
    for n in notes:
        err.print(f"klc: note: {n}", markup=False)
    return 0
