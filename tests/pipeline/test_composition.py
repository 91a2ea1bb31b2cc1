"""The rewrites of one run compose: a site whose guards read a fact that another site of the
run changes is judged again on the rewritten code (``klc.pipeline.compose``), for ``klc
apply``, ``klc batch`` and the optimizer alike (they share the pipeline's apply)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from klc.cli import main
from klc.cuda.parse import parse_bytes, parse_file
from klc.edits.bytes import ByteEdit, Moves, apply_edits
from klc.pipeline import apply_rules, apply_site, find_sites, spec_of
from klc.rule import RuleSet, load_rules_text

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is a folder of scripts, imported by this name
    sys.path.insert(0, str(ROOT))
from bench import composition as bc  # noqa: E402

CHANNEL = ROOT / "bench" / "transfer" / "channel_mean_var.cu"
KERNELS = sorted(bc.kernels_of([str(ROOT / "bench" / "transfer"),
                                str(ROOT / "bench" / "heldout")]))
LIBRARY = [str(ROOT / "skills"), str(ROOT / "passes")]


@pytest.fixture(scope="module")
def skills() -> list:
    return [r for r in RuleSet.load([str(ROOT / "skills")]).rules if not r.card.precision]


def test_a_column_rewrite_and_launch_bounds_do_not_compose_blindly(skills: list) -> None:
    """The column skill makes the block 32 x 32; add_launch_bounds' guard read a block of 64.
    Taken first, the bounds stand; the column rewrite is judged again on the bounded kernel
    and refused there (a launch of 1024 threads would fail)."""
    unit = parse_file(str(CHANNEL))
    ok = {s.rule.name for s in find_sites(unit, skills, None, spec_of(unit)) if s.ok}
    assert {"add_launch_bounds", "thread_per_column_to_block_column_reduce2"} <= ok
    out = apply_rules(unit, skills, None, spec_of(unit))
    applied = [rw.match.rule.name for rw in out.applied]
    assert "add_launch_bounds" in applied
    assert "thread_per_column_to_block_column_reduce2" not in applied
    [why] = [w for s, w in out.skipped if s.rule.name.startswith("thread_per_column")]
    assert why.startswith("add_launch_bounds (")
    assert "judged again on the rewritten code, refused: " in why
    assert "__launch_bounds__(64)" in why  # the bound the launch gives (a block of 64)
    assert bc.launch_bound_problems(out.source, str(CHANNEL)) == []
    # the sites that waited on the bounds and then held are applied, with a note each
    restrict = [rw for rw in out.applied if rw.match.rule.name == "add_restrict"]
    assert restrict and all(rw.match.unit is not unit for rw in restrict)
    notes = [n for n in out.notes if "add_restrict" in n]
    assert len(notes) == len(restrict)
    assert all("judged again on the rewritten code and applied" in n for n in notes)
    assert {unit.position(out.start_of(rw))[0] for rw in restrict} == {32, 37, 38}


def test_the_column_rewrite_alone_still_applies(skills: list) -> None:
    unit = parse_file(str(CHANNEL))
    column = [r for r in skills if r.name == "thread_per_column_to_block_column_reduce2"]
    out = apply_rules(unit, column, None, spec_of(unit))
    assert [rw.match.rule.name for rw in out.applied] == [column[0].name]
    assert b'block: ["ceil_div(64, 2)", 32]' in out.source


def test_batch_and_apply_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``klc batch`` (ungated, --out) and ``klc apply`` write the same composed kernel."""
    rules = tmp_path / "both.rule"
    rules.write_text((ROOT / "skills" / "launch_bounds.rule").read_text()
                     + (ROOT / "skills" / "column_reduce.rule").read_text())
    src = tmp_path / "in"
    src.mkdir()
    (src / CHANNEL.name).write_bytes(CHANNEL.read_bytes())
    assert main(["apply", str(rules), str(CHANNEL), "-o", str(tmp_path / "applied.cu")]) == 0
    err = capsys.readouterr().err
    assert "not applied in this run: add_launch_bounds (" in err
    assert main(["batch", str(src), "--rule", str(rules), "--out", str(tmp_path / "out"),
                 "-j", "1"]) == 0
    batched = (tmp_path / "out" / CHANNEL.name).read_bytes()
    assert batched == (tmp_path / "applied.cu").read_bytes()
    assert b"__launch_bounds__(64)" in batched and b"blockDim.y" not in batched


BLOCK_TIMES_8 = '''
rule widen_block {
  kind: skill
  description: "Eight times the threads per block (no guard: the pipeline checks the bounds)"
  context: global
  anchor: ```
    int $I = blockIdx.x * blockDim.x + threadIdx.x;
  ```
  rewrite replace: ```
    int $I = blockIdx.x * blockDim.x + threadIdx.x;
  ```
  rewrite launch block.x *= 8
  rewrite launch grid.x /= 8
  card {
    intent: "Widen the block"
    where: "A kernel indexed by its global thread"
    conditions: "None"
    pitfalls: "None"
  }
}
'''

BOUNDED = b'''/* klc-spec
kernel: scale
sizes: {n: 4096}
args:
  - {name: x, shape: [n], role: inout}
  - {name: n, value: n}
grid: ["ceil_div(n, 64)"]
block: [64]
*/
__global__ void __launch_bounds__(BOUND) scale(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}
'''


@pytest.mark.parametrize(("bound", "ok"), [(b"256", False), (b"512", True)])
def test_a_launch_change_stays_within_launch_bounds(bound: bytes, ok: bool) -> None:
    """Whatever a rule's guard says, its launch change is refused where the block it leaves
    is above the kernel's __launch_bounds__ (apply_rules, and apply_site as the optimizer's
    search applies one site)."""
    rules = load_rules_text(BLOCK_TIMES_8, "widen.rule")
    unit = parse_bytes(BOUNDED.replace(b"BOUND", bound), "scale.cu")
    spec = spec_of(unit)
    for out in (apply_rules(unit, rules, None, spec),
                apply_site(unit, find_sites(unit, rules, None, spec)[0], None, spec)):
        assert out.changed == ok
        if not ok:
            [(_, why)] = out.skipped
            assert why == ("its launch change (block.x *= 8, grid.x /= 8) makes the block 512 x "
                           "1 x 1 = 512 threads, more than `scale`'s __launch_bounds__(256) "
                           "(scale.cu:10:17) allows")


def test_moves_follow_offsets_through_edits_and_a_spec_change() -> None:
    src = b"0123456789"
    spans: list[tuple[int, int, int, int]] = []
    new = apply_edits(src, [ByteEdit(2, 2, "ab", "insert"), ByteEdit(5, 7, "X", "replace")],
                      spans)
    assert new == b"01 ab 234 X 789"  # (apply_edits never glues two words)
    moves = Moves()
    moves.add(spans)
    assert [moves.new_offset(i) for i in range(11)] == [0, 1, 6, 7, 8, None, None, 12, 13, 14,
                                                        15]
    moves.add_diff(new, new[:4] + b"ZZ" + new[4:])
    assert [moves.new_offset(i) for i in (1, 2, 9)] == [1, 8, 16]


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_pair_and_the_library_compose(data: st.DataObject,
                                            tmp_path_factory: pytest.TempPathFactory) -> None:
    """A kernel of the transfer or regression set, and the whole library or a pair of the
    rules (skills and passes) that apply to it, applied ungated: the rewrite compiles where
    the original does, no launch bounds fall below the block, and each round equals its
    rules applied one after another (``bench.composition.stale_problems``)."""
    os.environ.setdefault("KLC_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    kernel = data.draw(st.sampled_from(KERNELS), label="kernel")
    cases = bc.cases_of(kernel, bc._rules(tuple(LIBRARY)), None)
    names = data.draw(st.sampled_from(cases), label="rules")
    case = bc.run_case(str(kernel), LIBRARY, names, static=True)
    assert case.problems == [], f"{kernel.name} {names}: {case.problems}"


def test_the_oracle_sees_a_stale_round(skills: list) -> None:
    """What the property test asks of each round: applied one rule after another, the later
    rule still holds. A round planned on the original unit for both fails it."""
    from klc.edits import plan
    from klc.pipeline import Outcome
    from klc.rule.values import resolve_holes

    unit = parse_file(str(CHANNEL))
    names = ("add_launch_bounds", "thread_per_column_to_block_column_reduce2")
    sites = [s for s in find_sites(unit, [r for r in skills if r.name in names], None,
                                   spec_of(unit)) if s.ok]
    stale = Outcome(unit, unit.source)
    stale.applied = [plan(s.match, resolve_holes(s.rule, {})) for s in sites]
    [problem] = bc.stale_problems(stale)
    assert problem.startswith("thread_per_column_to_block_column_reduce2: applied 1x in a "
                              "round after add_launch_bounds, but holds at 0 site(s)")
