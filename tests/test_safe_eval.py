"""The one safe evaluator: each difference between its three dialects pinned, and hostile
input refused with an ExprError (never eval, never a hang, never another exception)."""

from __future__ import annotations

import pytest

from klc.errors import KlcError
from klc.safe_eval import C_CONSTANT, PREPROCESSOR, SPEC, Dialect, ExprError, evaluate, names


def value(text: str, dialect: Dialect, env: dict[str, int] | None = None) -> object:
    return evaluate(text, env or {}, dialect)


# -- differences between the dialects, each pinned ----------------------------------------


@pytest.mark.parametrize(("text", "spec", "c", "pre"), [
    # what `/` means on integers: true division, C's truncation, Python's floor
    ("7 / 2", 3.5, 3, 3),
    ("-7 / 2", -3.5, -3, -4),
    # `%` follows: Python's sign of the divisor, C's sign of the dividend
    ("-7 % 2", 1, -1, 1),
    ("7 % -2", -1, 1, -1),
    # floats divide truly wherever floats are taken
    ("7.0 / 2", 3.5, 3.5, None),
])
def test_division_and_modulo(text: str, spec: object, c: object, pre: object) -> None:
    got = value(text, SPEC)
    assert got == spec and type(got) is type(spec)
    got = value(text, C_CONSTANT)
    assert got == c and type(got) is type(c)
    if pre is None:
        with pytest.raises(ExprError, match="only numbers"):
            value(text, PREPROCESSOR)
    else:
        assert value(text, PREPROCESSOR) == pre


def test_floor_division_operator() -> None:
    """`//` is Python's in a spec and a preprocessor condition; in C it begins a comment."""
    assert value("-7 // 2", SPEC) == -4
    assert value("-7 // 2", PREPROCESSOR) == -4
    with pytest.raises(ExprError, match="FloorDiv is not allowed"):
        value("7 // 2", C_CONSTANT)


def test_power_only_in_specs() -> None:
    assert value("2 ** 10", SPEC) == 1024
    for dialect in (C_CONSTANT, PREPROCESSOR):
        with pytest.raises(ExprError, match="Pow is not allowed"):
            value("2 ** 10", dialect)


def test_shifts_and_bitwise() -> None:
    assert value("1 << 80", SPEC) == 1 << 80
    with pytest.raises(ExprError, match=r"shifts need integers and a count in 0\.\.80"):
        value("1 << 81", SPEC)
    assert value("1 << 4096", C_CONSTANT) == 1 << 4096
    with pytest.raises(ExprError, match=r"count in 0\.\.4096"):
        value("1 << 4097", C_CONSTANT)
    with pytest.raises(ExprError, match="shifts need integers"):
        value("1.5 << 1", C_CONSTANT)
    with pytest.raises(ExprError, match="shifts need"):
        value("1 << -1", C_CONSTANT)
    assert value("0x10 | 0x01", C_CONSTANT) == 17
    assert value("~5", C_CONSTANT) == -6
    with pytest.raises(ExprError, match="Invert is not allowed"):
        value("~5", SPEC)
    with pytest.raises(ExprError, match="LShift is not allowed"):
        value("1 << 2", PREPROCESSOR)
    with pytest.raises(ExprError, match="unsupported operand"):
        value("1.5 & 1", C_CONSTANT)


def test_logic_gives_bools_where_taken() -> None:
    got = value("3 > 2 and 1", C_CONSTANT)
    assert got is True
    assert value("not 0", C_CONSTANT) is True
    assert value("not 0", PREPROCESSOR) is True
    assert value("2 if 0 else 3", C_CONSTANT) == 3
    for text in ("3 > 2", "not 1", "1 and 2", "2 if 0 else 3"):
        with pytest.raises(ExprError, match="is not allowed in a spec expression"):
            value(text, SPEC)


def test_chained_comparisons_only_in_preprocessor_conditions() -> None:
    assert value("1 < 2 < 3", PREPROCESSOR) is True
    assert value("1 < 3 < 2", PREPROCESSOR) is False
    with pytest.raises(ExprError, match="Compare is not allowed"):
        value("1 < 2 < 3", C_CONSTANT)
    with pytest.raises(ExprError, match="is not allowed"):
        value("1 is 1", C_CONSTANT)


def test_constants_each_dialect_takes() -> None:
    assert value("True + 1", C_CONSTANT) == 2  # C's true and false are spliced in as bools
    with pytest.raises(ExprError, match="only numbers are allowed, not True"):
        value("True + 1", SPEC)
    with pytest.raises(ExprError, match=r"only numbers are allowed, not 1\.5"):
        value("1.5", PREPROCESSOR)


def test_functions_each_dialect_takes() -> None:
    assert value("ceil_div(n, 256)", SPEC, {"n": 1000}) == 4
    assert value("cdiv(n, 256)", SPEC, {"n": 1000}) == 4
    assert value("max(1, min(n, 7))", SPEC, {"n": 3}) == 3
    assert value("_int(2.7) + _float(1)", C_CONSTANT) == 3.0
    assert value("_bool(2)", C_CONSTANT) is True
    with pytest.raises(ExprError, match="unknown function 'ceil_div'"):
        value("ceil_div(1, 2)", C_CONSTANT)
    with pytest.raises(ExprError, match=r"unknown function 'max' \(allowed: none\)"):
        value("max(1, 2)", PREPROCESSOR)
    with pytest.raises(ExprError, match="wrong number of arguments to ceil_div"):
        value("ceil_div(1)", SPEC)
    with pytest.raises(ExprError, match="wrong number of arguments to max"):
        value("max()", SPEC)
    with pytest.raises(ExprError, match="ceil_div by zero"):
        value("ceil_div(1, 0)", SPEC)


def test_a_spec_result_is_a_finite_number_others_may_not_be() -> None:
    with pytest.raises(ExprError, match="not a finite real number"):
        value("x", SPEC, {"x": float("nan")})
    assert value("1e308 * 10", C_CONSTANT) == float("inf")  # (libclang's value decides)


def test_names_come_from_the_environment() -> None:
    assert value("n * 2", SPEC, {"n": 4}) == 8
    with pytest.raises(ExprError, match=r"unknown name 'm' \(known: n\)"):
        value("m", SPEC, {"n": 4})
    with pytest.raises(ExprError, match=r"unknown name 'x' \(known: none\)"):
        value("x + 1", C_CONSTANT)
    assert names("ceil_div(n, BLOCK) * m", SPEC) == {"n", "BLOCK", "m"}


def test_numbers_and_empty_text() -> None:
    assert evaluate(42, {}, SPEC) == 42
    with pytest.raises(ExprError, match="expected a number or an expression, got True"):
        evaluate(True, {}, SPEC)  # type: ignore[arg-type]
    for text in ("", "   "):
        with pytest.raises(ExprError, match="empty expression"):
            evaluate(text, {}, SPEC)
    with pytest.raises(ExprError, match="division by zero"):
        value("1 / 0", C_CONSTANT)
    with pytest.raises(ExprError, match="cannot parse"):
        value("1 +", PREPROCESSOR)


# -- hostile input --------------------------------------------------------------------------


ALL = (SPEC, C_CONSTANT, PREPROCESSOR)


@pytest.mark.parametrize("dialect", ALL, ids=lambda d: d.what)
@pytest.mark.parametrize(("text", "needle"), [
    ("__import__('os')", r"unknown function '__import__' \(allowed: "),
    ("__import__('os').system('true')", "Call is not allowed"),
    ("(1).real", "Attribute is not allowed"),
    ("().__class__", "Attribute is not allowed"),
    ("(lambda: 1)()", "Call is not allowed"),
    ("[1][0]", "is not allowed"),
    ("{1: 2}", "Dict is not allowed"),
    ("'abc'", "only numbers"),
    ("min(1, key=2)", "Call is not allowed|unknown function 'min'"),
    ("(x := 1)", "NamedExpr is not allowed"),
    ("f'{1}'", "JoinedStr is not allowed"),
])
def test_hostile_input_is_refused(dialect: Dialect, text: str, needle: str) -> None:
    with pytest.raises(ExprError, match=needle):
        evaluate(text, {}, dialect)


def test_huge_exponents_are_refused() -> None:
    for text in ("2 ** 2 ** 30", "9 ** 9 ** 9", "2 ** 129", "(10 ** 30) ** 100"):
        with pytest.raises(ExprError, match=r"exponent too large|value out of range"):
            value(text, SPEC)
    with pytest.raises(ExprError, match="value out of range"):
        value("(1 << 80) * (1 << 80)", SPEC)


@pytest.mark.parametrize("dialect", ALL, ids=lambda d: d.what)
def test_deep_nesting_and_long_text_are_refused(dialect: Dialect) -> None:
    deep = "-" * (dialect.max_depth + 5) + "1"
    with pytest.raises(ExprError, match=f"nested more than {dialect.max_depth} deep"):
        evaluate(deep, {}, dialect)
    parens = min(10_000, dialect.max_chars // 2 - 1)
    with pytest.raises(ExprError, match=r"nested too deeply|cannot parse|nested more"):
        evaluate("(" * parens + "1" + ")" * parens, {}, dialect)
    with pytest.raises(ExprError, match="nested more"):  # a long chain is deep too
        evaluate("1" + "+1" * (dialect.max_depth + 1), {}, dialect)
    long = "+".join(["1"] * (dialect.max_chars // 2 + 1))
    with pytest.raises(ExprError, match=f"at most {dialect.max_chars}"):
        evaluate(long, {}, dialect)


def test_the_error_is_a_klc_error() -> None:
    assert issubclass(ExprError, KlcError)
