#!/usr/bin/env python3
"""A scripted stand-in for the OpenAI Responses API, for driving the real Codex CLI offline.

Standard library only. Serves on 127.0.0.1 (port 0 by default: the OS picks one):

- `POST /v1/responses` (also `/responses`): what Codex 0.171.0 calls for every model turn
  with a provider `wire_api = "responses"`. Codex sends `"stream": true`; the answer is
  SSE: `response.created`, per output item `response.output_item.added` (then
  `response.output_text.delta` chunks for a message, `response.function_call_arguments.delta`
  for a call) and `response.output_item.done`, then `response.completed` with `usage`
  (Codex retries a stream that closes without it). A non-streaming request gets one JSON
  `response` object.
- `GET /pages/<name>`: a scripted web page (`pages`, text/html): what the model "fetches"
  with its shell tool (`curl`), so an outside page's text reaches the session as a tool
  output.
- `GET /v1/models`: an empty list (Codex 0.171.0 does not call it for a custom provider).
- anything else: `{}` with 200 (logged, so an unexpected call shows).

Every request is logged, body and all, as one JSON line in the log file (`{"seq", "ts",
"method", "path", "headers", "kind", "body", "reply"}`; `kind` is `main` (a request
carrying tools: a turn of the agent loop), `side` (one without tools: compaction, a
title; answered with a short text), `page`, `models` or `other`).

**What Codex sends** (0.171.0). `input` is a list of items: `message`s (`role` developer,
user or assistant, `content` a list of `{"type": "input_text"|"output_text", "text"}`),
`function_call` (`name`, `namespace` for an MCP tool, `arguments` a JSON string,
`call_id`) and `function_call_output` (`call_id`, `output`: a string, or a list of
content items). Codex's own shell tool is the function `exec_command` (`{"cmd": ...}`);
an MCP server's tools come in a `{"type": "namespace", "name": "mcp__<server>"}` entry
of `tools`, and the model calls one with a `function_call` of that `namespace` and the
tool's `name` (hooks see `tool_name` `mcp__<server>__<tool>`, the shell as `Bash`).
Hook output: SessionStart's, UserPromptSubmit's and Pre/PostToolUse's
`additionalContext` each arrive as a `role: "developer"` message holding exactly that
text (SessionStart's before the prompt, after `<environment_context>`; UserPromptSubmit's
right after the prompt; PostToolUse's between the call and its output). A Stop hook's
block reason arrives as a `role: "user"` message `<hook_prompt hook_run_id="stop:...">
REASON</hook_prompt>`, in the same turn. Compaction is a request without tools.

**The script.** A list of scenes, each `{"match": "...", "steps": [...], "takeaway":
{...}}`. The scene is picked by the newest prompt of the request (the newest `user`
message that is neither Codex's own `<environment_context>`-style wrapper nor a
`<hook_prompt>`): the first scene whose `match` occurs in it. The step is the number of
this fake's responses with calls since that prompt (each call's `call_id` carries the
number of the response that made it, so a resumed session's history counts right). A
step is `{"text": "...", "calls": [call, ...]}`, a call one of

    {"shell": "git log --oneline -3"}                       # exec_command {"cmd": ...}
    {"mcp": "amber", "tool": "recall", "arguments": {...}}  # namespace mcp__amber
    {"tool": "NAME", "arguments": {...}}                    # any other function

With calls Codex runs them and asks again; without, the turn ends. Past the last step
the answer is the text "Done.".

**A Stop hook's block.** When the newest user message is a `<hook_prompt>` (a Stop hook
blocked), the model complies: its first answer calls `mcp__amber__remember` with the
scene's `takeaway` (`{"content", "type"}`; the scene of the prompt before the block),
with `session_id` when the reason names one (`` `session_id` "…" ``, as Amber's
checkpoint asks), plus, when the reason also names served memory ids (`memory
(1a2b3c4d` or `[… id <32 hex>]`), `mcp__amber__outcome` on the first id with
`success`; its next answer is text.

Placeholders in a call's strings: `$SESSION_ID` (Codex's session id, from the request's
`session-id` header), `$PORT` (this server's port), `$FIRST_BRIEFED_ID` (the first memory
id listed in a developer message of the request).

Run alone: `python3 fake_responses.py --log requests.jsonl [--script script.json]`
prints `PORT <n>` and serves until killed; the script file (a JSON list of scenes, or
`{"scenes": [...], "pages": {...}}`) is read again whenever it changes. From Python:
`FakeResponses(log_path, script=[...], pages={...}).start()`, `.port`, `.stop()`.
"""

import argparse
import http.server
import itertools
import json
import os
import re
import sys
import threading
import time
import uuid

MODEL_FALLBACK = "gpt-5.1-codex"
STOP_MARK = "<hook_prompt"
# User messages Codex writes itself (not the person's prompt).
CODEX_WRAPPERS = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<turn_aborted>",
                  "<user_shell_command>", "<subagent_notification>", STOP_MARK)
COMPACT_ASK = "CONTEXT CHECKPOINT COMPACTION"
CALL_ID = re.compile(r"^call_r(\d+)_")
# A memory id as Amber lists one: a briefing pointer line `- 1a2b3c4d · fact · …`, or a
# verbatim line `- [fact 2026-12-06, id <32 hex>] …`.
POINTER_ID = re.compile(r"(?m)^- ([0-9a-f]{8}) · ")
VERBATIM_ID = re.compile(r"\[[a-z]+ [0-9-]+, id ([0-9a-f]{32})\]")


def _id(prefix):
    return prefix + "_" + uuid.uuid4().hex[:24]


def rough_tokens(obj):
    return max(1, len(json.dumps(obj)) // 4)


def item_text(item):
    """The text of a `message` input item (its text parts joined), '' for other items."""
    if not isinstance(item, dict) or item.get("type", "message") != "message":
        return ""
    c = item.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "\n".join(p.get("text", "") for p in c if isinstance(p, dict))
    return ""


def output_text(item):
    """The text of a `function_call_output` item."""
    o = item.get("output")
    if isinstance(o, str):
        return o
    if isinstance(o, list):
        return "\n".join(p.get("text", "") for p in o if isinstance(p, dict))
    if isinstance(o, dict):
        return o.get("content") if isinstance(o.get("content"), str) else json.dumps(o)
    return ""


def input_items(body):
    return [i for i in (body or {}).get("input") or [] if isinstance(i, dict)]


def messages(body, role=None):
    """(index, role, text) of the request's message items, optionally of one role."""
    out = []
    for n, it in enumerate(input_items(body)):
        if it.get("type", "message") == "message" and (role is None or it.get("role") == role):
            out.append((n, it.get("role"), item_text(it)))
    return out


def request_strings(body):
    """Every string of a request the model reads: `instructions`, message texts, tool
    outputs and the arguments of earlier calls."""
    out = []
    if isinstance((body or {}).get("instructions"), str):
        out.append(body["instructions"])
    for it in input_items(body):
        t = it.get("type", "message")
        if t == "message":
            out.append(item_text(it))
        elif t == "function_call_output":
            out.append(output_text(it))
        elif t == "function_call":
            out.append(str(it.get("arguments", "")))
    return out


def is_prompt(role, text):
    return role == "user" and text.strip() and not text.lstrip().startswith(CODEX_WRAPPERS)


def is_stop_feedback(role, text):
    return role == "user" and text.lstrip().startswith(STOP_MARK)


def find_scene(scenes, text):
    for scene in scenes or []:
        if scene.get("match") and scene["match"] in text:
            return scene
    return None


def calls_made(body, since):
    """The function calls of the request after input index `since`: (item, response number)."""
    out = []
    for n, it in enumerate(input_items(body)):
        if n > since and it.get("type") == "function_call":
            m = CALL_ID.match(str(it.get("call_id", "")))
            out.append((it, int(m.group(1)) if m else None))
    return out


def first_briefed_id(body):
    for _, _, text in messages(body, "developer"):
        m = POINTER_ID.search(text) or VERBATIM_ID.search(text)
        if m:
            return m.group(1)
    return "00000000"


def _fill(value, ctx):
    if isinstance(value, dict):
        return {k: _fill(v, ctx) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, ctx) for v in value]
    if isinstance(value, str):
        for k, v in ctx.items():
            if k in value:
                value = value.replace(k, v() if callable(v) else v)
    return value


def plan_reply(body, scenes, ctx):
    """What to answer a main request with: (calls, text, why)."""
    msgs = messages(body)
    if msgs and msgs[-1][1] == "user" and COMPACT_ASK in msgs[-1][2]:
        return [], "Scripted summary: routine checks of the project; nothing is pending.", {"why": "compaction"}
    anchor = None
    for n, role, text in reversed(msgs):
        if is_stop_feedback(role, text) or is_prompt(role, text):
            anchor = (n, role, text)
            break
    if anchor is None:
        return [], "Done.", {"why": "no prompt"}
    n, role, text = anchor
    step = len({r for _, r in calls_made(body, n)})
    if is_stop_feedback(role, text):
        scene = None
        for m, r, t in reversed(msgs):
            if m < n and is_prompt(r, t):
                scene = find_scene(scenes, t)
                break
        takeaway = (scene or {}).get("takeaway") or {
            "content": "Nothing new was learned in this session beyond what is filed.",
            "type": "fact",
        }
        why = {"why": "stop feedback", "step": step, "scene": (scene or {}).get("match")}
        if step > 0:
            return [], "Takeaway filed.", why
        # As the reason asks: the takeaway with the session id it names, when it names one.
        sid = re.search(r'`session_id` "([^"]+)"', text)
        args = dict(takeaway, **({"session_id": sid.group(1)} if sid else {}))
        calls = [{"mcp": "amber", "tool": "remember", "arguments": args}]
        ids = re.findall(r"memor(?:y|ies) \(([0-9a-f]{8})", text) or VERBATIM_ID.findall(text) or POINTER_ID.findall(text)
        if ids and sid:
            calls.append({"mcp": "amber", "tool": "outcome",
                          "arguments": {"memory_id": ids[0], "result": "success", "session_id": sid.group(1)}})
        return calls, "Filing the takeaway.", why
    scene = find_scene(scenes, text)
    if scene is None:
        return [], "Done.", {"why": "no scene", "prompt": text[:200]}
    steps = scene.get("steps") or []
    why = {"why": "scene", "scene": scene["match"], "step": step}
    if step >= len(steps):
        return [], "Done.", dict(why, why="past the last step")
    s = steps[step]
    return [_fill(c, ctx) for c in s.get("calls") or []], s.get("text"), why


def call_item(spec, resp_no, k):
    if "shell" in spec:
        name, ns, args = "exec_command", None, {"cmd": spec["shell"]}
        if spec.get("workdir"):
            args["workdir"] = spec["workdir"]
    elif "mcp" in spec:
        name, ns, args = spec["tool"], f"mcp__{spec['mcp']}", spec.get("arguments") or {}
    else:
        name, ns, args = spec["tool"], spec.get("namespace"), spec.get("arguments") or {}
    item = {
        "type": "function_call",
        "id": _id("fc"),
        "call_id": f"call_r{resp_no}_{k}_{uuid.uuid4().hex[:12]}",
        "name": name,
        "arguments": json.dumps(args),
        "status": "completed",
    }
    if ns:
        item["namespace"] = ns
    return item


def message_item(text):
    return {
        "type": "message",
        "id": _id("msg"),
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


class FakeResponses:
    def __init__(self, log_path, script=None, pages=None, script_path=None, host="127.0.0.1", port=0):
        self.log_path = log_path
        self.script = list(script or [])
        self.pages = dict(pages or {})
        self.script_path = script_path
        self._script_mtime = None
        self._lock = threading.Lock()
        self._seq = itertools.count(1)
        self._resp = itertools.count(1)
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet
                pass

            def _read_body(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    return json.loads(raw) if raw else None
                except ValueError:
                    return {"_raw": raw.decode("utf-8", "replace")}

            def _send(self, code, data, ctype):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("x-request-id", _id("req"))
                self.end_headers()
                self.wfile.write(data)

            def _json(self, code, obj):
                self._send(code, json.dumps(obj).encode(), "application/json")

            def do_HEAD(self):
                outer._log(self, "other", None, None)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self):
                path = self.path.split("?")[0].rstrip("/")
                if path.startswith("/pages/"):
                    name = path[len("/pages/"):]
                    page = outer._current()[1].get(name)
                    outer._log(self, "page", None, {"page": name, "found": page is not None})
                    if page is None:
                        self._send(404, b"not found\n", "text/plain")
                    else:
                        self._send(200, page.encode(), "text/html; charset=utf-8")
                    return
                if path.endswith("/models"):
                    reply = {"object": "list", "data": [], "models": []}
                    outer._log(self, "models", None, reply)
                    self._json(200, reply)
                    return
                outer._log(self, "other", None, {})
                self._json(200, {})

            def do_POST(self):
                body = self._read_body()
                path = self.path.split("?")[0].rstrip("/")
                if not path.endswith("/responses"):
                    outer._log(self, "other", body, {})
                    self._json(200, {})
                    return
                body = body if isinstance(body, dict) else {}
                sid = self.headers.get("session-id") or self.headers.get("session_id") or ""
                resp_no = next(outer._resp)
                if body.get("tools"):
                    ctx = {"$SESSION_ID": sid, "$PORT": str(outer.port), "$FIRST_BRIEFED_ID": lambda: first_briefed_id(body)}
                    calls, text, why = plan_reply(body, outer._current()[0], ctx)
                    kind = "compact" if why.get("why") == "compaction" else "main"
                else:
                    calls, text, why = [], "Scripted summary: nothing is pending.", {"why": "side"}
                    kind = "side"
                items = ([message_item(text)] if text else []) + [call_item(c, resp_no, k) for k, c in enumerate(calls)]
                if not items:
                    items = [message_item("Done.")]
                outer._log(self, kind, body, dict(why, output=items))
                resp_id = _id("resp")
                usage = {
                    "input_tokens": rough_tokens(body),
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": rough_tokens(items),
                    "output_tokens_details": {"reasoning_tokens": 0},
                }
                usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
                model = body.get("model") or MODEL_FALLBACK
                if body.get("stream", True):
                    self._stream(resp_id, model, items, usage)
                else:
                    self._json(200, {"id": resp_id, "object": "response", "status": "completed", "model": model,
                                     "output": items, "usage": usage})

            def _stream(self, resp_id, model, items, usage):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.send_header("x-request-id", _id("req"))
                self.end_headers()
                self.close_connection = True
                seq = itertools.count()

                def ev(name, data):
                    data = dict(data, type=name, sequence_number=next(seq))
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

                base = {"id": resp_id, "object": "response", "model": model, "output": []}
                ev("response.created", {"response": dict(base, status="in_progress")})
                ev("response.in_progress", {"response": dict(base, status="in_progress")})
                for i, item in enumerate(items):
                    if item["type"] == "message":
                        part = item["content"][0]
                        ev("response.output_item.added", {"output_index": i, "item": dict(item, status="in_progress", content=[])})
                        ev("response.content_part.added", {"output_index": i, "item_id": item["id"], "content_index": 0,
                                                          "part": {"type": "output_text", "text": "", "annotations": []}})
                        for k in range(0, len(part["text"]), 40):
                            ev("response.output_text.delta", {"output_index": i, "item_id": item["id"], "content_index": 0,
                                                             "delta": part["text"][k:k + 40]})
                        ev("response.output_text.done", {"output_index": i, "item_id": item["id"], "content_index": 0,
                                                        "text": part["text"]})
                        ev("response.content_part.done", {"output_index": i, "item_id": item["id"], "content_index": 0,
                                                         "part": part})
                    else:
                        ev("response.output_item.added", {"output_index": i, "item": dict(item, status="in_progress", arguments="")})
                        ev("response.function_call_arguments.delta", {"output_index": i, "item_id": item["id"],
                                                                      "delta": item["arguments"]})
                        ev("response.function_call_arguments.done", {"output_index": i, "item_id": item["id"],
                                                                     "arguments": item["arguments"]})
                    ev("response.output_item.done", {"output_index": i, "item": item})
                ev("response.completed", {"response": dict(base, status="completed", output=items, usage=usage)})
                self.wfile.flush()

        self.httpd = http.server.ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = None

    def _current(self):
        """(scenes, pages), the script file read again when it changed."""
        if self.script_path:
            try:
                m = os.path.getmtime(self.script_path)
                if m != self._script_mtime:
                    with open(self.script_path) as f:
                        data = json.load(f)
                    if isinstance(data, dict):
                        self.script, self.pages = list(data.get("scenes") or []), dict(data.get("pages") or {})
                    else:
                        self.script = list(data)
                    self._script_mtime = m
            except (OSError, ValueError):
                pass
        return self.script, self.pages

    def _log(self, handler, kind, body, reply):
        keep = ("session-id", "thread-id", "x-codex-turn-metadata", "originator", "authorization", "user-agent")
        rec = {
            "seq": next(self._seq),
            "ts": time.time(),
            "method": handler.command,
            "path": handler.path,
            "headers": {k.lower(): v for k, v in handler.headers.items() if k.lower() in keep},
            "kind": kind,
            "body": body,
            "reply": reply,
        }
        line = json.dumps(rec) + "\n"
        with self._lock:
            with open(self.log_path, "a") as f:
                f.write(line)

    def start(self):
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def read_log(path):
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", required=True)
    ap.add_argument("--script")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    srv = FakeResponses(a.log, script_path=a.script, port=a.port)
    print(f"PORT {srv.port}", flush=True)
    try:
        srv.httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
