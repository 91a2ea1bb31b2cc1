"""The LLM filler: asks an OpenAI-compatible chat server for hole values, and trusts none.

The house rule is that the LLM only fills holes. It is shown the skill's card, the rewrite
with its holes, the matched site inside its function, the hole declarations and what was tried
before at this site, and it answers JSON: up to ``k`` alternative assignments (hole name ->
value) under ``"assignments"``, shaped by a JSON schema built from the holes. Every
assignment is then checked as untrusted input: exactly the declared holes, each value through
:meth:`klc.rule.HoleDecl.validate` (type, domain; for ``expr``/``stmts`` holes: parses as one
expression / as statements that stay inside their block, no ``asm``, no preprocessor, no host
or allocation calls). An answer with nothing usable is sent back with the reasons and asked
again, ``max_retries`` times at most; then the filler gives up on that request and says why in
``last_reason``. ``propose`` never raises.

Any OpenAI-compatible server works (vLLM, llama.cpp, Ollama, the hosted API): the answer is
asked for with ``response_format`` ``json_schema``; a server that refuses that mode is asked
with ``json_object`` and then with no ``response_format`` (remembered for the rest of the run),
and an answer wrapped in prose or a code fence is still read. Answers are cached on disk by a
hash of the model, the messages and the format, so a re-run spends no tokens.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klc.errors import KlcError
from klc.fsutil import atomic_write
from klc.measurements import measured
from klc.rule.fresh import declared_idents

if TYPE_CHECKING:
    from klc.fill import FillRequest, Trial
    from klc.rule import HoleDecl, Rule

# response_format modes, from the most to the least constrained
_FORMATS = ("json_schema", "json_object", "text")
_MAX_VALUE_CHARS = 4000  # a hole value is a small piece of code
_MAX_CONTEXT_CHARS = 12000  # the function text shown around the match
_CONTEXT_LINES = 40  # lines each side of the match when the function is longer than that
_BEGIN, _END = "/*>>> KLC MATCH BEGIN >>>*/", "/*<<< KLC MATCH END <<<*/"
# Words in a 400/422 error that say the server refused the response_format, not the prompt.
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema", "format",
                 "grammar", "guided", "structured")

_SYSTEM = """\
You fill the holes of a CUDA rewrite rule. A deterministic tool has already matched the rule, \
checked its conditions and will write the code; you choose only the values of its holes \
(written ?name in the rewrite). Every value is checked and every candidate kernel is compiled, \
verified against the original and timed, so propose values that are correct first and fast \
second.

Answer with JSON only: {"assignments": [{"<hole>": <value>, ...}, ...]}, each assignment \
giving every hole exactly once, different assignments, the most promising first.
- int holes: an integer from the declared set or range; enum holes: one of the listed words.
- ident holes: a C identifier that is not a keyword.
- expr holes: exactly one CUDA expression (no top-level comma, no trailing comment).
- stmts holes: complete CUDA statements with balanced braces, staying inside their block.
Never: inline asm, #include or any other preprocessor line, _Pragma, host or allocation \
functions (printf, malloc, free, new, cudaMalloc, cudaMemcpy, system, fopen, ...), code \
outside the holes."""


class LlmFiller:
    """Hole values from an OpenAI-compatible chat server (see the module doc).

    ``model`` falls back to ``$KLC_LLM_MODEL``, ``base_url`` to ``$OPENAI_BASE_URL``,
    ``api_key`` to ``$OPENAI_API_KEY`` (a local server needs none), ``cache_dir`` to
    ``$KLC_CACHE_DIR/llm`` or ``~/.cache/klc/llm``. ``timeout_s`` bounds one HTTP request;
    ``max_retries`` bounds both the client's retries of a failed request (timeouts,
    connection errors, 429 and 5xx answers) and the re-asks after a refused answer.
    """

    name = "llm"

    def __init__(self, *, model: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, cache_dir: str | Path | None = None,
                 timeout_s: float = 60, max_retries: int = 3):
        self.model = model or os.environ.get("KLC_LLM_MODEL", "").strip()
        if not self.model:
            raise KlcError("the LLM filler needs a model name: give --model or set "
                           "KLC_LLM_MODEL (the name the server knows, e.g. "
                           "Qwen/Qwen2.5-Coder-32B-Instruct)")
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL", "")).strip()
        if not self.base_url:
            raise KlcError("the LLM filler needs a server: set OPENAI_BASE_URL to an "
                           "OpenAI-compatible endpoint (e.g. http://127.0.0.1:8000/v1 for "
                           "vLLM, http://127.0.0.1:11434/v1 for Ollama, "
                           "https://api.openai.com/v1 for the hosted API)")
        if not re.match(r"https?://[^/\s]+", self.base_url):
            raise KlcError(f"OPENAI_BASE_URL {self.base_url!r} is not an http(s) URL")
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) \
                or not math.isfinite(timeout_s) or timeout_s <= 0:
            raise KlcError(f"the LLM request timeout must be a positive number of seconds, "
                           f"not {timeout_s!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise KlcError(f"the LLM retry limit must be a whole number >= 0, not "
                           f"{max_retries!r}")
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        key = api_key or os.environ.get("OPENAI_API_KEY") or "none"  # local servers need none
        if cache_dir is not None:
            self.cache_dir = Path(cache_dir)
        else:
            root = os.environ.get("KLC_CACHE_DIR") or os.path.join(
                os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "klc")
            self.cache_dir = Path(root) / "llm"
        from openai import OpenAI

        self._client = OpenAI(base_url=self.base_url, api_key=key, timeout=self.timeout_s,
                              max_retries=max_retries)
        self._format = 0  # index into _FORMATS: lowered when the server refuses a mode
        self._usage = {"requests": 0, "cache_hits": 0, "prompt_tokens": 0,
                       "completion_tokens": 0, "refused_answers": 0}
        self.last_reason = ""  # why the last propose() returned nothing ("" when it did not)
        self.answer_refusals: list[str] = []  # why each refused answer of the last propose() was
        self.cache_warning = ""  # a cache entry that could not be written, if any

    # ----------------------------------------------------------------------------------
    # The Filler protocol

    def usage(self) -> dict[str, int]:
        """Requests sent, answers served from the cache, tokens spent (cached answers spend
        none), and answers refused by validation."""
        return dict(self._usage)

    def propose(self, req: FillRequest, k: int) -> list[dict[str, str]]:
        """Up to ``k`` validated assignments not in ``req.history``; [] with ``last_reason``
        saying why when there are none (``rule: why``). Never raises."""
        self.last_reason = ""
        self.answer_refusals = []
        try:
            got = self._propose(req, k)
        except Exception as e:  # the contract: a filler reports, it does not raise
            self.last_reason = f"the LLM filler failed: {type(e).__name__}: {e}"
            got = []
        if self.last_reason:
            self.last_reason = f"{req.rule.name}: {self.last_reason}"
        return got

    # ----------------------------------------------------------------------------------

    def _propose(self, req: FillRequest, k: int) -> list[dict[str, str]]:
        rule = req.rule
        tried = {_key(_normalised(rule, t.values)) for t in req.history}
        if not rule.holes:
            if _key({}) in tried:
                self.last_reason = "the rule has no holes and was tried already"
                return []
            return [{}]
        if k < 1:
            self.last_reason = "nothing asked for (k < 1)"
            return []
        left = _untried_count(rule, tried)
        if left == 0:
            self.last_reason = "every assignment of the holes has been tried at this site"
            return []
        n = k if left is None else min(k, left)
        messages = [{"role": "system", "content": _SYSTEM},
                    {"role": "user", "content": prompt(req, n)}]
        while True:
            content = self._ask(messages, rule, n)
            if content is None:
                return []  # self.last_reason says why
            good, problems = _read_answer(content, rule, tried, n)
            if good:
                return good
            self._usage["refused_answers"] += 1
            self.answer_refusals.append("; ".join(problems))
            if len(self.answer_refusals) > self.max_retries:
                count = len(self.answer_refusals)
                self.last_reason = (f"gave up after {count} refused answer"
                                    f"{'s' if count > 1 else ''} from {self.model}: "
                                    f"{self.answer_refusals[-1]}")
                return []
            messages = [*messages, {"role": "assistant", "content": content},
                        {"role": "user", "content": _follow_up(problems, n)}]

    def _ask(self, messages: list[dict[str, str]], rule: Rule, n: int) -> str | None:
        """The server's answer text to these messages (from the cache when it is there), or
        None with ``last_reason`` set when the request failed."""
        import openai

        schema = answer_schema(rule, n)
        # an answer cached under this format or a weaker one (a server that refused a format
        # in an earlier run refuses it again): no request at all
        for level in range(self._format, len(_FORMATS)):
            response_format = _response_format(_FORMATS[level], schema)
            cached = self._cache_get(_cache_key(self.model, messages, response_format),
                                     messages, response_format)
            if cached is not None:
                self._format = level
                self._usage["cache_hits"] += 1
                return cached
        while True:
            response_format = _response_format(_FORMATS[self._format], schema)
            key = _cache_key(self.model, messages, response_format)
            self._usage["requests"] += 1
            extra: dict[str, Any] = {"response_format": response_format} \
                if response_format is not None else {}
            try:
                resp = self._client.chat.completions.create(
                    model=self.model, messages=messages, **extra)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as e:
                if self._format + 1 < len(_FORMATS) and _refuses_format(e):
                    self._format += 1  # remembered: this server does not take that mode
                    continue
                self.last_reason = f"the LLM server refused the request: {_error_text(e)}"
                return None
            except openai.APITimeoutError:
                self.last_reason = (f"the LLM server did not answer within {self.timeout_s:g} s "
                                    f"({self.base_url}, {self.max_retries} retries)")
                return None
            except openai.APIConnectionError as e:
                self.last_reason = f"cannot reach the LLM server at {self.base_url}: {e}"
                return None
            except openai.APIStatusError as e:
                self.last_reason = f"the LLM server failed: {_error_text(e)}"
                return None
            except openai.OpenAIError as e:
                self.last_reason = f"the LLM request failed: {e}"
                return None
            usage = getattr(resp, "usage", None)
            prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
            completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
            self._usage["prompt_tokens"] += prompt_tokens
            self._usage["completion_tokens"] += completion_tokens
            choices = getattr(resp, "choices", None) or []
            message = choices[0].message if choices else None
            content = (getattr(message, "content", None) or "") if message else ""
            self._cache_put(key, {"model": self.model, "messages": messages,
                                  "response_format": response_format, "content": content,
                                  "usage": {"prompt_tokens": prompt_tokens,
                                            "completion_tokens": completion_tokens}})
            return content

    # ----------------------------------------------------------------------------------
    # The cache: one JSON file per request, named by its hash

    def _cache_path(self, key: str) -> Path:
        return self.cache_dir / key[:2] / f"{key}.json"

    def _cache_get(self, key: str, messages: list[dict[str, str]],
                   response_format: dict[str, Any] | None) -> str | None:
        try:
            entry = json.loads(self._cache_path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # absent or unreadable: ask again
        if not isinstance(entry, dict) or entry.get("model") != self.model \
                or entry.get("messages") != messages \
                or entry.get("response_format") != response_format \
                or not isinstance(entry.get("content"), str):
            return None
        return entry["content"]

    def _cache_put(self, key: str, entry: dict[str, Any]) -> None:
        path = self._cache_path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, json.dumps(entry, indent=1, ensure_ascii=False).encode())
        except (OSError, KlcError) as e:
            self.cache_warning = f"{path}: cannot cache the LLM answer: {e}"


# --------------------------------------------------------------------------------------
# The prompt


def prompt(req: FillRequest, n: int) -> str:
    """The user message: the skill, the rewrite, the site, the holes, the history, the ask."""
    rule = req.rule
    card = rule.card
    skill = [f"Skill {rule.name}: {rule.description}".rstrip(": ")]
    for label, value in (("Intent", card.intent), ("Where", card.where),
                         ("Conditions", card.conditions)):
        if value:
            skill.append(f"{label}: {value}")
    skill += [f"Measured effect: {e}" for e in measured(rule).effect]
    skill += [f"Pitfall: {p}" for p in card.pitfalls]
    if len(rule.anchors) > 1:  # anchor any: the site matched one of them
        anchor = ("The rule's anchors (the site matched one of these; $X are "
                  "metavariables):\n" + "\n  -- or --\n".join(_indent(a)
                                                              for a in rule.anchors))
    else:
        anchor = ("The rule's anchor (what it matched; $X are metavariables):\n"
                  + _indent(rule.anchor))
    parts = ["\n".join(skill), anchor]
    parts.append("The rewrite (holes are written ?name):\n" + "\n".join(_edit_words(rule)))
    parts.append(_site_text(req))
    declared = declared_idents(rule)
    parts.append("Holes to fill:\n" + "\n".join(_hole_words(h, h.name in declared)
                                                 for h in rule.holes.values()))
    if req.history:
        lines = [f"  {i}. {json.dumps(t.values, sort_keys=True)}: {_trial_words(t)}"
                 for i, t in enumerate(req.history, 1)]
        parts.append("Tried before at this site (do not propose these again):\n"
                     + "\n".join(lines))
    if req.baseline_ms is not None:
        parts.append(f"The kernel now takes {req.baseline_ms:.4g} ms.")
    example = {h: _example(d) for h, d in rule.holes.items()}
    parts.append(f"Give up to {n} different assignment{'s' if n > 1 else ''}, most promising "
                 f"first, as JSON: {json.dumps({'assignments': [example]})}")
    return "\n\n".join(parts)


def _indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + ln if ln.strip() else ln for ln in text.split("\n"))


def _edit_words(rule: Rule) -> list[str]:
    return [line for e in rule.edits for line in e.describe()]


def _site_text(req: FillRequest) -> str:
    m = req.site.match
    unit = m.unit
    line, col = unit.position(m.start)
    end_line = unit.position(max(m.start, m.end - 1))[0]
    fn = m.function
    src = unit.source
    marked = (src[:m.start].decode("utf-8", "replace") + _BEGIN
              + src[m.start:m.end].decode("utf-8", "replace") + _END
              + src[m.end:].decode("utf-8", "replace")).split("\n")
    # lines (1-based, inclusive): the enclosing function, else a few lines around the match;
    # a long function is cut to the lines around the match
    lo, hi = (unit.position(fn.start)[0], unit.position(max(fn.start, fn.end - 1))[0]) \
        if fn is not None else (line - 10, end_line + 10)
    if sum(len(ln) + 1 for ln in marked[lo - 1:hi]) > _MAX_CONTEXT_CHARS:
        lo, hi = line - _CONTEXT_LINES, end_line + _CONTEXT_LINES
    lo, hi = max(1, lo), min(len(marked), hi)
    shown = "\n".join(marked[lo - 1:hi])
    if len(shown) > _MAX_CONTEXT_CHARS:
        shown = shown[:_MAX_CONTEXT_CHARS] + "\n/* ... cut ... */"
    where = f"{unit.path}:{line}:{col}"
    owner = f", in the {fn.kind} function {fn.name}" if fn is not None else ""
    text = (f"The site: {where}{owner}. The matched code lies between {_BEGIN} and {_END} "
            f"(lines {lo}-{hi} of the file):\n```cuda\n{shown}\n```")
    bound = [f"  ${name} = {_short(b.text)}" for name, b in sorted(m.bindings.items())]
    if bound:
        text += "\nBound at this site:\n" + "\n".join(bound)
    launch = _launch_words(req.spec)
    if launch:
        text += "\n" + launch
    return text


def _short(text: str, limit: int = 300) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[:limit] + " ..."


def _launch_words(spec: Any) -> str:
    if spec is None:
        return ""
    grid, block = getattr(spec, "grid", None), getattr(spec, "block", None)
    sizes = getattr(spec, "sizes", None)
    words = []
    if grid:
        words.append(f"grid ({', '.join(map(str, grid))})")
    if block:
        words.append(f"block ({', '.join(map(str, block))})")
    if sizes:
        words.append("sizes " + ", ".join(f"{k} = {v}" for k, v in sizes.items()))
    return "Launch (from the kernel's spec): " + "; ".join(words) if words else ""


def _hole_words(h: HoleDecl, declared: bool = False) -> str:
    if h.type == "int":
        what = f"int, one of {h.domain_text()}" if h.values is not None \
            else f"int in {h.domain_text()}"
    elif h.type == "enum":
        what = f"enum, one of {h.domain_text()}"
    elif h.type == "ident":
        what = "ident: a C identifier (not a keyword)"
        if declared:  # klc.rule.fresh: the site refuses a name the function already uses
            what += ("; the rewrite declares a variable of this name, so it must be a name "
                     "the function does not use yet")
    elif h.type == "expr":
        what = "expr: exactly one CUDA expression"
    else:
        what = "stmts: CUDA statements, complete, with balanced braces"
    default = f"; default {json.dumps(h.default)}" if h.default is not None else ""
    return f"  ?{h.name}: {what}{default}"


def _trial_words(t: Trial) -> str:
    if t.ok:
        return f"passed, {t.median_ms:.4g} ms" if t.median_ms is not None else "passed"
    return f"failed: {_short(t.reason, 400)}" if t.reason else "failed"


def _example(h: HoleDecl) -> Any:
    if h.default is not None:
        return h.default
    domain = h.domain()
    if domain:
        return domain[0]
    return {"ident": "name", "expr": "<expression>", "stmts": "<statements>"}.get(h.type, "")


def _follow_up(problems: list[str], n: int) -> str:
    listed = "\n".join(f"- {p}" for p in problems)
    return (f"Your answer was refused:\n{listed}\nAnswer again with JSON only: "
            f'{{"assignments": [...]}}, up to {n} different assignment'
            f"{'s' if n > 1 else ''} that fix these problems.")


# --------------------------------------------------------------------------------------
# The schema and the formats


def answer_schema(rule: Rule, n: int) -> dict[str, Any]:
    """The JSON schema of an answer: ``{"assignments": [...]}``, 1..n objects with exactly
    the rule's holes."""
    props = {name: _hole_schema(h) for name, h in rule.holes.items()}
    item = {"type": "object", "properties": props, "required": list(props),
            "additionalProperties": False}
    return {"type": "object",
            "properties": {"assignments": {"type": "array", "items": item, "minItems": 1,
                                           "maxItems": n}},
            "required": ["assignments"], "additionalProperties": False}


def _hole_schema(h: HoleDecl) -> dict[str, Any]:
    if h.type == "int":
        if h.values is not None:
            return {"type": "integer", "enum": list(h.values)}
        return {"type": "integer", "minimum": h.lo, "maximum": h.hi}
    if h.type == "enum":
        return {"type": "string", "enum": [str(v) for v in h.values or ()]}
    if h.type == "ident":
        return {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}
    if h.type == "expr":
        return {"type": "string", "description": "exactly one CUDA expression"}
    return {"type": "string", "description": "CUDA statements with balanced braces"}


def _response_format(mode: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    if mode == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": "klc_hole_values", "schema": schema, "strict": True}}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def _refuses_format(e: Exception) -> bool:
    text = _error_text(e).lower()
    return any(w in text for w in _FORMAT_WORDS)


def _error_text(e: Exception) -> str:
    status = getattr(e, "status_code", None)
    body = getattr(e, "body", None)
    message = ""
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = str(inner.get("message", "")) if isinstance(inner, dict) else str(inner)
    message = message or getattr(e, "message", "") or str(e)
    return f"HTTP {status}: {_short(message)}" if status else _short(message)


def _cache_key(model: str, messages: list[dict[str, str]],
               response_format: dict[str, Any] | None) -> str:
    blob = json.dumps({"model": model, "messages": messages,
                       "response_format": response_format}, sort_keys=True,
                      ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


# --------------------------------------------------------------------------------------
# Reading an answer: untrusted input


def _read_answer(content: str, rule: Rule, tried: set[str],
                 n: int) -> tuple[list[dict[str, str]], list[str]]:
    """The valid, new assignments of an answer (at most n), and the problems of the rest."""
    try:
        data = _json_of(content)
    except ValueError as e:
        return [], [f"the answer is not JSON ({e}): {_short(content, 200)!r}"]
    if isinstance(data, dict) and "assignments" in data:
        items = data["assignments"]
    elif isinstance(data, list):
        items = data
    elif isinstance(data, dict):
        items = [data]  # one bare assignment
    else:
        items = None
    if not isinstance(items, list) or not items:
        return [], ['the answer holds no assignments: expected {"assignments": [{...}, ...]}']
    good: list[dict[str, str]] = []
    problems: list[str] = []
    seen = set(tried)
    for i, item in enumerate(items, 1):
        values, problem = _checked(item, rule)
        if problem:
            problems.append(f"assignment {i}: {problem}")
            continue
        key = _key(values)
        if key in seen:
            what = "was tried before at this site" if key in tried else "repeats an earlier one"
            problems.append(f"assignment {i}: {json.dumps(values, sort_keys=True)} {what}")
            continue
        seen.add(key)
        if len(good) < n:
            good.append(values)
    return good, problems


def _json_of(content: str) -> Any:
    """The JSON of an answer; also one in a ```json fence or after a line of prose."""
    text = re.sub(r"<think>.*?</think>", "", content, flags=re.S).strip()  # reasoning models
    if not text:
        raise ValueError("the answer is empty")
    try:
        return json.loads(text)
    except ValueError as e:
        first = e
    except RecursionError:
        raise ValueError("nested too deeply") from None
    fence = re.search(r"```(?:json)?\s*\n(.*?)```", text, re.S)
    candidates = [fence.group(1)] if fence else []
    candidates += [text[m.start():] for m in re.finditer(r'\{\s*"assignments"', text)]
    start = text.find("{")
    if start >= 0:
        candidates.append(text[start:])
    for c in candidates:
        try:
            return json.JSONDecoder().raw_decode(c.strip())[0]
        except (ValueError, RecursionError):
            continue
    raise ValueError(str(first)) from None


def _checked(item: Any, rule: Rule) -> tuple[dict[str, str], str]:
    """One assignment checked against the holes: (values as text, '') or ({}, why not)."""
    if not isinstance(item, dict):
        return {}, f"not an object of hole values: {_short(json.dumps(item), 100)}"
    declared = set(rule.holes)
    extra = sorted(set(map(str, item)) - declared)
    missing = sorted(declared - set(map(str, item)))
    if extra:
        return {}, (f"unknown hole{'s' if len(extra) > 1 else ''} "
                    f"{', '.join(extra)} (the holes are {', '.join(sorted(declared))})")
    if missing:
        return {}, f"no value for {', '.join('?' + m for m in missing)}"
    values: dict[str, str] = {}
    for name, decl in rule.holes.items():
        raw = item[name]
        if isinstance(raw, bool) or not isinstance(raw, str | int):
            return {}, (f"hole ?{name}: {_short(json.dumps(raw), 100)} is neither a string "
                        "nor an integer")
        text = str(raw)
        if len(text) > _MAX_VALUE_CHARS:
            return {}, f"hole ?{name}: the value is longer than {_MAX_VALUE_CHARS} characters"
        try:
            values[name] = decl.validate(text)
        except KlcError as e:
            return {}, str(e)
    return values, ""


def _normalised(rule: Rule, values: dict[str, str]) -> dict[str, str]:
    """History values as validate() would give them (so " 4" and "4" are one trial)."""
    out = {}
    for name, v in values.items():
        decl = rule.holes.get(name)
        try:
            out[name] = decl.validate(v) if decl is not None else str(v).strip()
        except KlcError:
            out[name] = str(v).strip()
    return out


def _key(values: dict[str, str]) -> str:
    return json.dumps(values, sort_keys=True)


def _untried_count(rule: Rule, tried: set[str]) -> int | None:
    """How many assignments are left when every hole's domain is finite, else None."""
    total = 1
    for h in rule.holes.values():
        size = h.size()
        if size is None:
            return None
        total *= size
    in_domain = sum(1 for key in tried if not _checked(json.loads(key), rule)[1])
    return max(0, total - in_domain)
