"""Dynamo's graph breaks from logs the user already has: a `TORCH_LOGS=graph_breaks` text log or a
`TORCH_TRACE` directory (structured JSON lines), as the same break records the live probe reports.

No torch here: this runs in the server (`graphmend import-log`, the import-log command) and in the
probe's child, which parses the `graph_breaks` log records Dynamo emits during the first call.

A break as Dynamo logs it (torch 2.13, `symbolic_convert.log_graph_break`):

    Graph break in user code at /path/m.py:4
    Graph Break Reason: Encountered graph break when attempting to trace CALL: ...
    <blank>
    Failed to trace builtin operator                       <- gb_type
      Explanation: Dynamo does not know how to trace ...
      Hint: ...
      Developer debug context: ...
     For more details about this graph break, please visit: .../gb/gb0059.html
    <blank>
    User code traceback:
      File "/path/c.py", line 3, in <module>
        f(x)
      File "/path/m.py", line 4, in helper
        print("helper", x.shape)

A repeat of the same break is logged as `Graph break (user stack suppressed due to duplicate graph
break) in user code at FILE:LINE` with the reason and no traceback. In a TORCH_TRACE file the same
text is the payload of the `dynamo_graph_break_reason` artifact (always with the traceback, then
the Python traceback of the exception, which is not user code).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Iterable, Optional

# --------------------------------------------------------------------------- shared helpers

RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(\w+?)_at_\d+$")
GB_LINK_RE = re.compile(r"/gb/gb(\d{4})\.html", re.IGNORECASE)
GB_ID_RE = re.compile(r"\bGB(\d{4})\b")
FRAME_RE = re.compile(r'^\s*File "(?P<file>.+)", line (?P<line>\d+), in (?P<function>.+?)\s*$')
HEADER_RE = re.compile(
    r"^Graph break (?:\(user stack suppressed due to duplicate graph break\) )?"
    r"in user code at (?P<loc>.+):(?P<line>\d+)\s*$")
# glog-style prefix torch's log formatter puts on every line (and an optional rank prefix).
GLOG_RE = re.compile(r"^(?:\[rank\d+\]:)?[VIWEDC]\d{4} [\d:.]+\s+\d+ \S+:\d+\] ")
ARTIFACT_TAG_RE = re.compile(r"^(?:\[[^\]]*\] )*?\[__(?P<art>\w+)\] ?")
_PRE = "Encountered graph break when attempting to trace"

_PROBE_DIR = os.path.dirname(os.path.abspath(__file__))


def real_function(name: Optional[str]) -> Optional[str]:
    """`torch_dynamo_resume_in_forward_at_42` -> `forward` (repeatedly, for nested resumes)."""
    if not name:
        return name
    while True:
        m = RESUME_RE.match(name)
        if not m:
            return name
        name = m.group(1)


def is_internal_file(path: str) -> bool:
    """torch's own files, this probe's files, frozen/synthetic frames: not user code."""
    if not path or path.startswith("<"):
        return True
    p = path.replace("\\", "/")
    if re.search(r"/(?:site|dist)-packages/torch/", p) or re.search(r"/torch/_(?:dynamo|inductor|"
                                                                     r"functorch|logging)/", p):
        return True
    try:
        if os.path.dirname(os.path.abspath(path)) == _PROBE_DIR:
            return True
    except (OSError, ValueError):
        pass
    return False


def in_workspace(path: Optional[str], workspace: Optional[str]) -> bool:
    """Under the workspace root and not an installed package (site-packages, a venv inside it)."""
    if not path or path.startswith("<"):
        return False
    p = path.replace("\\", "/")
    if "/site-packages/" in p or "/dist-packages/" in p:
        return False
    if not workspace:
        return not is_internal_file(path)
    try:
        root = os.path.realpath(workspace)
        real = os.path.realpath(path)
        return os.path.commonpath([root, real]) == root
    except (OSError, ValueError):
        return False


def collapse_stack(frames: Iterable[dict]) -> list[dict]:
    """Drop internal frames; map resume functions to the real function and merge each resume
    frame into the frame of the function it continues (as Dynamo's own log does)."""
    out: list[dict] = []
    for fr in frames:
        f = dict(fr)
        if is_internal_file(f.get("file") or ""):
            continue
        name = f.get("function")
        real = real_function(name)
        f["function"] = real
        if name != real and out and out[-1].get("function") == real and \
                out[-1].get("file") == f.get("file"):
            out[-1] = f
        else:
            out.append(f)
    return out


_GB_TYPE_TO_ID: Optional[dict] = None


def gb_id_for_type(gb_type: Optional[str]) -> Optional[str]:
    """The registry id of a Dynamo `gb_type` (graph_break_registry.json), or None."""
    global _GB_TYPE_TO_ID
    if not gb_type:
        return None
    if _GB_TYPE_TO_ID is None:
        table: dict = {}
        try:
            from graphmend.dynamo_registry import _registry
            for gid, entries in _registry().items():
                for e in entries or []:
                    t = (e.get("Gb_type") or "").strip()
                    if t and "{" not in t:
                        table.setdefault(t, gid)
        except Exception:  # the registry is a nicety, never a failure
            table = {}
        _GB_TYPE_TO_ID = table
    return _GB_TYPE_TO_ID.get(gb_type.strip())


RESUME_IN_TEXT_RE = re.compile(r"\btorch_dynamo_resume_in_(\w+?)_at_\d+\b")


def unresume_text(text: str) -> str:
    """Resume-function names inside a message -> the real function's name."""
    prev = None
    while prev != text:
        prev, text = text, RESUME_IN_TEXT_RE.sub(r"\1", text)
    return text


def summarize_reason(text: str) -> dict:
    """Reason text -> {"reason": one line, "gb_id", "gb_type", "detail": the full text}."""
    text = unresume_text((text or "").strip("\n"))
    lines = [ln.rstrip() for ln in text.splitlines()]
    gb_id = None
    m = GB_LINK_RE.search(text)
    if m:
        gb_id = "GB" + m.group(1)
    body = lines
    if body and body[0].startswith(_PRE):
        body = body[1:]
    note = None
    while body and not body[0].strip():
        body.pop(0)
    if body and body[0].startswith("Failed to handle graph break gracefully"):
        # A break Dynamo could not resume from (e.g. in a loop): the frame runs eagerly. The
        # break itself is the first one quoted; what followed is after "*** While handling".
        note = body[0].strip()
        rest = body[1:]
        for i, ln in enumerate(rest):
            if ln.strip().startswith("*** While handling"):
                tail = [x.strip() for x in rest[i + 1:] if x.strip()]
                if tail:
                    note += f" (then: {tail[0]})"
                rest = rest[:i]
                break
        body = rest
        while body and not body[0].strip():
            body.pop(0)
    gb_type = body[0].strip() if body else None
    explanation = None
    for ln in body[1:]:
        s = ln.strip()
        if s.startswith("Explanation:"):
            explanation = s[len("Explanation:"):].strip()
            break
    if gb_id is None:
        gb_id = gb_id_for_type(gb_type)
    if gb_type and explanation:
        reason = f"{gb_type}: {explanation}"
    else:
        reason = gb_type or (lines[0].strip() if lines else "")
    return {"reason": reason, "gb_id": gb_id, "gb_type": gb_type, "detail": text.strip(),
            "note": note}


def parse_break_text(text: str, workspace: Optional[str] = None) -> Optional[dict]:
    """One Dynamo graph-break message (log record or trace payload) -> a break record, or None."""
    lines = text.splitlines()
    start = None
    for i, ln in enumerate(lines):
        if HEADER_RE.match(ln.strip()):
            start = i
            break
    if start is None:
        return None
    hm = HEADER_RE.match(lines[start].strip())
    file, line = hm.group("loc"), int(hm.group("line"))
    reason_lines: list[str] = []
    stack: list[dict] = []
    mode = "head"
    for ln in lines[start + 1:]:
        s = ln.strip()
        if mode == "head":
            if ln.startswith("Graph Break Reason:"):
                reason_lines.append(ln[len("Graph Break Reason:"):].strip())
                mode = "reason"
            continue
        if mode == "reason":
            if s == "User code traceback:":
                mode = "stack"
                continue
            if s.startswith("Stack variable source attribution:"):
                mode = "attrib"
                continue
            if HEADER_RE.match(s):
                break
            reason_lines.append(ln)
            continue
        if mode == "attrib":
            if s == "User code traceback:":
                mode = "stack"
            continue
        if mode == "stack":
            if s.startswith("Traceback (most recent call last)") or HEADER_RE.match(s) or \
                    s.startswith("========== most recent"):
                break
            fm = FRAME_RE.match(ln)
            if fm:
                stack.append({"file": fm.group("file"), "line": int(fm.group("line")),
                              "function": fm.group("function")})
    info = summarize_reason("\n".join(reason_lines))
    user_stack = collapse_stack(stack)
    function = None
    if user_stack and user_stack[-1]["file"] == file and user_stack[-1]["line"] == line:
        function = user_stack[-1]["function"]
    elif user_stack:
        function = user_stack[-1]["function"]
    return make_record(info, file, line, function, user_stack, workspace)


def relocate(path: Optional[str], workspace: Optional[str]) -> Optional[str]:
    """A path from a log written elsewhere (another checkout, a container) that does not exist
    here: the workspace file with the longest matching tail of its path, if any."""
    if not path or not workspace or path.startswith("<") or os.path.exists(path):
        return path
    parts = path.replace("\\", "/").split("/")
    for i in range(1, len(parts)):
        candidate = os.path.join(workspace, *parts[i:])
        if os.path.isfile(candidate):
            return candidate
    return path


def make_record(info: dict, file: Optional[str], line: Optional[int], function: Optional[str],
                user_stack: list[dict], workspace: Optional[str]) -> dict:
    file = relocate(file, workspace)
    user_stack = [{**fr, "file": relocate(fr.get("file"), workspace)} for fr in user_stack]
    ws = None
    for fr in reversed(user_stack):
        if in_workspace(fr.get("file"), workspace):
            ws = {"file": fr["file"], "line": fr["line"], "function": fr.get("function")}
            break
    if ws is None and in_workspace(file, workspace):
        ws = {"file": file, "line": line, "function": function}
    return {
        "reason": info.get("reason") or "",
        "gb_id": info.get("gb_id"),
        "gb_type": info.get("gb_type"),
        "detail": info.get("detail") or "",
        "file": os.path.abspath(file) if file and not file.startswith("<") else file,
        "line": line,
        "function": real_function(function),
        "user_stack": user_stack,
        "in_workspace": in_workspace(file, workspace),
        "workspace_frame": ws,
        "note": info.get("note"),
        "count": 1,
    }


def dedupe(records: Iterable[dict]) -> list[dict]:
    """Merge repeats by (file, line, reason), in first-seen order; keep the richest stack and
    count the occurrences."""
    out: dict = {}
    for r in records:
        key = (r.get("file"), r.get("line"), r.get("reason"))
        if key not in out:
            out[key] = dict(r)
            continue
        cur = out[key]
        cur["count"] = cur.get("count", 1) + r.get("count", 1)
        if len(r.get("user_stack") or []) > len(cur.get("user_stack") or []):
            for k in ("user_stack", "workspace_frame", "function"):
                if r.get(k):
                    cur[k] = r[k]
        for k in ("gb_id", "gb_type", "function", "note"):
            if not cur.get(k) and r.get(k):
                cur[k] = r[k]
    return list(out.values())


# --------------------------------------------------------------------------- TORCH_LOGS text log


def _text_log_messages(text: str) -> tuple[list[str], list[str]]:
    """Group a TORCH_LOGS log into artifact messages: (graph_breaks messages, recompiles messages)."""
    breaks: list[list[str]] = []
    recompiles: list[list[str]] = []
    cur: Optional[list[str]] = None
    cur_art = None
    saw_prefix = False
    for raw in text.splitlines():
        g = GLOG_RE.match(raw)
        if not g:
            continue
        saw_prefix = True
        rest = raw[g.end():]
        a = ARTIFACT_TAG_RE.match(rest)
        if not a:
            cur = None
            continue
        art, body = a.group("art"), rest[a.end():]
        if art == "graph_breaks":
            if HEADER_RE.match(body.strip()):
                cur = [body]
                cur_art = art
                breaks.append(cur)
            elif cur is not None and cur_art == art:
                cur.append(body)
        elif art == "recompiles":
            if body.startswith("Recompiling function"):
                cur = [body]
                cur_art = art
                recompiles.append(cur)
            elif cur is not None and cur_art == art:
                cur.append(body)
        else:
            cur = None
    if not saw_prefix:  # a log without torch's line prefix (e.g. reformatted): split on headers
        cur = None
        for raw in text.splitlines():
            if HEADER_RE.match(raw.strip()):
                cur = [raw.strip()]
                breaks.append(cur)
            elif cur is not None:
                cur.append(raw)
        recompiles = [[ln] for ln in text.splitlines() if "Recompiling function" in ln]
    return ["\n".join(b) for b in breaks], ["\n".join(r) for r in recompiles]


# --------------------------------------------------------------------------- TORCH_TRACE


STRUCT_RE = re.compile(r"^(?:\[rank\d+\]:)?[VIWEDC]\d{4} [\d:.]+\s+\d+ \S+:\d+\] (?P<json>\{.*\})\s*$")


def _trace_entries(text: str):
    """(metadata dict, payload str|None) for each structured record of a TORCH_TRACE file."""
    meta = None
    payload: list[str] = []
    for raw in text.splitlines():
        if raw.startswith("\t"):
            if meta is not None:
                payload.append(raw[1:])
            continue
        m = STRUCT_RE.match(raw)
        if not m:
            continue
        if meta is not None:
            yield meta, ("\n".join(payload) if payload else None)
        try:
            meta = json.loads(m.group("json"))
        except ValueError:
            meta = None
        payload = []
    if meta is not None:
        yield meta, ("\n".join(payload) if payload else None)


def _looks_like_trace(text: str) -> bool:
    for raw in text.splitlines()[:50]:
        m = STRUCT_RE.match(raw)
        if m and m.group("json").startswith(('{"str"', '{"dynamo_start"', '{"chromium_event"',
                                              '{"artifact"', '{"compilation_metrics"')):
            return True
    return False


def _read_trace_text(text: str, workspace: Optional[str], acc: dict) -> None:
    for meta, payload in _trace_entries(text):
        art = meta.get("artifact")
        if isinstance(art, dict) and art.get("name") == "dynamo_graph_break_reason" and payload:
            rec = parse_break_text(payload, workspace)
            if rec is not None:
                acc["records"].append(rec)
        elif "dynamo_output_graph" in meta:
            acc["graphs"] += 1
        elif "dynamo_start" in meta:
            if (meta.get("frame_compile_id") or 0) > 0 and (meta.get("attempt") or 0) == 0:
                acc["recompiles"] += 1
            acc["frames"] += 1


# --------------------------------------------------------------------------- entry points


def read_log(path: str, workspace: Optional[str] = None) -> dict:
    """Everything a log tells: {"ok", "error", "source", "kind": "torch_logs"|"torch_trace",
    "graphs": int|None, "breaks": int, "recompiles": int|None, "break_list": [...]}.

    `graphs` is known only from a TORCH_TRACE (one `dynamo_output_graph` per graph); `breaks` is
    the number of graph-break events logged (repeats included); `break_list` is deduplicated by
    (file, line, reason)."""
    p = Path(path)
    result = {"ok": False, "error": None, "source": str(p), "kind": None, "graphs": None,
              "breaks": 0, "recompiles": None, "break_list": []}
    try:
        if p.is_dir():
            files = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in (".log", ".txt", ""))
            if not files:
                raise ValueError(f"{p}: no trace files (expected TORCH_TRACE's *.log files)")
            texts = [f.read_text(encoding="utf-8", errors="replace") for f in files]
            kind = "torch_trace"
        elif p.is_file():
            texts = [p.read_text(encoding="utf-8", errors="replace")]
            kind = "torch_trace" if _looks_like_trace(texts[0]) else "torch_logs"
        else:
            raise FileNotFoundError(f"{p}: no such file or directory")
    except (OSError, ValueError) as e:
        result["error"] = {"kind": "bad-log", "message": str(e), "traceback": None,
                           "file": str(p), "line": None}
        return result
    result["kind"] = kind
    records: list[dict] = []
    if kind == "torch_trace":
        acc = {"records": records, "graphs": 0, "recompiles": 0, "frames": 0}
        for t in texts:
            _read_trace_text(t, workspace, acc)
        result["graphs"] = acc["graphs"]
        result["recompiles"] = acc["recompiles"]
    else:
        n_recompiles = 0
        for t in texts:
            msgs, recs = _text_log_messages(t)
            n_recompiles += len(recs)
            for msg in msgs:
                rec = parse_break_text(msg, workspace)
                if rec is not None:
                    records.append(rec)
        result["recompiles"] = n_recompiles
    result["breaks"] = len(records)
    result["break_list"] = dedupe(records)
    result["ok"] = True
    if not records:
        result["note"] = ("no graph-break records: either nothing broke, or the log was not made "
                          "with TORCH_LOGS=graph_breaks / TORCH_TRACE=DIR")
    return result


def parse_log(path: str, workspace: Optional[str] = None) -> list[dict]:
    """The break records of a TORCH_LOGS=graph_breaks log or a TORCH_TRACE directory/file.
    Raises OSError (FileNotFoundError) or ValueError when `path` cannot be read as a log
    (`read_log` reports that in its result instead)."""
    r = read_log(path, workspace)
    if r.get("error"):
        msg = r["error"]["message"]
        if not os.path.exists(path):
            raise FileNotFoundError(msg)
        raise ValueError(msg)
    return r["break_list"]
