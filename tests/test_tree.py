"""The tracked tree speaks of what the project is, not of how it was built.

No tracked file's name or text carries a work-log reference: a numbered issue, a numbered or
dated work period, a run named after a commit, who did what. The words themselves stay where
they mean something else: `session` is the gate worker's ``Session`` (klc/gate/session.py),
`issue` is what a GPU does with an instruction ("more issue slots").
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# A work-log reference in a file's text, case-insensitive.
WORK_LOG = re.compile(
    r"""
      (?<![a-z])sessions?[\s_-]*\d+              # "session 11", "session8", "session-3"
    | \b(?:this|that|last|next|previous|earlier|later|whole|each|the|a|one)[\s-]+session(?:'s)?
        \b(?!\.py|\s+for\s+the\s+worker)  # a work period ("the session's time"); not the gate's
    | \bmid-session\b
    | (?<![a-z])issues?[\s_-]*\#?\s*\d+          # "issue 17", "issue19", "issues #3", "issue-21"
    | \bissue\s+\#                       # "Issue #"
    | \b(?:the|this|that|same|an|whose)\s+issue\b(?!\s+slots?)
    | \bissue's\b
    | \btoday\b | \byesterday\b | \btonight\b | \bthis\s+morning\b
    | \bof\s+the\s+day\b
    | \bengineers?\b
    | \bwork[\s-]?log\b
    | \bhelpers?\s+(?:engineer|session|branch|worktree)s?\b
    """,
    re.IGNORECASE | re.VERBOSE,
)

# A work-log word in a tracked path: a work period, an issue, a generation of a run, a commit.
NAME = re.compile(
    r"session|issue|worklog|today|_final(?=[_\-/.]|$)|before_after"
    r"|(?:^|[_\-/.])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?=[_\-/.]|$)",
    re.IGNORECASE,
)

# Technical uses of "session" that the period pattern above would read as a work period: the
# gate worker's Session object, named in its own package and in the architecture page.
GATE_SESSION = ("klc/gate/", "tests/gate/")
NAME_ALLOWED = {"klc/gate/session.py"}


def tracked() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [p for p in out.decode().split("\0") if p]


def _text(path: str) -> str | None:
    data = (ROOT / path).read_bytes() if (ROOT / path).is_file() else b""
    if b"\0" in data[:8192]:
        return None  # binary (a plot)
    return data.decode("utf-8", errors="replace")


def work_log_hits(path: str, text: str) -> list[str]:
    hits = []
    for number, line in enumerate(text.splitlines(), 1):
        for m in WORK_LOG.finditer(line):
            technical = path.startswith(GATE_SESSION) or "session.py" in line
            if technical and "session" in m.group(0).lower() and not re.search(r"\d", m.group(0)):
                continue
            hits.append(f"{path}:{number}:{m.start() + 1}: {m.group(0)!r}")
    return hits


def test_no_work_log_in_file_names():
    bad = [p for p in tracked() if NAME.search(p) and p not in NAME_ALLOWED]
    assert bad == []


def test_no_work_log_in_file_text():
    hits: list[str] = []
    for path in tracked():
        text = _text(path)
        if text is not None and path != "tests/test_tree.py":  # its examples are work-log lines
            hits.extend(work_log_hits(path, text))
    assert hits == [], "\n".join(hits[:40])


@pytest.mark.parametrize(
    "line",
    [
        "measured in session 11 on the H200",
        "# Session 10's last device call",
        "see gpu_session8.sh",
        "(issue 17 item 5)",
        "the issue's command",
        "Issue #4 asks for it",
        "later issue-21 commits",
        "An earlier run today",
        "load from other engineers",
        "when the session's time ran out",
        "with the unmeasured card of mid-session",
    ],
)
def test_work_log_lines_are_caught(line):
    assert work_log_hits("docs/x.md", line)


@pytest.mark.parametrize(
    "line",
    [
        "more issue slots and memory transactions",
        "a memory-bound loop issues more requests",
        "`session.py` (what a worker keeps between jobs)",
        "node and byte helpers (`sort_doc_order`)",
        "a GitHub issue template",
    ],
)
def test_technical_words_pass(line):
    assert work_log_hits("docs/x.md", line) == []


@pytest.mark.parametrize(
    "path, bad",
    [
        ("bench/device_session11a.sh", True),
        ("bench/gpu_issue19.sh", True),
        ("bench/results/fuzz_edcc8a6_device.jsonl", True),
        ("bench/results/transfer_optimize_21c06b2/results.md", True),
        ("bench/results/gpu_tests_final_NVIDIA_H200.txt", True),
        ("bench/results/soundness_real_corpus.md", False),
        ("tests/golden/add_restrict/layernorm_v13.cu", False),
        ("bench/transfer/BODIES.sha256", False),
        ("klc/gate/session.py", True),
    ],
)
def test_names(path, bad):
    # klc/gate/session.py is the one technical name, allowed by NAME_ALLOWED
    assert bool(NAME.search(path)) is bad


# A path the prose of the documentation names: a file or folder of the repository.
CITED = re.compile(
    r"(?<![\w/.~-])((?:bench|docs|tests|klc|skills|passes|grammar)/[\w./<>*-]*[\w/])"
)


def test_documented_paths_exist():
    docs = [p for p in tracked() if p.endswith(".md") and not p.startswith("tests/golden/")]
    missing = []
    for path in docs:
        for number, line in enumerate((ROOT / path).read_text().splitlines(), 1):
            for name in CITED.findall(line):
                if any(c in name for c in "<>*") or Path(name).stem in ("x", "NAME"):
                    continue  # a pattern (bench/lineages/<family>/walk) or an example (x.rule)
                if not (ROOT / name).exists() and not (ROOT / path).parent.joinpath(name).exists():
                    missing.append(f"{path}:{number}: {name}")
    assert missing == [], "\n".join(missing)


def test_architecture_names_every_guard_family():
    text = (ROOT / "docs/architecture.md").read_text()
    named = set()
    for group in re.findall(r"`klc/guards/\{([\w,]+)\}\.py`", text):
        named.update(group.split(","))
    from klc.guards.table import FAMILIES  # (every module that declares a predicate)

    families = {m.__name__.rpartition(".")[2] for m in FAMILIES}
    assert named == families
