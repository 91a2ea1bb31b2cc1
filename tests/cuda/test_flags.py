"""Include paths and macros for every command that parses or compiles: `-I`, `-D`,
`--include-from compile_commands.json` (the entry of the file at hand), carried to workers in
the environment, given to libclang (types, constants) and to the gate's compile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from klc.cli import main
from klc.cuda import flags
from klc.cuda.parse import parse_bytes
from klc.errors import KlcError


@pytest.fixture(autouse=True)
def _no_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(flags.ENV, raising=False)


def test_flags_as_compiler_and_clang_options(tmp_path: Path) -> None:
    f = flags.from_args([str(tmp_path)], ["USE_BF16", "TILE=32"], None)
    assert f.include == (str(tmp_path.resolve()),)
    assert f.clang_args() == ["-I", str(tmp_path.resolve()), "-D", "USE_BF16", "-D", "TILE=32"]
    assert f.compiler_options() == (f"-I{tmp_path.resolve()}", "-DUSE_BF16", "-DTILE=32")
    assert f.macro_values() == {"USE_BF16": "1", "TILE": "32"}
    flags.set_flags(f)
    assert flags.current() == f  # through the environment, as a worker process reads it
    flags.set_flags(flags.BuildFlags())
    assert flags.current() == flags.BuildFlags()


def test_compile_commands_entry_of_the_file(tmp_path: Path) -> None:
    (tmp_path / "inc").mkdir()
    (tmp_path / "build").mkdir()
    k = tmp_path / "k.cu"
    k.write_text("__global__ void k() {}\n")
    cc = tmp_path / "build" / "compile_commands.json"
    cc.write_text(json.dumps([
        {"directory": str(tmp_path / "build"), "file": "../k.cu",
         "command": "nvcc -I../inc -isystem /opt/x -DUSE_BF16 -D TILE=16 -UNDEBUG -c ../k.cu"},
        {"directory": str(tmp_path), "file": "other.cu",
         "arguments": ["clang++", "-I", "inc", "-DOTHER", "other.cu"]},
    ]))
    flags.set_flags(flags.from_args(None, ["X"], str(cc)))
    got = flags.flags_for(str(k))
    assert got.include == (str((tmp_path / "inc").resolve()), "/opt/x")
    assert got.defines == ("X", "USE_BF16", "TILE=16", "-NDEBUG")
    assert got.compiler_options()[-1] == "-UNDEBUG"
    none = flags.flags_for(str(tmp_path / "nowhere.cu"))
    assert none.defines == ("X",) and "no entry" in none.notes[0]


@pytest.mark.parametrize(("args", "needle"), [
    (["-I", "/no/such/folder"], "-I /no/such/folder: no such folder"),
    (["-D", "2FAST"], "-D 2FAST: not a macro name (write -D NAME or -D NAME=VALUE)"),
    (["--include-from", "/no/such.json"], "--include-from /no/such.json: cannot read it"),
])
def test_bad_flags_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        args: list[str], needle: str) -> None:
    k = tmp_path / "k.cu"
    k.write_text("__global__ void k(float* y) { y[threadIdx.x] = 1.0f; }\n")
    for cmd in (["parse"], ["list"], ["gate"], ["spec", "check"]):
        assert main([*cmd, *args, str(k)]) == 2
        err = capsys.readouterr().err
        assert needle in err and "Traceback" not in err and err.count("\n") == 1


def test_bad_compile_commands(tmp_path: Path) -> None:
    cc = tmp_path / "compile_commands.json"
    cc.write_text('{"file": "k.cu"}')
    with pytest.raises(KlcError, match=r"not a compile_commands\.json"):
        flags.from_args(None, None, str(cc))
    cc.write_text('[{"directory": "/", "file": "k.cu"}]')
    with pytest.raises(KlcError, match="entry 0 has neither 'arguments' nor 'command'"):
        flags.from_args(None, None, str(cc))


def test_libclang_sees_the_switches_and_the_headers(tmp_path: Path) -> None:
    """Facts (constants, types) are the compiler's with the command's -I/-D."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "tile.h").write_text("#ifdef BIG\n#define TILE 64\n#else\n"
                                              "#define TILE 16\n#endif\n")
    src = b'#include "tile.h"\nconstexpr int kTile = TILE;\n__global__ void k() {}\n'
    k = tmp_path / "k.cu"
    k.write_bytes(src)

    def tile() -> object:
        unit = parse_bytes(src, str(k))
        start = src.index(b"TILE;")
        return unit.facts.constant(start, start + 4)

    assert tile() is None  # the header is not found without -I
    flags.set_flags(flags.BuildFlags((str(tmp_path / "inc"),)))
    assert tile() == 16
    flags.set_flags(flags.BuildFlags((str(tmp_path / "inc"),), ("BIG",)))
    assert tile() == 64


def test_gate_compiles_with_the_headers_host_code_blanked(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    (tmp_path / "inc" / "sub").mkdir(parents=True)
    (tmp_path / "inc" / "common.h").write_text(
        '#pragma once\n#include <stdio.h>\n#include <sys/time.h>\n#include "sub/scale.h"\n'
        "double now() { struct timeval t; gettimeofday(&t, 0); return t.tv_sec; }\n"
        "__device__ inline float twice(float x) { return SCALE * x; }\n")
    (tmp_path / "inc" / "sub" / "scale.h").write_text(
        "#pragma once\n#include <stdlib.h>\nvoid die() { exit(1); }\n#define SCALE 2.0f\n")
    k = tmp_path / "k.cu"
    k.write_text('#include "common.h"\n__global__ void k(float* y) '
                 "{ y[threadIdx.x] = twice(y[threadIdx.x]); }\n")
    assert main(["gate", str(k), "--stages", "compile"]) == 1  # common.h is not found
    assert 'cannot open source file "common.h"' in capsys.readouterr().out
    assert main(["gate", "-I", str(tmp_path / "inc"), str(k), "--stages", "compile"]) == 0
    out = capsys.readouterr().out
    assert "compiled" in out
    # the originals are untouched
    assert "gettimeofday" in (tmp_path / "inc" / "common.h").read_text()
    # a header beside the file (which NVRTC would look for first): the same
    beside = tmp_path / "beside"
    beside.mkdir()
    (beside / "timer.h").write_text((tmp_path / "inc" / "common.h").read_text()
                                    .replace('#include "sub/scale.h"\n', "#define SCALE 3.0f\n"))
    (beside / "k.cu").write_text(k.read_text().replace("common.h", "timer.h"))
    assert main(["gate", str(beside / "k.cu"), "--stages", "compile"]) == 0, \
        capsys.readouterr().out


def test_each_command_has_its_own_flags(tmp_path: Path) -> None:
    k = tmp_path / "k.cu"
    k.write_text("__global__ void k(float* y) { y[threadIdx.x] = 1.0f; }\n")
    assert main(["parse", "-I", str(tmp_path), "-D", "A=1", str(k)]) == 0
    assert flags.current() == flags.BuildFlags((str(tmp_path.resolve()),), ("A=1",))
    assert main(["parse", str(k)]) == 0  # a later command in the same process: none
    assert flags.current() == flags.BuildFlags()
