"""`klc spec init` and `klc spec check` without a GPU: drafts for the 22 held-out kernels with
their specs removed load, fit the signature and agree with the hand-written specs on every
output's size; the training-style file's host launch gives the sizes, values and launch;
guessed fields are marked, missing ones refused; bad input exits 2 and writes nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from klc.cli import main
from klc.cuda.parse import parse_bytes
from klc.spec import check_spec, element_count, find_spec_block, load_spec
from klc.spec_draft import draft_spec

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = sorted((ROOT / "bench" / "heldout").glob("*.cu"))
TRAIN = ROOT / "bench" / "spec_init" / "train_step.cu"


def strip(src: bytes) -> bytes:
    span = find_spec_block(src)
    assert span is not None
    return src[:span[0]] + src[span[1]:].lstrip(b"\n")


def drafted(src: bytes, path: str, kernel: str | None = None):  # type: ignore[no-untyped-def]
    d = draft_spec(parse_bytes(src, path), kernel)
    full = d.text.encode() + src
    spec = load_spec(full, path)
    assert spec is not None
    return d, spec, check_spec(spec, parse_bytes(full, path))


@pytest.mark.parametrize("path", HELDOUT, ids=lambda p: p.stem)
def test_heldout_draft_fits_and_agrees_with_the_hand_spec(path: Path) -> None:
    src = path.read_bytes()
    hand = load_spec(src, str(path))
    assert hand is not None
    d, spec, _ = drafted(strip(src), str(path))
    assert not d.todo, d.todo
    assert d.guessed and "# guessed:" in d.text and "review it" in d.text
    assert [a.name for a in spec.args] == [a.name for a in hand.args]
    for mine, theirs in zip(spec.args, hand.args, strict=True):
        assert (mine.role, mine.shape is None) == (theirs.role, theirs.shape is None), mine.name
    # every output's size, at the hand spec's sizes (where the draft has no sizes of its own)
    if set(spec.sizes) <= set(hand.sizes):
        env = dict(hand.sizes)
        for vs in hand.verify_sizes:
            for mine, theirs in zip(spec.args, hand.args, strict=True):
                if theirs.role in ("out", "inout") and theirs.shape:
                    e = dict(vs)
                    assert element_count(mine.shape, e) == element_count(theirs.shape, e), \
                        (mine.name, vs)
        for mine, theirs in zip(spec.args, hand.args, strict=True):
            if theirs.shape and theirs.role != "in":
                assert element_count(mine.shape, env) == element_count(theirs.shape, env)
    assert max(element_count(a.shape, spec.sizes) for a in spec.args if a.shape) <= 1 << 24


def test_specific_drafts() -> None:
    def get(name: str) -> tuple[str, dict[str, str]]:
        d, spec, _ = drafted(strip((ROOT / "bench" / "heldout" / name).read_bytes()), name)
        shapes = {a.name: list(a.shape) for a in spec.args if a.shape}
        return d.text, {"grid": list(spec.grid), "block": list(spec.block), **shapes,
                        "sizes": spec.sizes}  # type: ignore[dict-item]

    text, conv = get("conv1d.cu")
    assert conv["y"] == ["n - k + 1"] and conv["sizes"] == {"n": 1 << 24, "k": 64}
    assert "bounds a per-thread loop" in text
    _, rms = get("rms_norm.cu")
    assert rms["grid"] == ["rows"] and rms["block"] == ["256"]  # a block per row, 256 shared
    _, scan = get("prefix_scan.cu")
    assert scan["block"] == ["1024"] and scan["grid"] == ["ceil_div(n, 1024)"]
    _, st = get("stencil_2d.cu")
    assert st["block"] == ["32", "8"]
    assert st["grid"] == ["ceil_div(cols, 32)", "ceil_div(rows, 8)"]
    text, emb = get("embedding_gather.cu")
    assert sorted(emb["table"]) == ["dim", "table_rows"]
    assert 'init: "randint(0, table_rows)"' in text
    text, ce = get("cross_entropy.cu")  # labels index a row where the loop's c does
    assert ce["logits"] == ["rows", "classes"] and 'init: "randint(0, classes)"' in text
    text, hist = get("histogram.cu")
    assert hist["bins"] == ["256"] and 'init: "randint(0, 256)"' in text
    text, _ = get("adam_update.cu")
    assert "{name: step, value: 3}  # guessed: not a size" in text


def test_training_style_host_launch() -> None:
    src = TRAIN.read_bytes()
    d, spec, _ = drafted(src, str(TRAIN), "layernorm_forward_kernel")
    assert d.host_launch and spec.sizes == {"B": 8, "T": 1024, "C": 768}
    args = {a.name: a for a in spec.args}
    assert list(args["out"].shape) == ["B", "T", "C"] and args["out"].role == "out"
    assert list(args["mean"].shape) == ["B", "T"]
    assert args["N"].value == "B * T" and args["C"].value == "C"
    assert list(spec.block) == ["128"] and "ceil_div" in spec.grid[0]
    d, spec, _ = drafted(src, str(TRAIN), "softmax_scale_kernel")
    args = {a.name: a for a in spec.args}
    assert args["att"].role == "inout" and args["BH"].value == "B * NH"
    # a float the host computes (1.0f / sqrtf((float)HS), HS = C / NH): its value, and how
    assert args["scale"].value == "0.125" and "# from the launch: 1.0 / sqrt(" in d.text
    assert "C" not in spec.sizes  # only the float used it
    d, spec, _ = drafted(src, str(TRAIN), "residual_forward_kernel")
    assert list(spec.block) == ["256"]


def kernel_file(tmp_path: Path, text: str, name: str = "k.cu") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


RELU = """__global__ void relu(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
"""


def test_cli_init_prints_writes_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    k = kernel_file(tmp_path, RELU)
    assert main(["spec", "init", str(k)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("/* klc-spec\nkernel: relu\n") and "5 guessed field(s)" in err
    assert k.read_text() == RELU  # printing writes nothing
    dst = tmp_path / "out.cu"
    assert main(["spec", "init", str(k), "-o", str(dst)]) == 0
    assert dst.read_text() == out + RELU
    assert main(["spec", "init", str(k), "--in-place"]) == 0
    assert k.read_text() == out + RELU
    capsys.readouterr()
    assert main(["spec", "check", str(k)]) == 0
    assert re.search(r"k\.cu: ok: relu, 3 arguments, sizes n=16777216; \d+ line\(s\) still "
                     r"marked as guessed", capsys.readouterr().out)
    assert main(["spec", "init", str(k)]) == 2  # it has a block now
    assert "already has a klc-spec block" in capsys.readouterr().err


def test_cli_refuses_to_guess_silently(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    text = "__global__ void fill(float* y) {\n    y[threadIdx.x] = 1.0f;\n}\n"
    k = kernel_file(tmp_path, text)
    assert main(["spec", "init", str(k), "--in-place"]) == 1
    out, err = capsys.readouterr()
    assert "grid: [TODO]" in out and "# TODO:" in out
    assert "no guarded thread index" in err and "nothing written" in err
    assert k.read_text() == text


@pytest.mark.parametrize(("text", "args", "needle"), [
    (RELU + RELU.replace("relu", "relu2"), [], "2 kernels (relu, relu2): name one with "
                                                "--kernel"),
    (RELU, ["--kernel", "nope"], "no kernel 'nope' (kernels: relu)"),
    ("int main() { return 0; }\n", [], "no __global__ kernel in the file"),
    ("__global__ void k(float* y, int n) {\n  if (n < 1) y[0 = 1;\n}\n", [], "k.cu:2:"),
])
def test_cli_bad_input_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                              args: list[str], needle: str) -> None:
    k = kernel_file(tmp_path, text)
    assert main(["spec", "init", str(k), "--in-place", *args]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err
    assert k.read_text() == text


def test_cli_check_bad_specs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    k = kernel_file(tmp_path, RELU)
    assert main(["spec", "check", str(k)]) == 2
    assert "no klc-spec block (klc spec init drafts one)" in capsys.readouterr().err
    swapped = ("/* klc-spec\nkernel: relu\nsizes: {n: 1024}\nargs:\n"
               "  - {name: y, shape: [n], role: out}\n  - {name: x, shape: [n], role: in}\n"
               "  - {name: n, value: n}\ngrid: [4]\nblock: [256]\n*/\n" + RELU)
    k.write_text(swapped)
    assert main(["spec", "check", str(k)]) == 2
    err = capsys.readouterr().err
    assert re.search(r"k\.cu:5:\d+: argument 'y' is out of order", err), err
    assert main(["spec", "check", str(tmp_path / "none.cu")]) == 2
    assert "no such file" in capsys.readouterr().err


HOST_DIM3 = """__global__ void transpose(const float* in, float* out, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}
int main() {
    int rows = 4096, cols = 2048;
    float *in, *out;
    dim3 block(32, 8);
    dim3 grid((cols + 31) / 32, (rows + 7) / 8);
    transpose<<<grid, block>>>(in, out, rows, cols);
    return 0;
}
"""


def test_host_dim3_launch_and_a_launch_it_cannot_use() -> None:
    d, spec, _ = drafted(HOST_DIM3.encode(), "t.cu")
    assert d.host_launch and spec.sizes == {"rows": 4096, "cols": 2048}
    assert list(spec.grid) == ["(cols + 31) // 32", "(rows + 7) // 8"]
    assert list(spec.block) == ["32", "8"]
    assert [list(a.shape or ()) for a in spec.args[:2]] == [["rows", "cols"]] * 2
    # a size read from the command line: the launch is still used, the size's value is
    # chosen, and the draft says why
    argv = HOST_DIM3.replace("int main() {\n    int rows = 4096, cols = 2048;",
                             "int main(int argc, char** argv) {\n"
                             "    int rows = atoi(argv[1]), cols = 2048;")
    d, spec, _ = drafted(argv.encode(), "t.cu")
    assert d.host_launch and spec.sizes == {"cols": 2048, "rows": 8192}
    assert "# guessed: sizes.rows: 8192 (rows is set from atoi(argv[1]), which calls atoi; " \
        "chosen so that the largest buffer is about 2^24 elements)" in d.text
    assert list(spec.grid) == ["(cols + 31) // 32", "(rows + 7) // 8"]
    # a launch whose block the file does not give: not used, and the draft says why
    dyn = argv.replace("dim3 block(32, 8);", "dim3 block(atoi(argv[2]), 8);")
    d, spec, _ = drafted(dyn.encode(), "t.cu")
    assert not d.host_launch and list(spec.block) == ["32", "8"]
    assert "the launch at t.cu:11:5 is not used: klc cannot read block (block is set " \
        "from atoi(argv[2]), which calls atoi)" not in d.text  # (block is a dim3: its axis)
    assert "the launch at t.cu:11:5 is not used: klc cannot read " in d.text


DYNAMIC = """__global__ void dyn(const float* x, float* y, int n) {
    extern __shared__ float buf[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { buf[threadIdx.x] = x[i]; y[i] = buf[threadIdx.x]; }
}
"""


def test_dynamic_shared_memory_from_the_launch_or_todo() -> None:
    d = draft_spec(parse_bytes(DYNAMIC.encode(), "d.cu"))
    assert d.todo and "uses dynamic shared memory (extern __shared__ buf)" in d.todo[0]
    host = DYNAMIC + """int main() {
    int n = 1 << 20;
    const int bs = 128;
    float *x, *y;
    dyn<<<(n + bs - 1) / bs, bs, bs * sizeof(float)>>>(x, y, n);
}
"""
    d, spec, _ = drafted(host.encode(), "d.cu")
    assert not d.todo and spec.shared == "128 * 4" and list(spec.block) == ["128"]
    assert spec.sizes == {"n": 1 << 20}
