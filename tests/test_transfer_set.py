"""The blind transfer set (bench/transfer/): frozen first versions, checked without a GPU.

- the set is complete: at least 40 kernel files, every one in MANIFEST.sha256 and
  BODIES.sha256 and nothing else there;
- every file's sha256 matches MANIFEST.sha256 (updated only with a spec fix, noted in the
  README), and every kernel body (the file without its klc-spec block) matches
  BODIES.sha256, which never changes: a kernel body is frozen;
- every file parses with no syntax problem, holds the one kernel its spec names, and its spec
  loads and fits the signature;
- every file compiles with NVRTC through the gate's compile stage (sm_90, no GPU needed);
- every file carries one `// family:` tag and one `// style:` line, the families the set names
  are all present (row reductions both thread per row and block per row), and the README
  table lists every file with the same family.

The GPU side (verify and profile, reference = itself) is bench/transfer_baseline.py.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from klc.cuda.parse import parse_file, read_source
from klc.gate import gate
from klc.spec import check_spec, load_spec

ROOT = Path(__file__).parent.parent
TRANSFER = ROOT / "bench" / "transfer"
FILES = sorted(p.name for p in TRANSFER.glob("*.cu"))
FAMILIES = (
    "elementwise", "row-reduction", "attention", "gather", "column-reduction",
    "full-reduction", "transpose", "gemm", "stencil", "scan", "histogram",
)
SPEC_BLOCK = re.compile(rb"^/\* klc-spec\n.*?^\*/\n", re.M | re.S)


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KLC_CACHE_DIR", str(tmp_path_factory.mktemp("klc-cache")))
        yield


def sums(name: str) -> dict[str, str]:
    out = {}
    for line in (TRANSFER / name).read_text().splitlines():
        digest, file = line.split(maxsplit=1)
        assert re.fullmatch(r"[0-9a-f]{64}", digest), line
        assert file not in out, f"{name}: {file} listed twice"
        out[file] = digest
    return out


def body_of(source: bytes) -> bytes:
    body, n = SPEC_BLOCK.subn(b"", source, count=1)
    assert n == 1, "no klc-spec block"
    return body


def tag(source: str, key: str) -> list[str]:
    return re.findall(rf"^// {key}: (.+)$", source, re.M)


def test_the_set_is_complete() -> None:
    assert len(FILES) >= 40
    assert sorted(sums("MANIFEST.sha256")) == FILES
    assert sorted(sums("BODIES.sha256")) == FILES


@pytest.mark.parametrize("name", FILES)
def test_file_matches_the_manifest(name: str) -> None:
    digest = hashlib.sha256((TRANSFER / name).read_bytes()).hexdigest()
    assert digest == sums("MANIFEST.sha256")[name], (
        f"{name} changed: only its klc-spec may change, noted in bench/transfer/README.md, "
        "with its MANIFEST.sha256 line updated")


@pytest.mark.parametrize("name", FILES)
def test_kernel_body_is_frozen(name: str) -> None:
    body = body_of((TRANSFER / name).read_bytes())
    assert hashlib.sha256(body).hexdigest() == sums("BODIES.sha256")[name], (
        f"{name}: the kernel body (everything outside the klc-spec block) was edited; "
        "bodies are frozen")


@pytest.mark.parametrize("name", FILES)
def test_parses_with_one_kernel_and_a_fitting_spec(name: str) -> None:
    path = TRANSFER / name
    unit = parse_file(path)
    assert unit.problems == []
    assert len(unit.kernels) == 1
    spec = load_spec(read_source(path), str(path))
    assert spec is not None, f"{name}: no klc-spec block"
    bound = check_spec(spec, unit)
    assert bound.function_name == unit.kernels[0].name
    assert [a.spec.name for a in bound.args] == [p.name for p in unit.kernels[0].params]


@pytest.mark.parametrize("name", FILES)
def test_compiles_with_nvrtc(name: str) -> None:
    path = TRANSFER / name
    rec = gate(read_source(path), str(path), arch="sm_90", stages=("compile",))
    assert rec.verdict == "passed", rec.reason


@pytest.mark.parametrize("name", FILES)
def test_tagged_with_one_family_and_a_style(name: str) -> None:
    text = (TRANSFER / name).read_text()
    families = tag(text, "family")
    assert len(families) == 1 and families[0] in FAMILIES, families
    assert len(tag(text, "style")) == 1
    assert "__restrict__" not in text, "first versions carry no __restrict__"


def test_every_family_is_present() -> None:
    by_family: dict[str, list[str]] = {}
    styles: dict[str, str] = {}
    for name in FILES:
        text = (TRANSFER / name).read_text()
        by_family.setdefault(tag(text, "family")[0], []).append(name)
        styles[name] = tag(text, "style")[0]
    assert set(by_family) == set(FAMILIES)
    assert len(by_family["elementwise"]) >= 5
    rows = by_family["row-reduction"]
    assert any("thread per row" in styles[n] for n in rows)
    assert any("block per row" in styles[n] for n in rows)


def test_the_readme_table_lists_every_file() -> None:
    readme = (TRANSFER / "README.md").read_text()
    listed = dict(re.findall(r"^\| `([\w.]+\.cu)` \| `[^`]+` \| ([\w-]+) \|", readme, re.M))
    assert sorted(listed) == FILES
    for name, family in listed.items():
        assert tag((TRANSFER / name).read_text(), "family") == [family], name


def test_styles_of_real_code_are_spread() -> None:
    texts = [(TRANSFER / n).read_text() for n in FILES]

    def count(pattern: str) -> int:
        return sum(bool(re.search(pattern, t, re.M)) for t in texts)

    assert count(r"\b(const )?(float|T|__half) \*\w") >= 5  # T *x spacing
    assert count(r"\b(const )?(float|T)\* \w") >= 5  # T* x spacing
    assert count(r"if \(\w+ >= \w+\) return;") >= 5  # early-return guards
    assert count(r"\bdouble \w+ = 0\.0") >= 3  # double accumulators
    assert count(r"^#define \w+") >= 5
    assert count(r"^template <") >= 3
    assert count(r"-INFINITY") >= 3
    assert count(r"\bM_PI\b") >= 1
    assert count(r"if \(\w+(\[\w+\])? > \w+\) \{?\s*\w+ = ") >= 3  # if-style max
    assert count(r"\b(size_t|long) n\b") >= 2  # 64-bit sizes
    assert count(r"^int main\(") >= 3  # host code with launches
