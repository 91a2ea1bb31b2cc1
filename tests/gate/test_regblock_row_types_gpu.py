"""The GEMM ladder on the x-row SGEMM of tutorials (bench/spellings/sgemm_row_from_x.cu:
`const unsigned` indices, C = alpha * A B + beta * C, a 32 x 32 block):
swap_thread_roles_for_coalescing, naive_matmul_to_shared_tiles, then
shared_tiles_to_regblock_rows, whose rows are declared in the row's own type (the type hole
?rt the site fixes), so that the unsigned row compares and indexes unsigned as before. On a
GPU the gate verifies the register-blocked kernel, and the golden cases of the other row
types (`unsigned int`, `size_t`, `long`) and the sgemm rungs with unsigned block origins,
against their originals (``python3 -m pytest -m gpu
tests/gate/test_regblock_row_types_gpu.py``)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from klc.cli import main
from klc.cuda.parse import parse_bytes, read_source
from klc.pipeline import apply_rules, spec_of
from klc.rule import RuleSet

ROOT = Path(__file__).resolve().parents[2]
SPELLING = ROOT / "bench" / "spellings" / "sgemm_row_from_x.cu"
GOLDEN = ROOT / "tests" / "golden" / "shared_tiles_to_regblock_rows"
LADDER = ("swap_thread_roles_for_coalescing", "naive_matmul_to_shared_tiles",
          "shared_tiles_to_regblock_rows")
# the spelling's accumulator is `acc`, the learned default of the register array's name: the
# name a filler proposes (the first fresh variant), given here
HOLES = {"accs": "acc_1"}
ROW_TYPES = ["unsigned_int_row.cu", "sgemm_x_row_swapped_unsigned.cu",
             "sgemm_const_unsigned_row.cu", "sgemm_size_t_row.cu", "sgemm_long_row_int_col.cu"]


def _rule(name: str) -> list:
    return [r for r in RuleSet.load([str(ROOT / "skills")]).rules if r.name == name]


def _step(source: bytes, name: str, holes: dict[str, str] | None = None) -> bytes:
    unit = parse_bytes(source, str(SPELLING))
    out = apply_rules(unit, _rule(name), holes or {}, spec_of(unit), clang=False)
    assert out.changed, (name, [s.reason for s in out.refused])
    return out.source


@functools.cache
def ladder() -> tuple[bytes, ...]:
    """The spelling after each rung."""
    out = [read_source(SPELLING)]
    for name in LADDER:
        out.append(_step(out[-1], name, HOLES if name == LADDER[-1] else None))
    return tuple(out)


def test_the_ladder_reaches_register_blocking_in_the_rows_own_type() -> None:
    swapped, tiled, blocked = ladder()[1:]
    # the swap keeps the const it matched; the tiles leave the row's declaration alone
    assert b"const unsigned row = blockIdx.y * blockDim.y + threadIdx.y;" in swapped
    assert b"const unsigned row = blockIdx.y * blockDim.y + threadIdx.y;" in tiled
    text = blocked.decode()
    assert text.count("const unsigned r = row + i * gridDim.y * blockDim.y;") == 2
    assert text.count("const unsigned row = r;") == 2 and "const int row" not in text
    assert "R[row * N + col] = alpha * acc + beta * R[row * N + col];" in text
    assert 'block: [32, "ceil_div(32, 4)"]' in text


def test_an_int_row_type_given_for_the_unsigned_row_is_refused() -> None:
    tiled = ladder()[2]
    unit = parse_bytes(tiled, str(SPELLING))
    out = apply_rules(unit, _rule(LADDER[-1]), {**HOLES, "rt": "int"}, spec_of(unit),
                      clang=False)
    assert not out.changed
    assert "the element type of `row` is unsigned, not int" in out.refused[0].reason


def test_klc_list_and_apply_on_the_tiled_spelling(tmp_path: Path, capsys) -> None:
    """`klc list` shows the register blocking at the tiled spelling with ?rt fixed to the
    row's `unsigned` and the array's name the first fresh variant of its default (`acc` is
    the kernel's accumulator: `acc_1`); `klc apply` writes it so, and refuses `acc` given."""
    tiled = tmp_path / "tiled.cu"
    tiled.write_bytes(ladder()[2])
    assert main(["list", "--all", "--json", str(tiled)]) == 0
    sites = [s for s in json.loads(capsys.readouterr().out) if s["rule"] == LADDER[-1]]
    assert len(sites) == 1, sites
    assert sites[0]["applicable"], sites[0]["why_not"]
    assert sites[0]["site_holes"] == {"rt": "unsigned", "accs": "acc_1"}
    out = tmp_path / "blocked.cu"
    assert main(["apply", LADDER[-1], str(tiled), "-o", str(out)]) == 0
    assert out.read_bytes() == ladder()[3]
    capsys.readouterr()
    given = tmp_path / "given.cu"
    assert main(["apply", LADDER[-1], str(tiled), "--hole", "accs=acc", "-o", str(given)]) == 1
    assert "`acc` is already used in `gemm_scaled`" in capsys.readouterr().err
    assert not given.exists()


def test_the_register_blocked_spelling_compiles() -> None:
    from klc.gate import gate

    rec = gate(ladder()[3], "sgemm_row_from_x:regblock", stages=("compile",))
    assert rec.stages["compile"].status == "passed", rec.reason


@pytest.mark.gpu
def test_on_a_gpu_the_register_blocked_spelling_matches_the_original() -> None:
    from klc.gate import gate

    rec = gate(ladder()[3], "sgemm_row_from_x:regblock", reference=read_source(SPELLING),
               reference_path=str(SPELLING), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.gpu
@pytest.mark.parametrize("name", ROW_TYPES)
def test_on_a_gpu_each_row_type_matches_its_original(name: str) -> None:
    from klc.gate import gate

    expected = GOLDEN / name.replace(".cu", ".expected.cu")
    rec = gate(read_source(expected), f"{name}:candidate", reference=read_source(GOLDEN / name),
               reference_path=str(GOLDEN / name), stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason


# the sgemm lineage's rungs (2-D register blocking, shared tiles, float4 tile loads) keep the
# block origins' own types too: their golden cases declare `const unsigned row0` and
# `const size_t col0`
BLOCK_ORIGINS = ["register_block_cols", "register_block_rows", "cooperative_float4_tile_loads",
                 "smem_tiles"]


@pytest.mark.gpu
@pytest.mark.parametrize("rule", BLOCK_ORIGINS)
def test_on_a_gpu_each_rung_with_unsigned_block_origins_matches_its_original(rule: str) -> None:
    from klc.gate import gate

    case = ROOT / "tests" / "golden" / rule / "unsigned_block_origins.cu"
    rec = gate(read_source(case.with_name("unsigned_block_origins.expected.cu")),
               f"{rule}:candidate", reference=read_source(case), reference_path=str(case),
               stages=("compile", "verify"))
    assert rec.verdict == "passed", rec.reason
