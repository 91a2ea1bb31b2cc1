"""Reversal: the mechanical inverse, the round trip over every step of the five lineages,
cards from measurement (effects, verdict, pitfalls, provenance), klc learn."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from klc.cli import main
from klc.cuda.parse import parse_bytes
from klc.errors import KlcError
from klc.lineage import walk, write_lineage
from klc.pipeline import apply_rules, apply_site, find_sites, spec_of
from klc.reverse import Learned, learn, mechanical_inverse, skill_files
from klc.round_trip import apply_at_step
from klc.rule import load_rule_dir, load_rules, load_rules_text

ROOT = Path(__file__).resolve().parents[2]
# every lineage of bench/lineages (a new one is walked, reversed and reproduced too)
FAMILIES = tuple(sorted(p.parent.name for p in (ROOT / "bench" / "lineages").glob("*/expert.cu")))
# skills whose round trip gives the erased value back as its number (`__launch_bounds__(128)`
# for `__launch_bounds__(WARPS * 32)`): equal as code once the names are folded
FOLDED = {"add_launch_bounds", "pack_warps_per_block", "rows_per_thread", "tile_transpose",
          "tile_rows_loop_transpose", "rows_loop_tile_transpose",
          "split_k_loop", "privatize_atomic_histogram", "privatize_stride_atomic_histogram",
          "batched_tile_transpose",
          "shared_tiles_to_regblock_rows", "naive_matmul_to_shared_tiles",
          "direct_stencil_to_halo_tile", "direct_offset_stencil_to_halo_tile",
          "direct_unweighted_offset_stencil_to_halo_tile", "lane_keys_to_warp_key_tile",
          "thread_per_output_to_value_tiles", "clipped_window_to_zero_fill_halo_tile",
          "checked_window_to_zero_fill_halo_tile", "zero_padded_window_to_halo_tile",
          "clamped_window_to_halo_tile", "zero_fill_halo_tile_rows_per_thread",
          "clamped_unweighted_window_to_halo_tile", "stencil_rows_per_thread",
          "row_pixels_per_thread", "row_pixels_rows_per_thread", "one_element_to_thread_loads",
          "one_element_to_thread_loads_tree", "block_sum_to_warp_segments",
          "block_tree_to_warp_segments", "block_extents_to_constant_bounds"}


@pytest.fixture(scope="module")
def walks(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    dirs = []
    for fam in FAMILIES:
        d = tmp_path_factory.mktemp(fam)
        write_lineage(walk(ROOT / "bench/lineages" / fam / "expert.cu", ROOT / "passes",
                           stages=("compile",)), d)
        dirs.append(d)
    return dirs


@pytest.fixture(scope="module")
def learned(walks: list[Path]) -> list[Learned]:
    return learn(walks, ROOT / "passes")


def _folded(prev: bytes, item: Learned, step: dict) -> bytes:  # type: ignore[type-arg]
    """Version N - 1 with each erased value written as its number, where it was bound (a
    metavariable used several times in the anchor: each of its occurrences in the site)."""
    anchor = item.inverse.pass_rule.anchor
    erased = item.inverse.pass_rule.metavars - item.inverse.anchor_metavars
    text = prev.decode()
    for site in sorted(step["sites"], key=lambda s: -s["start"]):
        a, e = site["start"], site["end"]
        seg = text[a:e]
        for m, b in sorted(site["bindings"].items(), key=lambda kv: -kv[1]["start"]):
            if m not in erased or "value" not in b:
                continue
            hole = item.rule.holes.get(m.lower())
            if hole is not None and hole.type == "ident":
                continue  # a name the skill writes back as a name (a local the spec folds)
            if len(re.findall(rf"\$+{m}\b", anchor)) == 1:
                s0, e0 = b["start"] - a, b["end"] - a
                seg = seg[:s0] + str(b["value"]) + seg[e0:]
            else:
                seg = re.sub(rf"(?<!\w){re.escape(b['text'])}(?!\w)", str(b["value"]), seg)
        text = text[:a] + seg + text[e:]
    return text.encode()


def _all_folded(text: bytes, item: Learned, step: dict) -> bytes:  # type: ignore[type-arg]
    """The text with every erased name that has a value written as its number, wherever it
    stands: where a kept metavariable bound the same name (the tile's extent `TILE_DIM` and
    the loop's bound `TILE_DIM`), the places the skill writes the number are not told apart
    by the text, so both versions are compared with the name folded everywhere."""
    erased = item.inverse.pass_rule.metavars - item.inverse.anchor_metavars
    out = text.decode()
    for site in step["sites"]:
        for m, b in site["bindings"].items():
            hole = item.rule.holes.get(m.lower())
            if m in erased and "value" in b and (hole is None or hole.type != "ident"):
                out = re.sub(rf"(?<!\w){re.escape(b['text'])}(?!\w)", str(b["value"]), out)
    return out.encode()


def test_round_trip_for_every_step_of_the_lineages(learned: list[Learned]) -> None:
    """Pass on N - 1 gives N; the learned skill on N with the observed hole values gives
    N - 1 back: byte for byte, or (FOLDED skills) with the erased names as their values."""
    exact, folded, steps = [], [], 0
    for item in learned:
        for o in item.observations:
            steps += 1
            prev_path, path = o.directory / o.before["file"], o.directory / o.version["file"]
            prev, new = prev_path.read_bytes(), path.read_bytes()
            # the pass, at the recorded site(s), gives version N
            unit = parse_bytes(prev, str(prev_path))
            spec = spec_of(unit)
            rule = item.inverse.pass_rule
            starts = {s["start"] for s in o.step["sites"]}
            sites = [s for s in find_sites(unit, [rule], o.step["holes"], spec)
                     if s.match.start in starts]
            assert len(sites) == len(starts)
            if len(sites) == 1 and not any(e.kind == "launch" for e in rule.edits):
                forward = apply_site(unit, sites[0], o.step["holes"], spec).source
            else:
                forward = apply_rules(unit, [rule], o.step["holes"], spec).source
            assert forward == new, f"{rule.name} at {o.step['index']}"
            # the skill gives version N - 1 back
            back = apply_at_step(item.inverse, new, str(path), o.step)
            label = f"{o.lineage['family']}:{o.step['index']}:{item.rule.name}"
            if back == prev:
                exact.append(label)
            else:
                assert item.rule.name in FOLDED, label
                assert back == _folded(prev, item, o.step) or \
                    _all_folded(back, item, o.step) == _all_folded(prev, item, o.step), label
                folded.append(label)
    assert steps == len(exact) + len(folded) >= 70
    assert len(exact) >= 60
    assert {f.split(":")[2] for f in folded} <= FOLDED


def test_mechanical_inverse_swaps_anchor_and_rewrite() -> None:
    rules = {r.name: r for r in load_rule_dir(ROOT / "passes")}
    exp = mechanical_inverse(rules["fast_exp_to_precise"]).rule
    assert exp.name == "precise_exp_to_fast" and exp.kind == "skill"
    assert exp.anchor == "expf($X)" and exp.edits[0].template == "__expf($X)"
    # a qualifier: the anchor stays, the edit and the qualifier test flip
    r = mechanical_inverse(rules["remove_const_param"]).rule
    assert [(e.kind, e.value) for e in r.edits] == [("add_qualifier", "const")]
    guard = str(r.guard)
    assert "GuardNot(operand=GuardCall(name='is_const'" in guard
    assert "const_safe" in guard  # the inverse block's forward-only condition
    # an attribute: removed from the anchor, its value a hole
    lb = mechanical_inverse(rules["remove_launch_bounds"]).rule
    assert "__launch_bounds__" not in lb.anchor
    assert (lb.edits[0].kind, lb.edits[0].value) == ("add_attribute",
                                                     "__launch_bounds__(?threads)")
    assert lb.holes["threads"].type == "int"
    # a launch edit flips its operator; the pass's hole stays
    gs = mechanical_inverse(rules["grid_stride_to_one_per_thread"]).rule
    assert [(e.kind, e.op, e.factor) for e in gs.edits if e.kind == "launch"] == \
        [("launch", "/", "?factor")]
    # insert_body_start becomes remove_statement; erased metavariables become holes
    sh = mechanical_inverse(rules["shuffle_block_reduce_to_shared"]).rule
    assert [e.kind for e in sh.edits] == ["replace", "remove_statement"]
    assert sh.edits[1].template == "__shared__ float red[$B];"
    assert {"o", "mask", "ws"} <= set(sh.holes)
    # a metavariable tied to a pass hole by equals($W, ?warps) is that hole
    pw = mechanical_inverse(rules["warps_per_block_to_one"]).rule
    assert "?warps" in (pw.edits[0].template or "") and set(pw.holes) == {"warps"}


def test_learned_skills_merge_lineages_and_load(learned: list[Learned], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    by_name = {i.rule.name: i for i in learned}
    lb = by_name["add_launch_bounds"]
    # one observation per family whose expert declares launch bounds (7 before the row
    # families argmax_rows, attention_rows and cumsum_warp_rows; more lineages add more)
    assert len(lb.observations) == len(lb.rule.card.provenance) == len(lb.rule.card.effect)
    assert len(lb.observations) >= 10
    assert all(e.startswith("not measured yet") for e in lb.rule.card.effect)
    assert lb.rule.card.verdict == "unmeasured"
    h = lb.rule.holes["threads"]
    assert h.default == 256 and {128, 256} <= set(h.values or ())  # both observed values
    assert "block [128, 1, 1]" in lb.rule.card.conditions
    for name, text in skill_files(learned).items():
        (tmp_path / name).write_text(text)
        assert load_rules_text(text, name)  # loads
    assert main(["check", str(tmp_path)]) == 0
    assert f"{len(learned)} rules ok" in capsys.readouterr().out


def _timed(src: Path, dst: Path, times: dict[str, float], device: str = "NVIDIA H200") -> Path:
    shutil.copytree(src, dst)
    data = json.loads((dst / "lineage.json").read_text())
    data["device"], data["gating"] = device, "full"
    for v in data["versions"]:
        v["median_ms"] = times.get(v.get("pass") or "expert", 1.0)
        v["pct_of_sol"] = 50.0
    (dst / "lineage.json").write_text(json.dumps(data))
    return dst


def test_cards_come_from_measurement(walks: list[Path], tmp_path: Path) -> None:
    reduce_dir = next(d for d in walks if "reduce_sum" in d.name)
    # times per version (by the pass that made it): devectorizing the loop made it slower
    # (so vectorizing is faster), removing launch bounds made it faster (a "when not")
    times = {"expert": 1.0, "remove_launch_bounds": 0.9, "devectorize_float4_loop": 1.8,
             "grid_stride_to_one_per_thread": 1.81}
    d = _timed(reduce_dir, tmp_path / "r", times)
    got = {i.rule.name: i.rule for i in learn([d], ROOT / "passes")}
    vec = got["vectorize_float4_loop"].card
    assert vec.verdict == "faster"
    assert re.match(r"faster: 2\.00x on NVIDIA H200, reduce_sum \(n=67108864\), reduce_sum "
                    r"step 2 .*1800\.0 us -> 900\.0 us", vec.effect[0])
    lb = got["add_launch_bounds"].card
    assert lb.verdict == "slower" and lb.effect[0].startswith("slower (when not): 0.90x")
    gs = got["grid_stride_loop"].card
    assert gs.verdict == "neutral" and "?factor=16" in gs.effect[0]
    assert "reduce_sum/expert.cu (sha256 " in gs.provenance[0]


def test_pitfalls_name_what_the_gate_refused(tmp_path: Path) -> None:
    """A pass refused at one site (its result does not compile: `&` of an rvalue) and
    accepted at another: its skill's card names the refusal as a pitfall."""
    kernel = tmp_path / "k.cu"
    kernel.write_text(
        "/* klc-spec\nkernel: k\nsizes: {n: 1024}\nargs:\n  - {name: x, shape: [n], role: in}\n"
        "  - {name: y, shape: [n], role: out}\n  - {name: n, value: n}\n"
        "grid: [\"ceil_div(n, 256)\"]\nblock: [256]\n*/\n"
        "__global__ void k(const float* x, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) {\n        y[i] = __expf(-x[i]) + __expf(x[i]);\n    }\n}\n")
    passes = tmp_path / "passes"
    passes.mkdir()
    (passes / "a.rule").write_text(
        'rule lvalue_exp {\n  kind: simplification\n  anchor: ```__expf($X)```\n'
        '  rewrite replace: ```expf(*&$X)```\n}\n')
    shutil.copy(ROOT / "passes/fast_math.rule", passes / "b.rule")
    (passes / "ORDER").write_text("lvalue_exp\nfast_exp_to_precise\n")
    out = tmp_path / "w"
    write_lineage(walk(kernel, passes, stages=("compile",)), out)
    got = {i.rule.name: i.rule for i in learn([out], passes)}
    assert set(got) == {"undo_lvalue_exp", "precise_exp_to_fast"}
    (pitfall,) = got["undo_lvalue_exp"].card.pitfalls[:1]
    assert pitfall.startswith("k step 1: the simplification at 14:16 was refused by the gate: "
                              "compile:")
    assert got["precise_exp_to_fast"].card.pitfalls == (
        "none seen: the gate refused no candidate of this simplification in these walks",)


def test_learn_writes_the_library_atomically(walks: list[Path], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "skills"
    out.mkdir()
    (out / "hand.rule").write_text((ROOT / "skills/pragma_unroll.rule").read_text())
    golden = tmp_path / "golden"
    golden.mkdir()
    assert main(["learn", *map(str, walks), "--out", str(out), "--golden", str(golden),
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert {s["skill"] for s in summary} >= {"add_launch_bounds", "precise_exp_to_fast",
                                               "shuffle_block_reduce", "add_restrict"}
    assert (out / "hand.rule").exists()  # a hand-written file is left alone
    assert load_rules(out / "fast_math.rule")[0].name == "precise_exp_to_fast"
    assert (out / "fast_math.rule").read_text().startswith("// klc learn:")
    assert main(["test", str(golden), "--rules", str(out)]) == 0
    # learning again from fewer walks drops the files of families no longer learned
    assert main(["learn", str(walks[0]), "--out", str(out)]) == 0
    assert not (out / "smem_tile.rule").exists() and (out / "hand.rule").exists()


def test_learn_bad_input_writes_nothing(walks: list[Path], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "skills"
    out.mkdir()
    assert main(["learn", str(tmp_path / "nope"), "--out", str(out)]) == 2
    assert "no lineage.json here" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "lineage.json").write_text('{"klc_lineage": 1,\n "expert": }')
    assert main(["learn", str(walks[0]), str(bad), "--out", str(out)]) == 2
    assert "lineage.json:2:12: not JSON" in capsys.readouterr().err
    # a hand-written rule with a learned skill's name: refused before writing
    learned_text = (ROOT / "skills/fast_math.rule").read_text()
    (out / "mine.rule").write_text(learned_text.split("\n\n", 1)[1])  # without the mark
    softmax = walks[FAMILIES.index("softmax")]
    assert main(["learn", str(softmax), "--out", str(out)]) == 2
    assert "has the name of a learned skill" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["mine.rule"]


def test_committed_skills_are_the_learned_library(monkeypatch: pytest.MonkeyPatch) -> None:
    """skills/ holds what klc learn makes of the committed walks (plus the hand-written
    unroll_loop, which no lineage teaches)."""
    monkeypatch.chdir(ROOT)
    dirs = [Path("bench/lineages") / f / "walk" for f in sorted(FAMILIES)]  # as the shell globs
    from klc.rule import load_rules_text, rule_to_text

    def rules(text: str, path: Path) -> list[str]:
        return [rule_to_text(r) for r in load_rules_text(text, str(path))]

    for name, text in skill_files(learn(dirs, "passes")).items():
        # the committed file spells shared guard conjunctions through named guards
        # (``free_of``, docs/rules.md): the same rules once those are expanded
        path = ROOT / "skills" / name
        assert rules(path.read_text(), path) == rules(text, path), name
    with pytest.raises(KlcError):
        learn([], ROOT / "passes")
    # the order the walks are given in (a shell's glob sorts by its locale) changes nothing
    again = skill_files(learn(list(reversed(dirs)) + dirs[:1], "passes"))
    assert again == skill_files(learn(dirs, "passes"))


def test_values_erased_together_keep_their_relation(learned: list[Learned]) -> None:
    """rows_per_thread_to_one erased T, R and the launch factor together (T = 32, R = 8,
    factor 4 at every site): the learned skill carries ?t = ?factor * ?r as a guard, and
    no skill gets a relation its walks did not show (the value tiles' geometry was chosen so
    that only the block's shows: no hole is by chance the product of two others)."""
    from klc.rule import calls

    found = {item.rule.name: [tuple(str(a) for a in c.args) for c in calls(item.rule.guard)
                              if c.name == "is_product"]
             for item in learned if item.rule.guard is not None}
    assert found["rows_per_thread"] == [("?t", "?factor", "?r")]
    # the value tiles' thread grid is the block (256 = 16 x 16 at its one site)
    assert found["thread_per_output_to_value_tiles"] == [("?threads", "?gx", "?gy")]
    # (a relation the pass's inverse block states, as tile_rows_per_thread's, is the pass
    # author's, not learned)
    stated = {item.rule.name for item in learned
              if (inv := item.inverse.pass_rule.inverse) is not None and inv.guard is not None
              and any(c.name == "is_product" for c in calls(inv.guard))}
    assert {n for n, rel in found.items() if rel} - stated == {
        "rows_per_thread", "thread_per_output_to_value_tiles"}
    assert "tile_rows_per_thread" in stated


def test_tile_extents_tied_to_the_block_become_geometry_guards(learned: list[Learned]) -> None:
    """A hole that is a shared tile's extent indexed by threadIdx, equal to the block (or its
    square root) at every observed site, is geometry: the skill's guard ties it to the
    site's own block, not to the walk's number. A coarsening factor or a histogram's bins
    that happen to equal an extent are not tied."""
    from klc.guards.geometry import _tile_extent, learned_relation
    from klc.rule import calls

    rules = {item.rule.name: item.rule for item in learned}
    guard = [c for c in calls(rules["batched_tile_transpose"].guard)]
    assert ("block_dim_product", ("x", "?t", "?t")) in [
        (c.name, tuple(str(a) for a in c.args)) for c in guard]
    assert not any(c.name == "block_dim" and "256" in [str(a) for a in c.args] for c in guard)
    assert rules["batched_tile_transpose"].holes["t"].domain() == (4, 8, 16, 32)
    for name in ("elementwise_grid_stride", "privatize_atomic_histogram",
                 "shared_tiles_to_regblock_rows"):
        assert not any(c.name in ("block_dim_product", "block_size") for c in
                       calls(rules[name].guard)), name

    tile = "__shared__ float ?tile[?t][?t];\n?tile[threadIdx.y][threadIdx.x] = x[i];"
    bins = "__shared__ ?t ?s[?nb];\nfor (int j = threadIdx.x; j < ?nb; j += blockDim.x) ?s[j] = 0;"
    assert _tile_extent(tile, "t") and not _tile_extent(bins, "nb")
    def rel(rows: list[tuple[int, tuple[int, ...]]]) -> str | None:
        found = learned_relation("t", rows, tile)
        return None if found is None else found.name

    assert rel([(16, (16, 16, 1)), (32, (32, 32, 1))]) == "block_dim"
    assert rel([(16, (256, 1, 1))]) == "block_dim_product"
    assert rel([(256, (256, 1, 1)), (128, (64, 2, 1))]) == "block_size"
    assert rel([(16, (16, 16, 1)), (16, (32, 8, 1))]) is None  # not at every site
    assert rel([(1, (1, 1, 1))]) is None
    assert learned_relation("nb", [(256, (256, 1, 1))], bins) is None  # bins, not a tile


def test_a_card_names_where_a_third_party_expert_came_from(tmp_path: Path) -> None:
    from klc.reverse import Observation, _named

    walk_dir = tmp_path / "row_sums" / "walk"
    walk_dir.mkdir(parents=True)
    lineage = {"family": "row_sums", "expert": str(tmp_path / "elsewhere" / "expert.cu")}
    obs = Observation(lineage, walk_dir, {}, {})
    assert _named(obs) == "row_sums"  # no SOURCE record: the family alone
    (tmp_path / "row_sums" / "SOURCE").write_text(
        "somepkg==1.2.3 src/rows.cu\nsrc/common.h:10 helper#0 sha256 00\n"
        "src/rows.cu:40 row_sum_kernel#0 sha256 11\n")
    assert _named(obs) == "row_sums (somepkg 1.2.3, src/rows.cu, kernel row_sum_kernel)"
    (tmp_path / "row_sums" / "SOURCE").write_text("not a record\n")
    assert _named(obs) == "row_sums"
