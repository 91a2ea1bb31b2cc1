"""Reports people read: ``klc optimize --report F.md|F.html`` and ``klc batch --report
F.md|F.html``: the plot (time and % of SOL per accepted step, per file for a batch) where
matplotlib is installed, and an HTML page with the diff of every accepted step, rendered by
a real browser (headless Chromium, Debian's package, installed by .ci/run) and checked.

The optimizations are real runs of the optimize loop on bench/examples/sigmoid.cu against
the scripted gate of tests/optimize/test_optimize.py (the loop's own test double: a kernel's time
follows the features its source has), so the steps, diffs and numbers are the loop's."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from test_optimize import FakeGate, run

from klc.cli import main
from klc.htmlreport import write_batch_report, write_optimize_report

ROOT = Path(__file__).resolve().parents[2]
SIGMOID = ROOT / "bench" / "examples" / "sigmoid.cu"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))


def optimized() -> Any:
    gate = FakeGate({"__expf": 1.3, "__launch_bounds__(512)": 1.05})
    result = run(gate)
    assert result.changed and len(result.steps) >= 2
    return result


def chromium(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Headless Chromium, offline: a fresh profile, no background networking."""
    assert CHROMIUM is not None
    profile = tmp_path / "chromium-profile"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--disable-default-apps", "--disable-extensions",
           "--allow-file-access-from-files", f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180,
                          env=dict(os.environ, HOME=str(tmp_path)))


class Page(HTMLParser):
    """The parts of a dumped DOM the tests check: elements by id, classes of spans inside
    diffs (with their text), images."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[str, str] = {}
        self.steps: list[str] = []
        self.spans: list[tuple[str, str]] = []
        self.images: list[dict[str, str]] = []
        self._stack: list[tuple[str, dict[str, str]]] = []
        self._text: dict[int, list[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "img":
            self.images.append(a)
            return
        self._stack.append((tag, a))
        self._text[len(self._stack)] = []
        if tag == "details" and "step" in a.get("class", ""):
            self.steps.append(a.get("id", ""))

    def handle_endtag(self, tag: str) -> None:
        if not self._stack or tag == "img":
            return
        depth = len(self._stack)
        t, a = self._stack.pop()
        text = "".join(self._text.pop(depth, []))
        if depth > 1:
            self._text.setdefault(depth - 1, []).append(text)
        if a.get("id"):
            self.ids[a["id"]] = text
        if t == "span":
            self.spans.append((a.get("class", ""), text))

    def handle_data(self, data: str) -> None:
        if self._stack:
            self._text.setdefault(len(self._stack), []).append(data)


def dump_dom(path: Path, tmp_path: Path) -> Page:
    got = chromium(["--dump-dom", path.as_uri()], tmp_path)
    assert got.returncode == 0, got.stderr[-2000:]
    assert got.stdout.lstrip().lower().startswith("<!doctype html>") or "<html" in got.stdout
    page = Page()
    page.feed(got.stdout)
    return page


def test_optimize_markdown_report_has_the_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    result = optimized()
    report = tmp_path / "r.md"
    written = write_optimize_report(str(report), result)
    assert written == [str(report), str(tmp_path / "r.png")]
    text = report.read_text()
    assert "![time and % of SOL](r.png)" in text and "## Steps" in text
    png = (tmp_path / "r.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 5000


def test_optimize_report_without_matplotlib_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    result = optimized()
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    report = tmp_path / "r.md"
    assert write_optimize_report(str(report), result) == [str(report)]
    assert "No plot: matplotlib is not installed (pip install 'klc-cuda[plot]')." in \
        report.read_text()
    assert not (tmp_path / "r.png").exists()
    page = tmp_path / "r.html"
    write_optimize_report(str(page), result)
    assert 'id="no-plot"' in page.read_text() and "klc-cuda[plot]" in page.read_text()


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium (.ci/run installs Debian's)")
def test_optimize_html_report_renders_in_chromium(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    result = optimized()
    report = tmp_path / "r.html"
    assert write_optimize_report(str(report), result) == [str(report)]
    page = dump_dom(report, tmp_path)
    assert page.ids["outcome"].startswith("improved, verified: ")
    # one diff per accepted step, in order, each with the skill's change in an added line
    assert page.steps == [f"step-{i}" for i in range(1, len(result.steps) + 1)]
    added = [text for cls, text in page.spans if cls == "add"]
    removed = [text for cls, text in page.spans if cls == "del"]
    assert any("__expf(" in t for t in added) and any("expf(" in t for t in removed)
    assert any("__launch_bounds__(512)" in t for t in added)
    for step in result.steps:
        for line in step.diff.splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                assert line in added or line in [t for _, t in page.spans]
    [img] = page.images
    assert img["id"] == "plot" and img["src"].startswith("data:image/png;base64,")
    # a screenshot: the plot was decoded and drawn (its bar colour is on the screen)
    shot = tmp_path / "shot.png"
    got = chromium([f"--screenshot={shot}", "--window-size=1200,1600", report.as_uri()],
                   tmp_path)
    assert got.returncode == 0 and shot.exists(), got.stderr[-2000:]
    import matplotlib.image as mpimg
    import numpy as np

    pixels = (mpimg.imread(str(shot))[..., :3] * 255).round().astype(int)
    bar = np.array([0x4C, 0x72, 0xB0])
    assert (np.abs(pixels - bar).sum(axis=-1) < 12).sum() > 500


def _tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    shutil.copy(SIGMOID, src / "sigmoid.cu")
    shutil.copy(SIGMOID, src / "sub" / "again.cu")
    (src / "plain.cu").write_text("__global__ void k(int* a) { a[0] = 1; }\n")
    return src


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium (.ci/run installs Debian's)")
def test_batch_html_report_renders_in_chromium(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    src = _tree(tmp_path)
    report = tmp_path / "batch.html"
    rule = ROOT / "skills" / "launch_bounds.rule"
    rc = main(["batch", str(src), "--rule", str(rule), "--hole", "threads=256",
               "--out", str(tmp_path / "out"), "-j", "1", "-q", "--report", str(report)])
    out = capsys.readouterr().out
    assert rc == 0 and out == ""  # the diffs kept for the report are not printed
    page = dump_dom(report, tmp_path)
    assert "executor local" in page.ids["outcome"]
    added = [text for cls, text in page.spans if cls == "add"]
    assert sum("__launch_bounds__(256)" in t for t in added) == 2  # two rewritten files
    files = page.ids["files-table"]
    assert "sigmoid.cu" in files and "plain.cu" in files
    assert page.ids["no-plot"].startswith("No plot: no file was timed")


def test_batch_markdown_report_plots_timed_files(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from klc.batch import BatchSummary, FileResult
    from klc.plots import batch_points

    result = optimized()
    files = [FileResult("a.cu", "rewritten", optimize=result.to_json()),
             FileResult("b.cu", "unchanged")]
    summary = BatchSummary(files, "digest")
    points = batch_points([f.to_json() for f in files])
    assert [p[0] for p in points] == ["a.cu"]
    assert points[0][1] == pytest.approx(result.baseline["median_ms"])
    assert points[0][2] == pytest.approx(result.final["median_ms"])
    report = tmp_path / "b.md"
    assert write_batch_report(str(report), summary) == [str(report), str(tmp_path / "b.png")]
    assert "![time and % of SOL](b.png)" in report.read_text()
    assert (tmp_path / "b.png").read_bytes().startswith(b"\x89PNG")
    page = tmp_path / "b.html"
    write_batch_report(str(page), summary)
    text = page.read_text()
    assert 'id="plot"' in text and text.count('class="step"') == len(result.steps)


@pytest.mark.parametrize("argv", [
    ["optimize", str(SIGMOID), "--report", "{tmp}/r.txt"],
    ["optimize", str(SIGMOID), "--report", "{tmp}/missing/r.html"],
    ["batch", str(ROOT / "bench" / "examples"), "--report", "{tmp}/r.pdf"],
    ["batch", str(ROOT / "bench" / "examples"), "--report", "{tmp}/missing/r.html"],
])
def test_bad_report_paths(argv: list[str], tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert re.match(r"^klc: error: --report \S+: (give a \.json, \.md or \.html file|"
                    r"folder \S+ does not exist)$", err), err
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["cache"])


def test_optimize_json_report_keeps_step_diffs(tmp_path: Path) -> None:
    result = optimized()
    report = tmp_path / "r.json"
    write_optimize_report(str(report), result)
    data = json.loads(report.read_text())
    assert [s["diff"] for s in data["steps"]] == [s.diff for s in result.steps]
    assert all(s["diff"].startswith("--- a/") for s in data["steps"])


def test_batch_html_names_a_rewrite_without_diff(tmp_path: Path) -> None:
    from klc.batch import SUMMARY_LABELS
    from klc.htmlreport import batch_html

    files = [{"path": "a.cu", "status": "rewritten", "applied": [{"rule": "r"}]},
             {"path": "b.cu", "status": "rewritten", "applied": [{"rule": "r"}]},
             {"path": "c.cu", "status": "unchanged"}]
    page = batch_html({"files": files, "counts": {}}, {"a.cu": "--- a/a.cu\n+++ b/a.cu\n+x\n"},
                      None, "No plot: no file was timed.", SUMMARY_LABELS)
    assert page.count('<section class="file"') == 2
    assert '<span class="add">+x</span>' in page
    assert page.count("taken from the journal (--resume)") == 1
    assert 'id="no-plot">No plot: no file was timed.</p>' in page


def test_optimize_html_says_what_was_not_measured() -> None:
    """Without a GPU (static mode) no row of placeholders ("original: -, - of SOL"): the
    page says what was not measured; a measured original reads as before."""
    from klc.htmlreport import optimize_html

    static = {"path": "k.cu", "mode": "static", "baseline": None, "final": None,
              "steps": [], "trials": [], "stop_reason": "static only"}
    page = optimize_html(static, None, "No plot: nothing was timed.")
    assert "original: -" not in page and "- of SOL" not in page
    assert ("<li>not measured: the original's time and % of SOL, and every candidate's (no "
            "GPU here: verify and profile need one)</li>") in page
    failed = dict(static, mode="gpu", baseline={"verdict": "failed",
                                                 "reason": "verify: out of bounds"})
    assert ("not measured: the original's time and % of SOL (verify: out of bounds)"
            in optimize_html(failed, None, ""))
    timed = dict(static, mode="gpu", baseline={"median_ms": 0.1234, "pct_of_sol": 41.6})
    assert "<li>original: 0.1234 ms, 42% of SOL</li>" in optimize_html(timed, None, "")
    no_sol = dict(static, mode="gpu", baseline={"median_ms": 0.5, "pct_of_sol": None})
    assert "original: 0.5000 ms (% of SOL not known" in optimize_html(no_sol, None, "")


def test_batch_reports_name_files_relative_to_their_root(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    """The files table fits the page: paths relative to the folder that holds them (said
    once), in the file column and in the reasons; the "why" column wraps."""
    src = _tree(tmp_path)
    (src / "sub" / "bad.cu").write_text("__global__ void k(float* a) { a[0] = ; }\n")
    for name in ("batch.html", "batch.md"):
        report = tmp_path / name
        main(["batch", str(src), "--rule", str(ROOT / "skills" / "launch_bounds.rule"),
              "--hole", "threads=256", "-j", "1", "-q", "--report", str(report)])
        capsys.readouterr()
        text = report.read_text()
        table = text[text.index("files-table"):].split("</table>")[0] \
            if name.endswith(".html") else text.split("| file |")[1]
        assert f"{src}/" not in table, table  # no cell repeats the root
        assert "sub/again.cu" in text and "sub/bad.cu:1:" in text
        if name.endswith(".html"):
            assert f'<p id="root">paths below are relative to <code>{src}</code></p>' in text
            assert '<td class="why">sub/bad.cu:1:' in text and "overflow-wrap:anywhere" in text
        else:
            assert f"Paths are relative to `{src}`." in text and "| `sub/again.cu` |" in text
