"""``lets_through``: an ``and`` judged for whether it lets a match through (a listing of the
applicable sites) gives ``evaluate``'s answer in any order of its operands, stops at the
first that refuses, and learns to ask first the operand that refuses soonest for the least
time."""

from __future__ import annotations

import importlib
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from klc.cuda.parse import parse_bytes
from klc.guards import GuardContext, Verdict, evaluate, lets_through
from klc.guards.registry import Predicate, Traits
from klc.match import Match
from klc.rule.guard import GuardAnd, GuardCall, GuardNot

evaluate_module = importlib.import_module("klc.guards.evaluate")

# what a made predicate answers: yes, a known no, a missing fact (fails closed), pending
ANSWERS = {"yes": Verdict(True, "yes"), "no": Verdict(False, "no"),
           "closed": Verdict(False, "cannot tell", None, True),
           "pending": Verdict(True, "depends on ?h", None, True)}


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    return _made(monkeypatch)


def _made(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Predicates p0..p7 whose answers (and a delay, in seconds) the test sets, and the
    names of those asked, in order."""
    asked: list[str] = []
    setting: dict[str, list[str]] = {"asked": asked}
    table = dict(evaluate_module.PREDICATES)
    for k in range(8):
        name = f"p{k}"

        def fn(ctx: GuardContext, name: str = name) -> Verdict:
            asked.append(name)
            answer, delay = setting[name]
            if delay:
                time.sleep(float(delay))
            return ANSWERS[answer]

        setting[name] = ["yes", "0"]
        table[name] = Predicate(name, (), name, Traits(frozenset({"position"})), fn)
    monkeypatch.setattr(evaluate_module, "PREDICATES", table)
    evaluate_module._PLANS.clear()
    return setting


def _context() -> GuardContext:
    unit = parse_bytes(b"__global__ void k(float* a) { a[0] = 1.0f; }\n", "k.cu")
    return GuardContext(Match(None, unit, unit.functions[0], 0, 1,  # type: ignore[arg-type]
                              (unit.root,), {}))


@given(st.lists(st.sampled_from(sorted(ANSWERS)), min_size=1, max_size=6),
       st.permutations(range(6)), st.booleans())
def test_the_verdict_lets_through_what_evaluate_lets_through_in_any_order(
        answers: list[str], order: list[int], negated: bool) -> None:
    """Whatever the operands answer and whatever order they are asked in: the same yes or
    no as ``evaluate``, and where yes, ``evaluate``'s verdict (its reasons in written order);
    where no, the first refusing operand asked is the one it stops at."""
    with pytest.MonkeyPatch.context() as mp:
        setting = _made(mp)
        operands = []
        for k, answer in enumerate(answers):
            setting[f"p{k}"] = [answer, "0"]
            call = GuardCall(f"p{k}")
            operands.append(GuardNot(GuardNot(call)) if negated and k == 0 else call)
        expr = GuardAnd(tuple(operands))
        ctx = _context()
        want = evaluate(expr, ctx)
        evaluate_module._PLANS[id(expr)] = (expr, evaluate_module._Plan(len(answers)))
        evaluate_module._PLANS[id(expr)][1].order = tuple(i for i in order if i < len(answers))
        setting["asked"].clear()
        got = lets_through(expr, ctx)
        assert got.ok == want.ok
        if want.ok:
            assert got == want
        else:
            stop = setting["asked"][-1]
            assert not ANSWERS[setting[stop][0]].ok
            if not (negated and stop == "p0"):  # (``not not`` says the reason twice)
                assert got == ANSWERS[setting[stop][0]]


def test_the_operand_that_refuses_soonest_for_the_least_time_is_asked_first(
        made: dict[str, list[str]]) -> None:
    """A slow operand that always lets through, written first, and a quick one that always
    refuses: after a few matches the quick one is asked first and the slow one no more."""
    made["p0"] = ["yes", "0.002"]
    made["p1"] = ["no", "0"]
    expr = GuardAnd((GuardCall("p0"), GuardCall("p1")))
    ctx = _context()
    for _ in range(12):
        assert not lets_through(expr, ctx).ok
    made["asked"].clear()
    for _ in range(5):
        assert not lets_through(expr, ctx).ok
    assert made["asked"] == ["p1"] * 5
    # (evaluate asks in written order, always)
    made["asked"].clear()
    assert not evaluate(expr, ctx).ok and made["asked"] == ["p0", "p1"]


def test_an_operand_never_asked_is_tried(made: dict[str, list[str]]) -> None:
    """An operand behind one that always refused is asked once the order is made again (it
    costs nothing yet): where it refuses sooner for less time, it goes first."""
    made["p0"] = ["no", "0.001"]
    made["p1"] = ["no", "0"]
    expr = GuardAnd((GuardCall("p0"), GuardCall("p1")))
    ctx = _context()
    for _ in range(6):
        lets_through(expr, ctx)
    assert "p1" in made["asked"]
    made["asked"].clear()
    lets_through(expr, ctx)
    assert made["asked"] == ["p1"]


def test_a_slow_operand_is_put_behind_after_one_question(made: dict[str, list[str]]) -> None:
    """An operand whose one question takes longer than the order's first time step (a
    guard's analysis of a large file) has the order made again at once, not when its
    count next doubles: the quick one behind it, never asked, is asked next, and then
    first."""
    made["p0"] = ["no", str(3 * evaluate_module._FIRST_TIME)]
    made["p1"] = ["no", ""]  # (no delay at all)
    expr = GuardAnd((GuardCall("p0"), GuardCall("p1")))
    ctx = _context()
    for _ in range(3):
        assert not lets_through(expr, ctx).ok
    assert made["asked"] == ["p0", "p1", "p1"]


def test_the_order_follows_an_operand_that_turns_slow(made: dict[str, list[str]]) -> None:
    """An operand that was quick for many questions (its count's next doubling far away)
    and turns slow is put behind the quick one once its time doubles."""
    made["p0"] = ["yes", ""]
    made["p1"] = ["no", ""]
    expr = GuardAnd((GuardCall("p0"), GuardCall("p1")))
    ctx = _context()
    for _ in range(40):
        lets_through(expr, ctx)
    assert evaluate_module._PLANS[id(expr)][1].order == (1, 0)  # (p1 refuses, quickly)
    made["p1"] = ["no", str(10 * evaluate_module._FIRST_TIME)]  # (a large file's analysis)
    made["p0"] = ["no", ""]
    made["asked"].clear()
    for _ in range(4):
        lets_through(expr, ctx)
    assert made["asked"] == ["p1", "p0", "p0", "p0"]
