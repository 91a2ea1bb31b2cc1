"""The LLM filler against a small OpenAI-compatible server on 127.0.0.1: real HTTP through the
real openai client, scripted answers, the requests recorded. Every answer is untrusted: the
cases below are answers that a filler must refuse, retry or give up on, each with a clear
reason, never an exception, and nothing cached for a request that got no answer."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from klc.cuda.model import Unit
from klc.cuda.parse import parse_bytes
from klc.errors import KlcError
from klc.fill import FillRequest, Trial
from klc.fill.llm import LlmFiller, answer_schema
from klc.pipeline import Site, apply_site, find_sites
from klc.rule.holes import HoleDecl
from klc.rule.model import Rule
from klc.rule.ruleset import load_rules_text

KERNEL = b"""\
// two small kernels for the LLM filler's tests
__global__ void scale_add(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

__global__ void row_sum(const float* __restrict__ x, float* __restrict__ out) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int j = 0; j < 8; ++j) {
        s += x[r * 8 + j];
    }
    out[r] = s;
}
"""

RULES = '''\
rule fma_coef {
  kind: skill
  description: "Write the update as one fused multiply-add with a chosen coefficient"
  context: global
  anchor: ```
    $Y[$I] = $A * $X[$I] + $Y[$I];
  ```
  rewrite replace: ```
    $Y[$I] = fmaf(?coef, $X[$I], $Y[$I]);
  ```
  hole coef: expr
  card {
    intent: "Fuse the multiply and the add of an axpy update"
    where: "An element update y[i] = a * x[i] + y[i]"
    conditions: "Always sound; rounding differs by one ulp"
    effect: "1.02x on H100 (saxpy)"
    pitfalls: "A coefficient that is not the original scale changes the result"
  }
}

rule prologue {
  kind: skill
  description: "Load x once into a register, with statements in between"
  context: global
  anchor: ```
    $Y[$I] = $A * $X[$I] + $Y[$I];
  ```
  rewrite replace: ```
    float t = $X[$I];
    ?body
    $Y[$I] = $A * t + $Y[$I];
  ```
  hole body: stmts
}

rule unroll {
  kind: skill
  description: "Unroll a counted loop"
  context: global
  anchor: ```
    for ($INIT; $COND; $STEP) $BODY
  ```
  guard: trip_count_known($COND)
  rewrite replace: ```
    #pragma unroll ?factor
    for ($INIT; $COND; $STEP) $BODY
  ```
  hole factor: int in {1, 2, 4, 8} default 4
  card {
    intent: "Unroll a short counted loop"
    pitfalls: "Large factors on big bodies raise register pressure"
  }
}

rule restrict_only {
  kind: skill
  description: "No holes at all"
  context: global
  anchor: ```
    float s = 0.0f;
  ```
  rewrite replace: ```
    float s = 0.0f; // accumulator
  ```
}
'''


# --------------------------------------------------------------------------------------
# The server


@dataclass
class Reply:
    """A 200 answer whose message content is ``content``."""

    content: str
    prompt_tokens: int = 100
    completion_tokens: int = 20


@dataclass
class Status:
    """An HTTP error answer."""

    code: int
    message: str = "server error"


@dataclass
class Sleep:
    """No answer for ``seconds`` (the test's client times out first)."""

    seconds: float


@dataclass
class Server:
    url: str
    script: list[Reply | Status | Sleep] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def last_user_message(self, i: int = -1) -> str:
        return self.requests[i]["messages"][-1]["content"]


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _send(self, code: int, body: dict[str, Any], headers: dict[str, str]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/chat/completions":
                self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
                return
            server.requests.append(body)
            step = server.script.pop(0) if server.script else \
                Status(500, "unexpected request: the script is empty")
            if isinstance(step, Sleep):
                server.stop.wait(step.seconds)
                return  # the client has given up: close without an answer
            if isinstance(step, Status):
                self._send(step.code, {"error": {"message": step.message, "type": "error"}},
                           {"retry-after-ms": "5"})  # keep the client's retries quick
                return
            self._send(200, {
                "id": "chatcmpl-test", "object": "chat.completion", "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": step.content}}],
                "usage": {"prompt_tokens": step.prompt_tokens,
                          "completion_tokens": step.completion_tokens,
                          "total_tokens": step.prompt_tokens + step.completion_tokens},
            }, {})

    return Handler


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "KLC_LLM_MODEL", "KLC_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    srv = Server(url="")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(srv))
    httpd.daemon_threads = True
    srv.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield srv
    srv.stop.set()
    httpd.shutdown()
    httpd.server_close()


def filler(server: Server, cache: Path, **kw: Any) -> LlmFiller:
    args: dict[str, Any] = {"model": "test-model", "base_url": server.url, "api_key": "sk-test",
                            "cache_dir": cache, "timeout_s": 5, "max_retries": 2}
    args.update(kw)
    return LlmFiller(**args)


def answer(*assignments: dict[str, Any]) -> str:
    return json.dumps({"assignments": list(assignments)})


# --------------------------------------------------------------------------------------
# Real rules on a real kernel


@pytest.fixture(scope="module")
def unit() -> Unit:
    return parse_bytes(KERNEL, "kernels/two.cu")


@pytest.fixture(scope="module")
def rules() -> dict[str, Rule]:
    return {r.name: r for r in load_rules_text(RULES, "test.rule")}


def request(unit: Unit, rule: Rule, history: list[Trial] | None = None,
            baseline_ms: float | None = None) -> FillRequest:
    sites: list[Site] = [s for s in find_sites(unit, [rule]) if s.ok]
    assert len(sites) == 1, [s.reason for s in find_sites(unit, [rule])]
    return FillRequest(rule, sites[0], unit, history=list(history or []),
                       baseline_ms=baseline_ms)


def cache_files(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.json")) if cache.exists() else []


# --------------------------------------------------------------------------------------
# A good answer


def test_good_answer_is_validated_counted_and_cached(server: Server, unit: Unit,
                                                     rules: dict[str, Rule],
                                                     tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    server.script = [Reply(answer({"coef": "a"}, {"coef": " 2.0f * a "}), 321, 17)]
    llm = filler(server, cache)
    req = request(unit, rules["fma_coef"])
    got = llm.propose(req, 2)
    assert got == [{"coef": "a"}, {"coef": "2.0f * a"}]
    assert llm.last_reason == ""
    assert llm.usage() == {"requests": 1, "cache_hits": 0, "prompt_tokens": 321,
                           "completion_tokens": 17, "refused_answers": 0}
    # the request: the model, the schema built from the holes, a prompt that shows the site
    body = server.requests[0]
    assert body["model"] == "test-model"
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    schema = fmt["json_schema"]["schema"]
    assert schema == answer_schema(rules["fma_coef"], 2)
    item = schema["properties"]["assignments"]["items"]
    assert item["required"] == ["coef"] and item["properties"]["coef"]["type"] == "string"
    assert schema["properties"]["assignments"]["maxItems"] == 2
    user = body["messages"][1]["content"]
    assert "Fuse the multiply and the add of an axpy update" in user  # the card
    assert "A coefficient that is not the original scale" in user
    assert "kernels/two.cu:5:9, in the global function scale_add" in user  # file:line:col
    assert "/*>>> KLC MATCH BEGIN >>>*/y[i] = a * x[i] + y[i];/*<<< KLC MATCH END <<<*/" in user
    assert "int i = blockIdx.x * blockDim.x + threadIdx.x;" in user  # the function around it
    assert "row_sum" not in user  # ... and not the other kernel
    assert "$Y[$I] = fmaf(?coef, $X[$I], $Y[$I]);" in user  # where the hole goes
    assert "?coef: expr: exactly one CUDA expression" in user
    # the values are usable: the rewrite applies and parses
    out = apply_site(unit, req.site, got[1])
    assert b"y[i] = fmaf(2.0f * a, x[i], y[i]);" in out.source
    assert len(cache_files(cache)) == 1

    # the same request again, even from a new filler: from the cache, no HTTP, no tokens
    again = filler(server, cache)
    assert again.propose(request(unit, rules["fma_coef"]), 2) == got
    assert len(server.requests) == 1
    assert again.usage() == {"requests": 0, "cache_hits": 1, "prompt_tokens": 0,
                             "completion_tokens": 0, "refused_answers": 0}


def test_history_is_shown_and_its_values_dropped(server: Server, unit: Unit,
                                                 rules: dict[str, Rule], tmp_path: Path) -> None:
    history = [Trial({"factor": "4"}, True, 0.125),
               Trial({"factor": "8"}, False, reason="compile: too many registers")]
    server.script = [Reply(answer({"factor": 8}, {"factor": 2}, {"factor": 2}))]
    llm = filler(server, tmp_path / "cache")
    got = llm.propose(request(unit, rules["unroll"], history, baseline_ms=0.125), 3)
    assert got == [{"factor": "2"}]  # 8 was tried, the second 2 repeats the first
    user = server.requests[0]["messages"][1]["content"]
    assert '1. {"factor": "4"}: passed, 0.125 ms' in user
    assert '2. {"factor": "8"}: failed: compile: too many registers' in user
    assert "The kernel now takes 0.125 ms." in user
    # two of the four values are left: ask for at most two
    schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["assignments"]["maxItems"] == 2
    assert schema["properties"]["assignments"]["items"]["properties"]["factor"] == \
        {"type": "integer", "enum": [1, 2, 4, 8]}


def test_exhausted_domain_and_rule_without_holes_need_no_request(
        server: Server, unit: Unit, rules: dict[str, Rule], tmp_path: Path) -> None:
    llm = filler(server, tmp_path / "cache")
    history = [Trial({"factor": str(f)}, True, 1.0) for f in (1, 2, 4, 8)]
    assert llm.propose(request(unit, rules["unroll"], history), 4) == []
    assert llm.last_reason == "unroll: every assignment of the holes has been tried at this site"
    assert llm.propose(request(unit, rules["restrict_only"]), 3) == [{}]
    assert llm.propose(request(unit, rules["restrict_only"], [Trial({}, True, 1.0)]), 3) == []
    assert llm.last_reason == "restrict_only: the rule has no holes and was tried already"
    assert server.requests == [] and llm.usage()["requests"] == 0


# --------------------------------------------------------------------------------------
# Refused answers: retried with the reason, then accepted or given up


def test_out_of_domain_value_is_retried_with_the_error(server: Server, unit: Unit,
                                                       rules: dict[str, Rule],
                                                       tmp_path: Path) -> None:
    server.script = [Reply(answer({"factor": 3}), 200, 10), Reply(answer({"factor": 4}), 260, 8)]
    llm = filler(server, tmp_path / "cache")
    assert llm.propose(request(unit, rules["unroll"]), 1) == [{"factor": "4"}]
    assert len(server.requests) == 2
    follow = server.requests[1]["messages"]
    assert follow[2] == {"role": "assistant", "content": answer({"factor": 3})}
    assert "hole ?factor: 3 is not in {1, 2, 4, 8}" in follow[3]["content"]
    assert llm.answer_refusals == ["assignment 1: hole ?factor: 3 is not in {1, 2, 4, 8}"]
    assert llm.usage() == {"requests": 2, "cache_hits": 0, "prompt_tokens": 460,
                           "completion_tokens": 18, "refused_answers": 1}


def test_out_of_domain_values_give_up_after_the_limit(server: Server, unit: Unit,
                                                      rules: dict[str, Rule],
                                                      tmp_path: Path) -> None:
    server.script = [Reply(answer({"factor": 3})), Reply(answer({"factor": 32})),
                     Reply(answer({"factor": 4}))]
    llm = filler(server, tmp_path / "cache", max_retries=1)
    assert llm.propose(request(unit, rules["unroll"]), 1) == []
    assert len(server.requests) == 2  # one answer and one retry, the third never asked
    assert llm.last_reason.startswith("unroll: gave up after 2 refused answers from test-model")
    assert "32 is not in {1, 2, 4, 8}" in llm.last_reason
    assert llm.usage()["refused_answers"] == 2


@pytest.mark.parametrize("rule_name,value,why", [
    ("fma_coef", 'a + ({ asm volatile("trap;"); 0; })', "contains inline asm"),
    ("fma_coef", '__asm__("exit;")', "contains inline asm"),
    ("fma_coef", "a, x[i] + 1.0f, y[i]); y[0] = 0.0f; (void)(0",
     "does not parse as one CUDA expression"),
    ("fma_coef", "a); y[0] = 0.0f; (a", "does not parse as one CUDA expression"),
    ("fma_coef", "a, 2.0f", "does not parse as one CUDA expression"),  # one more argument
    ("fma_coef", "a // the rest of the line is gone", "does not parse as one CUDA expression"),
    ("fma_coef", "a\n#include <cstdio>", "contains a preprocessor line"),
    ("fma_coef", '_Pragma("unroll 1") a', "contains a pragma operator"),
    ("fma_coef", "*(float*)malloc(4)", "uses malloc, a host or allocation function"),
    ("prologue", "t *= 2.0f; } y[0] = 1.0f; {", "does not parse as CUDA statements"),
    ("prologue", "t *= 2.0f; }\n__global__ void evil() {", "does not parse as CUDA statements"),
    ("prologue", "t *= 2.0f; // swallows the line", "does not parse as CUDA statements"),
    ("prologue", "t *= 2.0f; \\", "contains a line continuation"),
    ("prologue", 'asm volatile("membar.gl;");', "contains inline asm"),
    ("prologue", "#include <stdlib.h>\nt = 0.0f;", "contains a preprocessor line"),
    ("prologue", 'printf("%f", t);', "uses printf"),
    ("prologue", "cudaMemcpy(y, x, 4, cudaMemcpyDefault);", "uses cudaMemcpy"),
    ("prologue", 'system("rm -rf /");', "uses system"),
    ("prologue", "float* p = new float[4]; delete[] p;", "uses new"),
])
def test_smuggled_code_is_refused(server: Server, unit: Unit, rules: dict[str, Rule],
                                  tmp_path: Path, rule_name: str, value: str, why: str) -> None:
    hole = next(iter(rules[rule_name].holes))
    server.script = [Reply(answer({hole: value}))]
    llm = filler(server, tmp_path / "cache", max_retries=0)
    assert llm.propose(request(unit, rules[rule_name]), 1) == []
    assert why in llm.last_reason, llm.last_reason
    assert llm.last_reason.startswith(f"{rule_name}: gave up after 1 refused answer from ")


def test_good_statements_are_accepted(server: Server, unit: Unit, rules: dict[str, Rule],
                                      tmp_path: Path) -> None:
    body = "if (t != t) {\n    t = 0.0f;  // no NaN\n}\nt = p.free + t;"  # p.free: a member
    server.script = [Reply(answer({"body": body}))]
    llm = filler(server, tmp_path / "cache")
    assert llm.propose(request(unit, rules["prologue"]), 1) == [{"body": body}]


@pytest.mark.parametrize("item,why", [
    ({"coef": "a", "factor": 4}, "unknown hole factor (the holes are coef)"),
    ({}, "no value for ?coef"),
    ({"coef": ["a"]}, 'hole ?coef: ["a"] is neither a string nor an integer'),
    ({"coef": True}, "hole ?coef: true is neither a string nor an integer"),
    ({"coef": "x" * 5000}, "longer than 4000 characters"),
])
def test_wrong_shape_is_refused(server: Server, unit: Unit, rules: dict[str, Rule],
                                tmp_path: Path, item: dict[str, Any], why: str) -> None:
    server.script = [Reply(answer(item))]
    llm = filler(server, tmp_path / "cache", max_retries=0)
    assert llm.propose(request(unit, rules["fma_coef"]), 1) == []
    assert why in llm.last_reason, llm.last_reason


def test_answer_that_is_not_json(server: Server, unit: Unit, rules: dict[str, Rule],
                                 tmp_path: Path) -> None:
    server.script = [Reply("Sure! I would unroll by 4."), Reply("{'factor': 4}")]
    llm = filler(server, tmp_path / "cache", max_retries=1)
    assert llm.propose(request(unit, rules["unroll"]), 1) == []
    assert "the answer is not JSON" in llm.last_reason
    assert "the answer is not JSON" in server.last_user_message()
    assert llm.usage()["refused_answers"] == 2


def test_json_in_prose_or_a_fence_is_read(server: Server, unit: Unit, rules: dict[str, Rule],
                                          tmp_path: Path) -> None:
    server.script = [Reply("Here you go:\n```json\n" + answer({"factor": 8}) + "\n```\n"),
                     Reply('Best: {"factor": 2} (then 1)'),
                     Reply('<think>for (;;) { s += x[j]; } is short</think>\nThe loop has 8 '
                           'trips {so}: ' + answer({"factor": 1}))]
    llm = filler(server, tmp_path / "cache")
    assert llm.propose(request(unit, rules["unroll"]), 1) == [{"factor": "8"}]
    history = [Trial({"factor": "8"}, True, 1.0)]
    assert llm.propose(request(unit, rules["unroll"], history), 1) == [{"factor": "2"}]
    history.append(Trial({"factor": "2"}, True, 1.0))
    assert llm.propose(request(unit, rules["unroll"], history), 1) == [{"factor": "1"}]


# --------------------------------------------------------------------------------------
# A server that fails


def test_server_that_times_out(server: Server, unit: Unit, rules: dict[str, Rule],
                               tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    server.script = [Sleep(10)]
    llm = filler(server, cache, timeout_s=0.3, max_retries=0)
    start = time.monotonic()
    assert llm.propose(request(unit, rules["unroll"]), 1) == []
    assert time.monotonic() - start < 3
    assert llm.last_reason.startswith("unroll: the LLM server did not answer within 0.3 s")
    assert len(server.requests) == 1
    assert cache_files(cache) == []  # no answer, nothing cached
    assert llm.usage()["requests"] == 1 and llm.usage()["prompt_tokens"] == 0


def test_server_that_fails_with_500(server: Server, unit: Unit, rules: dict[str, Rule],
                                    tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    server.script = [Status(500, "CUDA out of memory"), Status(500, "CUDA out of memory")]
    llm = filler(server, cache, max_retries=1)
    assert llm.propose(request(unit, rules["unroll"]), 1) == []
    assert llm.last_reason == "unroll: the LLM server failed: HTTP 500: CUDA out of memory"
    assert len(server.requests) == 2  # the client retried once
    assert cache_files(cache) == []


def test_server_that_refuses_json_schema_falls_back(server: Server, unit: Unit,
                                                    rules: dict[str, Rule],
                                                    tmp_path: Path) -> None:
    server.script = [Status(400, "response_format type json_schema is not supported"),
                     Reply(answer({"factor": 4})), Reply(answer({"factor": 2}))]
    llm = filler(server, tmp_path / "cache")
    assert llm.propose(request(unit, rules["unroll"]), 1) == [{"factor": "4"}]
    history = [Trial({"factor": "4"}, True, 1.0)]
    assert llm.propose(request(unit, rules["unroll"], history), 1) == [{"factor": "2"}]
    formats = [r.get("response_format", {}).get("type") for r in server.requests]
    assert formats == ["json_schema", "json_object", "json_object"]  # remembered
    assert llm.usage()["requests"] == 3
    # a re-run: the answers cached under json_object serve it, with no request at all
    rerun = filler(server, tmp_path / "cache")
    assert rerun.propose(request(unit, rules["unroll"]), 1) == [{"factor": "4"}]
    assert rerun.usage()["cache_hits"] == 1 and len(server.requests) == 3


def test_bad_request_that_is_not_about_the_format(server: Server, unit: Unit,
                                                  rules: dict[str, Rule], tmp_path: Path) -> None:
    server.script = [Status(400, "This model's maximum context length is 4096 tokens")]
    llm = filler(server, tmp_path / "cache")
    assert llm.propose(request(unit, rules["unroll"]), 1) == []
    assert llm.last_reason == ("unroll: the LLM server refused the request: HTTP 400: This model's "
                              "maximum context length is 4096 tokens")
    assert len(server.requests) == 1


# --------------------------------------------------------------------------------------
# Configuration


def test_configuration_errors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "KLC_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(KlcError, match="needs a model name: give --model or set KLC_LLM_MODEL"):
        LlmFiller(base_url="http://127.0.0.1:1/v1")
    with pytest.raises(KlcError, match="needs a server: set OPENAI_BASE_URL"):
        LlmFiller(model="m")
    with pytest.raises(KlcError, match="is not an http"):
        LlmFiller(model="m", base_url="127.0.0.1:8000")
    with pytest.raises(KlcError, match="timeout must be a positive number"):
        LlmFiller(model="m", base_url="http://127.0.0.1:1/v1", timeout_s=0)
    with pytest.raises(KlcError, match="retry limit must be a whole number"):
        LlmFiller(model="m", base_url="http://127.0.0.1:1/v1", max_retries=-1)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("KLC_LLM_MODEL", "from-env")
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path))
    llm = LlmFiller(model=None, base_url=None, api_key=None, cache_dir=None, timeout_s=60,
                    max_retries=3)
    assert (llm.name, llm.model, llm.base_url) == ("llm", "from-env", "http://127.0.0.1:1/v1")
    assert llm.cache_dir == tmp_path / "llm"


def test_unreachable_server(monkeypatch: pytest.MonkeyPatch, unit: Unit, rules: dict[str, Rule],
                            tmp_path: Path) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    import socket

    with socket.socket() as s:  # a port that nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = LlmFiller(model="m", base_url=f"http://127.0.0.1:{port}/v1", api_key="k",
                    cache_dir=tmp_path, timeout_s=2, max_retries=0)
    assert llm.propose(request(unit, rules["unroll"]), 1) == []
    assert llm.last_reason.startswith(f"unroll: cannot reach the LLM server at http://127.0.0.1:{port}/v1")


# --------------------------------------------------------------------------------------
# The hole value checks the filler relies on (klc.rules, shared with --hole)


def test_hole_value_checks() -> None:
    expr, stmts, ident = HoleDecl("e", "expr"), HoleDecl("s", "stmts"), HoleDecl("i", "ident")
    assert expr.validate('p->free + q.open + f("malloc")') == 'p->free + q.open + f("malloc")'
    assert expr.validate("(a, b)") == "(a, b)"  # a comma inside parentheses is one expression
    assert stmts.validate("x = 1; /* note */") == "x = 1; /* note */"
    assert stmts.validate("x = 1; // note\ny = 2;") == "x = 1; // note\ny = 2;"
    for decl, value, why in [(expr, "a, b", "one CUDA expression"),
                             (expr, "std::free(p)", "uses free"),
                             (expr, "cudaGetLastError()", "uses cudaGetLastError"),
                             (stmts, "x = 1; // note", "does not parse as CUDA statements"),
                             (stmts, "x = 1; \\\ny = 2;", "line continuation"),
                             (ident, "malloc", "a host function's name")]:
        with pytest.raises(KlcError, match=why):
            decl.validate(value)


# --------------------------------------------------------------------------------------
# The whole skill in the prompt: `rewrite within` blocks

ROOT = Path(__file__).resolve().parents[2]
XENT = ROOT / "bench" / "transfer" / "cross_entropy_padded.cu"
SIGMOID = ROOT / "bench" / "examples" / "sigmoid.cu"

WITHIN_HEAD = ("  inside $$$BODY, each piece of code that matches this (and that no earlier "
               "within block rewrote):\n")
SUM_ANCHOR = """\
      for (int $C = 0; $C < $N; $C++) {
          $$$PRE;
          $ACC += $E;
      }
"""
SUM_REPLACE = """\
    is replaced with:
      for (int $C = ?lane; $C < $N; $C += 32) {
          $$$PRE;
          $ACC += $E;
      }
      for (int offset = 16; offset > 0; offset >>= 1) {
          $ACC += __shfl_xor_sync(0xffffffffu, $ACC, offset);
      }
"""


def test_prompt_renders_within_blocks(server: Server, tmp_path: Path) -> None:
    from klc.cuda.parse import read_source
    from klc.pipeline import spec_of
    from klc.rule import RuleSet, default_skill_dirs

    rule = next(r for r in RuleSet.load(default_skill_dirs()).rules
                if r.name == "thread_per_row_to_warp_per_row")
    xent = parse_bytes(read_source(XENT), str(XENT))
    spec = spec_of(xent)
    sites = find_sites(xent, [rule], None, spec)  # (the prompt does not need an ok site)
    site = next((s for s in sites if s.ok), sites[0])
    server.script = [Reply(answer({"lane": "lane"}))]
    llm = filler(server, tmp_path / "cache")
    assert llm.propose(FillRequest(rule, site, xent, spec), 1) == [{"lane": "lane"}]
    text = server.last_user_message()
    rewrite = text.split("The rewrite (holes are written ?name):\n", 1)[1].split("\n\n")[0]
    # the rule's own replace, each within block with its anchor, guard and replacement, in
    # the order written, then the launch change; nothing rendered as None
    assert rewrite.startswith("  replace the matched code with:\n"
                              "    const int $R = (blockIdx.x * blockDim.x + threadIdx.x) / 32;\n"
                              "    const int ?lane = threadIdx.x % 32;\n")
    from klc.rule.guard import guard_text

    sub = next(sr for e in rule.edits for sr in e.subrules()
               if "$ACC += $E;" in sr.anchor and "$C = 0" in sr.anchor)
    assert sub.guard is not None
    within_sum = (WITHIN_HEAD + SUM_ANCHOR + f"    where {guard_text(sub.guard)}\n"
                  + SUM_REPLACE)
    assert within_sum in rewrite + "\n"
    assert rewrite.count("  inside $$$BODY, each piece of code that matches this") \
        == sum(1 for e in rule.edits if e.kind == "within")
    assert rewrite.endswith("\n  launch: grid.x *= 32")
    assert "None" not in rewrite
    # the blocks come in the order written (the first that matches a piece rewrites it)
    assert rewrite.index("$A1 += $E1;") < rewrite.index(within_sum)


# --------------------------------------------------------------------------------------
# Timeout and retries from the command line


def _llm_env(monkeypatch: pytest.MonkeyPatch, server: Server, tmp_path: Path) -> None:
    import klc.gate

    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("KLC_LLM_MODEL", "test-model")
    monkeypatch.setenv("KLC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # the batch: no GPU workers
    monkeypatch.setattr(klc.gate, "gpu_status", lambda: (None, "no GPU (test)"))


def test_optimize_llm_timeout_from_the_command_line(
        server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from klc.cli import main

    _llm_env(monkeypatch, server, tmp_path)
    server.script = [Sleep(10)] * 4  # each site with holes asks once
    start = time.monotonic()
    rc = main(["optimize", str(SIGMOID), "--filler", "llm", "--llm-timeout", "0.3",
               "--llm-retries", "0", "--json"])
    assert rc == 1 and time.monotonic() - start < 8
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any("the LLM server did not answer within 0.3 s" in n and "0 retries" in n
               for n in notes), notes
    assert set(_asks(server).values()) == {1}  # no request was sent twice


def _asks(server: Server) -> dict[str, int]:
    """How many times each distinct request was sent."""
    from collections import Counter

    return dict(Counter(json.dumps(r["messages"]) for r in server.requests))


def test_optimize_llm_retries_from_the_command_line(
        server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from klc.cli import main

    _llm_env(monkeypatch, server, tmp_path)
    server.script = [Status(503, "busy")] * 12
    rc = main(["optimize", str(SIGMOID), "--filler", "llm", "--llm-retries", "2", "--json"])
    assert rc == 1
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any("HTTP 503: busy" in n for n in notes), notes
    assert set(_asks(server).values()) == {3}  # each request, then 2 retries


def test_batch_optimize_takes_the_llm_options(
        server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from klc.cli import main

    _llm_env(monkeypatch, server, tmp_path)
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(SIGMOID, tree / "sigmoid.cu")
    server.script = [Sleep(10)] * 4
    report = tmp_path / "report.json"
    rc = main(["batch", str(tree), "--optimize", "--filler", "llm", "--model", "batch-model",
               "--llm-timeout", "0.3", "--llm-retries", "0", "-j", "1", "-q",
               "--report", str(report)])
    assert rc == 0
    doc = json.loads(report.read_text())["files"][0]["optimize"]
    assert any("did not answer within 0.3 s" in n for n in doc["notes"]), doc["notes"]
    assert set(_asks(server).values()) == {1}
    assert {r["model"] for r in server.requests} == {"batch-model"}


@pytest.mark.parametrize(("argv", "message"), [
    (["--llm-timeout", "0"], "argument --llm-timeout: '0': give the seconds one request"),
    (["--llm-timeout", "-3"], "a number above 0"),
    (["--llm-timeout", "nan"], "a number above 0"),
    (["--llm-timeout", "1e9"], "at most 86400"),
    (["--llm-timeout", "soon"], "'soon'"),
    (["--llm-retries", "-1"], "argument --llm-retries: '-1': give how many times"),
    (["--llm-retries", "1.5"], "a whole number from 0 to 100"),
    (["--llm-retries", "1000"], "a whole number from 0 to 100"),
    (["--llm-timeout", "5"], "--llm-timeout applies to --filler llm only"),
    (["--llm-retries", "1"], "--llm-retries applies to --filler llm only"),
])
@pytest.mark.parametrize("command", ["optimize", "batch"])
def test_bad_llm_options_exit_2(command: str, argv: list[str], message: str,
                                capsys: pytest.CaptureFixture[str]) -> None:
    from klc.cli import main

    args = [command, str(SIGMOID)] + (["--optimize"] if command == "batch" else []) + argv
    try:
        rc = main(args)
    except SystemExit as e:  # argparse's own refusal of a bad value
        rc = e.code  # type: ignore[assignment]
    assert rc == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_batch_llm_options_need_optimize(capsys: pytest.CaptureFixture[str]) -> None:
    from klc.cli import main

    assert main(["batch", str(SIGMOID), "--llm-timeout", "5"]) == 2
    assert "--llm-timeout is an --optimize option" in capsys.readouterr().err
