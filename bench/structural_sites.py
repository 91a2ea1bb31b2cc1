"""Count the sites where a *structural* skill applies over folders of kernels.

    python bench/structural_sites.py DIR... [--skills DIR] [--json OUT]

A structural skill changes how work maps to threads, the memory layout or the launch
(warp per row, shared-memory tiles, vector loads, grid-stride loops, ...); the others only
annotate the code (qualifiers, ``__launch_bounds__``, unroll pragmas, fast-math intrinsics).
The measure of the matcher's reach is this count on code no one here wrote (the transfer set,
``bench/transfer/``; the real-code corpus of ``bench/real_corpus.py``): it must go up while
``bench/soundness.py`` stays at 0 broken rewrites. Prints applicable sites and files per
skill, then the totals.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# the skill files whose rules only annotate code: everything else is structural
ANNOTATING = frozenset({"qualifiers", "launch_bounds", "pragma_unroll", "pragma_unroll_bare",
                        "fast_math"})


def count(roots: list[str], skills: str) -> dict[str, object]:
    from klc.batch.listing import kernel_files, list_paths

    paths, problems = kernel_files(roots)
    sites: Counter[str] = Counter()
    files: dict[str, set[str]] = defaultdict(set)
    family: dict[str, str] = {}
    for listing in list_paths(paths, [skills], jobs=1):
        for s in listing.sites:
            if not s["applicable"]:
                continue
            stem = Path(s["rule_location"].rsplit(":", 1)[0]).stem
            family[s["rule"]] = stem
            sites[s["rule"]] += 1
            files[s["rule"]].add(s["file"])
    structural = {r: n for r, n in sites.items() if family[r] not in ANNOTATING}
    return {"files": len(paths), "unreadable": len(problems),
            "sites": dict(sites.most_common()),
            "files_per_rule": {r: len(f) for r, f in files.items()},
            "structural_sites": sum(structural.values()),
            "structural_files": len({f for r in structural for f in files[r]}),
            "annotating_sites": sum(n for r, n in sites.items() if r not in structural)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", nargs="+", metavar="DIR")
    ap.add_argument("--skills", default=str(ROOT / "skills"))
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args()
    t0 = time.monotonic()
    result = count(args.roots, args.skills)
    for rule, n in result["sites"].items():  # type: ignore[union-attr]
        print(f"{n:6d} sites {result['files_per_rule'][rule]:5d} files  {rule}")  # type: ignore[index]
    print(f"{result['files']} files: {result['structural_sites']} structural sites in "
          f"{result['structural_files']} files, {result['annotating_sites']} annotating sites "
          f"({time.monotonic() - t0:.1f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
