"""A ``$$$`` run before several fixed statements ends only where each of them fits the
statement of the block it would stand for (``klc.match.engine._fixed_after``): the same
matches as trying every end, found without trying the ends that the statements after the
next one cannot follow."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from klc.cuda.parse import parse_bytes
from klc.match import compile_pattern, engine, find_matches

ROOT_SKILLS = Path(__file__).resolve().parents[2] / "skills"

# statements a block is made of: declarations of each kind and `if`s that do or do not test
# a declared index, so that a run's ends are many and few of them are followed by what the
# pattern wants
STATEMENTS = [
    "int i = blockIdx.x * blockDim.x + threadIdx.x;",
    "int j = threadIdx.x;",
    "float a = 0.0f;",
    "float b = x[0];",
    "y[0] = 1.0f;",
    "if (i < n) { y[i] = a; }",
    "if (j < n) { y[j] = b; }",
    "if (i < n) { a += x[i]; }",
    "a += 1.0f;",
]

PATTERNS = [
    "int $I = $G;\n$$$MID;\nfloat $A = $Z;\nif ($I < $N) {\n    $$$BODY;\n}",
    "int $I = $G;\n$$$MID;\nfloat $A = $Z;\n$A += $E;",
    "$$$PRE;\nfloat $A = $Z;\nif ($I < $N) {\n    $$$BODY;\n}\n$$$POST;",
    "int $I = $G;\n$$$MID;\nif ($I < $N) {\n    $$$BODY;\n}",
]


def found(pattern: str, body: list[str]) -> list[tuple[int, int, list[tuple[str, str]]]]:
    code = "__global__ void k(float* y, const float* x, int n) {\n    " + \
        "\n    ".join(body) + "\n}\n"
    unit = parse_bytes(code.encode(), "k.cu")
    return [(m.start, m.end, sorted((k, " ".join(b.text.split())) for k, b in m.bindings.items()))
            for m in find_matches(compile_pattern(pattern), unit)]


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=120, deadline=None)
@given(body=st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=12))
def test_the_lookahead_finds_what_every_end_finds(pattern: str, body: list[str]) -> None:
    got = found(pattern, body)
    with pytest.MonkeyPatch.context() as m:  # every end tried: no statement after the next asked
        m.setattr(engine, "_fixed_after", lambda ps, i, fits: ())
        assert got == found(pattern, body)


def test_a_run_ends_where_the_statements_after_it_follow() -> None:
    body = ["int i = threadIdx.x;", "float a = 0.0f;", "y[0] = a;", "float b = 1.0f;",
            "if (i < n) { y[i] = b; }"]
    ((_start, _end, bindings),) = found(PATTERNS[0], body)
    assert dict(bindings)["MID"] == "float a = 0.0f; y[0] = a;"
    assert dict(bindings)["A"] == "b"


def test_the_ends_asked_are_those_the_statements_after_follow(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # every float declaration could end the run; only the one an `if` follows is tried
    body = ["int i = threadIdx.x;"] + ["float a = 0.0f;"] * 6 + [
        "float b = 1.0f;", "if (i < n) { y[i] = b; }"]
    tried: list[int] = []
    real = engine._Matcher.seq

    def seq(self, ps, i, ts, j, b, anchored):  # type: ignore[no-untyped-def]
        if i == 2 and ts[0].type == "declaration":  # (the statement after the run, at
            tried.append(j)                            # the end tried, in the body)
        return real(self, ps, i, ts, j, b, anchored)

    monkeypatch.setattr(engine._Matcher, "seq", seq)
    assert len(found(PATTERNS[0], body)) == 1
    assert tried == [7]


# the patterns again, their metavariables renamed (equal but for the names), and one whose
# statements differ in a token (`<=`, `-=`): the first two share what is known of which
# statements fit theirs (``klc.match.find._fit_key``), the third does not
RENAMED = [p.replace("$I", "$Q").replace("$A", "$W") for p in PATTERNS]
OTHER = [p.replace("<", "<=").replace("+=", "-=") for p in PATTERNS]


@settings(max_examples=120, deadline=None)
@given(body=st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=12))
def test_anchors_equal_but_for_names_share_their_fitting_and_find_what_each_finds_alone(
        body: list[str]) -> None:
    """Matched one after another in one unit (sharing which statements fit), each pattern
    finds what it finds in a unit of its own."""
    from klc.match import find

    code = "__global__ void k(float* y, const float* x, int n) {\n    " + \
        "\n    ".join(body) + "\n}\n"
    patterns = [compile_pattern(p) for p in [*PATTERNS, *RENAMED, *OTHER]]
    shared = parse_bytes(code.encode(), "k.cu")
    for p in patterns:
        alone = parse_bytes(code.encode(), "k.cu")
        assert [(m.start, m.end, m.bindings) for m in find_matches(p, shared)] == \
            [(m.start, m.end, m.bindings) for m in find_matches(p, alone)]
    for p, renamed, other in zip(PATTERNS, RENAMED, OTHER, strict=True):
        keys = [[k for _, k in find.run_elements(compile_pattern(q))]
                for q in (p, renamed, other)]
        assert keys[0] == keys[1] and keys[0] != keys[2]


def test_the_workers_start_with_the_runs_statements_numbered() -> None:
    """Before ``klc list -j N`` forks its workers, every run anchor of the library has its
    statements numbered (``klc.batch.listing._warm``): a worker does not number them again."""
    from klc.batch import listing
    from klc.match import find, pattern_of

    listing._init([str(ROOT_SKILLS)], True, False)
    find._RUN_ELEMENTS.clear()
    find._FIT_KEYS.clear()
    listing._warm()
    numbered = len(find._FIT_KEYS)
    runs = [b for r in listing._STATE["rules"] for p in [pattern_of(r)]
            for b in (p.alternatives or (p,)) if b.is_sequence]
    assert len(runs) > 20 and numbered > 100
    for b in runs:  # (as a worker asks them: nothing numbered again)
        assert find.run_elements(b)
    assert len(find._FIT_KEYS) == numbered
