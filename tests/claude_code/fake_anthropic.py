#!/usr/bin/env python3
"""A scripted stand-in for the Anthropic Messages API, for driving real Claude Code.

Standard library only. Serves on 127.0.0.1 (port 0 by default: the OS picks one):

- `POST /v1/messages`, streaming (SSE: `message_start`, `content_block_start`/`_delta`/
  `_stop` per block, text as `text_delta` and a tool call's input as `input_json_delta`,
  `message_delta` with the stop reason, `message_stop`) and not streaming (one JSON
  message);
- `POST /v1/messages/count_tokens` (`{"input_tokens": n}`, a rough count);
- anything else: `{}` with 200 for GET/HEAD/POST (logged, so an unexpected call shows).

Every request is logged, body and all, as one JSON line in the log file
(`{"seq", "ts", "method", "path", "kind", "body", "reply"}`; `kind` is `main`, `side` or
`count_tokens`/`other`).

**Main conversation or side request.** Claude Code's main loop sends the tool
definitions (`tools` non-empty); a side request (a title, a topic check, a quota probe)
sends none and gets a plain short text. Claude Code 2.1.197 in `-p` mode with
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 sends no side request at all: only `HEAD /`
(a connectivity check) and the main loop. The `/compact` request carries the tools too;
it is told apart by its last user message (it asks for "a detailed summary of the
conversation so far") and answered with a short `<summary>` (logged as `compact`).

**The script.** A list of scenes, each `{"match": "...", "steps": [...], "takeaway":
{...}}`. The scene is picked by the newest user prompt in the request (the newest user
message that carries text and no `tool_result`): the first scene whose `match` occurs in
its text. The step is the number of assistant messages after that prompt (0 for the
first answer, 1 after the first tool results came back, ...). A step is `{"text": "...",
"tools": [{"name": "Bash", "input": {...}}, ...]}`; with tools the stop reason is
`tool_use`, else `end_turn`. Past the last step the answer is the text "Done.".

**Stop hook feedback.** When the newest prompt carries a Stop hook's text (`Stop hook
feedback:`, how Claude Code sends a block reason back as a user turn, or `Stop hook
additional context:`, how it sends a Stop hook's `additionalContext`, both possibly in a
<system-reminder>), the model complies: the first
answer calls `mcp__amber__remember` with the scene's `takeaway` (`{"content", "type"}`,
the scene being the one of the prompt before the feedback), plus, when the reason lists
served memory ids and a session id, `mcp__amber__outcome` on the first of them with
`success`; the next answer is text.

**`$FIRST_BRIEFED_ID`** in a tool input (a whole value, or inside a command) stands for
the first pointer id (8 hex digits) of a briefing in the request: the model `get`s a
memory it was briefed on.

Where Claude Code (2.1.197) puts what hooks add: SessionStart's and UserPromptSubmit's
`additionalContext` arrive in a `role: "system"` message inside `messages` (after the
prompt), as `SessionStart hook additional context: <text>` /
`UserPromptSubmit hook additional context: <text>`, not in the top-level `system`.

Run alone: `python3 fake_anthropic.py --log requests.jsonl [--script script.json]`
prints `PORT <n>` and serves until killed; the script file is read again whenever it
changes. From Python: `FakeAnthropic(log_path).start()`, set `.script`, `.stop()`.
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

MODEL_FALLBACK = "claude-sonnet-4-5"


def _blocks(content):
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def message_text(msg):
    """The text blocks of a message, joined."""
    return "\n".join(b.get("text", "") for b in _blocks(msg.get("content")) if b.get("type") == "text")


def is_prompt(msg):
    """A user message that carries text and no tool result: a prompt (or hook feedback)."""
    if msg.get("role") != "user":
        return False
    blocks = _blocks(msg.get("content"))
    if any(b.get("type") == "tool_result" for b in blocks):
        return False
    return any(b.get("type") == "text" and b.get("text", "").strip() for b in blocks)


def prompt_text(msg):
    """A prompt's own text: its text blocks without Claude Code's <system-reminder> ones."""
    parts = []
    for b in _blocks(msg.get("content")):
        if b.get("type") != "text":
            continue
        t = b.get("text", "")
        if t.lstrip().startswith("<system-reminder>"):
            continue
        parts.append(t)
    return "\n".join(parts).strip()


def is_main(body):
    return bool(body.get("tools"))


STOP_FEEDBACK = "Stop hook feedback:"
# How a Stop hook's text reaches the model: its block reason as a user turn starting
# `Stop hook feedback:` (2.1.197; inside a <system-reminder> in 2.1.332), its
# `additionalContext` as `Stop hook additional context:` in a <system-reminder>.
STOP_MARKS = (STOP_FEEDBACK, "Stop hook additional context:")


def stop_text(msg):
    """The whole text of a user message that carries a Stop hook's text (reminders
    included), else None."""
    if msg.get("role") != "user" or any(b.get("type") == "tool_result" for b in _blocks(msg.get("content"))):
        return None
    text = message_text(msg)
    return text if any(m in text for m in STOP_MARKS) else None


def find_scene(script, text):
    for scene in script or []:
        if scene.get("match") and scene["match"] in text:
            return scene
    return None


COMPACT_ASK = "create a detailed summary of the conversation so far"
POINTER_ID = re.compile(r"(?m)^- ([0-9a-f]{8}) · ")


def is_compaction(body):
    """Claude Code's /compact (and auto-compact) request: the last user message asks for a
    summary, text only (it still carries the tools). A `system` message (a reminder) may
    follow it."""
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    return bool(users) and COMPACT_ASK in message_text(users[-1])


def request_strings(body):
    """Every string of a request the model reads: system blocks, message text, tool results."""
    out = []
    sysp = body.get("system")
    if isinstance(sysp, str):
        out.append(sysp)
    elif isinstance(sysp, list):
        out.extend(b.get("text", "") for b in sysp if isinstance(b, dict))
    for m in body.get("messages") or []:
        for b in _blocks(m.get("content")):
            if b.get("type") == "text":
                out.append(b.get("text", ""))
            elif b.get("type") == "tool_result":
                c = b.get("content")
                if isinstance(c, str):
                    out.append(c)
                elif isinstance(c, list):
                    out.extend(x.get("text", "") for x in c if isinstance(x, dict))
    return out


def _fill(value, body):
    """`$FIRST_BRIEFED_ID` in a tool input: the first pointer id (8 hex digits) of a
    briefing the request holds (what a model reading its briefing would pass to `get`)."""
    if isinstance(value, dict):
        return {k: _fill(v, body) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, body) for v in value]
    if isinstance(value, str) and "$FIRST_BRIEFED_ID" in value:
        first = "00000000"
        for s in request_strings(body):
            if "hook additional context" in s:
                m = POINTER_ID.search(s)
                if m:
                    first = m.group(1)
                    break
        return value.replace("$FIRST_BRIEFED_ID", first)
    return value


def plan_reply(body, script):
    """The content blocks to answer a main-conversation request with."""
    messages = body.get("messages") or []
    if is_compaction(body):
        return (
            [
                {
                    "type": "text",
                    "text": "<analysis>Scripted.</analysis>\n<summary>1. Primary Request and Intent: the user is "
                    "doing routine checks of the project; nothing is pending.</summary>",
                }
            ],
            {"why": "compaction"},
        )
    idx = None
    for i in range(len(messages) - 1, -1, -1):
        if stop_text(messages[i]) or (is_prompt(messages[i]) and prompt_text(messages[i])):
            idx = i
            break
    if idx is None:
        return [{"type": "text", "text": "Done."}], {"why": "no prompt"}
    text = stop_text(messages[idx]) or prompt_text(messages[idx])
    step = sum(1 for m in messages[idx + 1 :] if m.get("role") == "assistant")
    if stop_text(messages[idx]):
        # The scene is the one of the prompt before the feedback.
        scene = None
        for j in range(idx - 1, -1, -1):
            if is_prompt(messages[j]) and prompt_text(messages[j]) and not stop_text(messages[j]):
                scene = find_scene(script, prompt_text(messages[j]))
                if scene:
                    break
        takeaway = (scene or {}).get("takeaway") or {
            "content": "Nothing new was learned in this session beyond what is filed.",
            "type": "fact",
        }
        if step == 0:
            tools = [{"name": "mcp__amber__remember", "input": dict(takeaway)}]
            ids = re.findall(r"memor(?:y|ies) \(([0-9a-f]{8})", text)
            sid = re.search(r'`session_id` "([^"]+)"', text)
            if ids and sid:
                tools.append(
                    {
                        "name": "mcp__amber__outcome",
                        "input": {"memory_id": ids[0], "result": "success", "session_id": sid.group(1)},
                    }
                )
            return (
                [{"type": "text", "text": "Filing the takeaway."}] + [_tool_block(t) for t in tools],
                {"why": "stop feedback", "step": 0, "scene": (scene or {}).get("match")},
            )
        return [{"type": "text", "text": "Takeaway filed."}], {"why": "stop feedback", "step": step}
    scene = find_scene(script, text)
    if scene is None:
        return [{"type": "text", "text": "Done."}], {"why": "no scene", "prompt": text[:200]}
    steps = scene.get("steps") or []
    if step >= len(steps):
        return [{"type": "text", "text": "Done."}], {"why": "past the last step", "scene": scene["match"]}
    s = steps[step]
    blocks = []
    if s.get("text"):
        blocks.append({"type": "text", "text": s["text"]})
    for t in s.get("tools") or []:
        blocks.append(_tool_block(dict(t, input=_fill(t.get("input", {}), body))))
    if not blocks:
        blocks.append({"type": "text", "text": "Done."})
    return blocks, {"why": "scene", "scene": scene["match"], "step": step}


def _tool_block(t):
    return {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": t["name"], "input": t.get("input", {})}


def rough_tokens(body):
    return max(1, len(json.dumps(body)) // 4)


class FakeAnthropic:
    def __init__(self, log_path, script=None, script_path=None, host="127.0.0.1", port=0):
        self.log_path = log_path
        self.script = script or []
        self.script_path = script_path
        self._script_mtime = None
        self._lock = threading.Lock()
        self._seq = itertools.count(1)
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

            def _json(self, code, obj):
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("request-id", "req_" + uuid.uuid4().hex[:20])
                self.end_headers()
                self.wfile.write(data)

            def do_HEAD(self):
                outer._log(self.command, self.path, "other", None, None)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self):
                outer._log(self.command, self.path, "other", None, {})
                self._json(200, {})

            def do_POST(self):
                body = self._read_body()
                path = self.path.split("?")[0]
                if path.endswith("/v1/messages/count_tokens"):
                    n = rough_tokens(body)
                    outer._log(self.command, self.path, "count_tokens", body, {"input_tokens": n})
                    self._json(200, {"input_tokens": n})
                    return
                if not path.endswith("/v1/messages"):
                    outer._log(self.command, self.path, "other", body, {})
                    self._json(200, {})
                    return
                body = body or {}
                if is_main(body):
                    blocks, why = plan_reply(body, outer._current_script())
                    kind = "compact" if why.get("why") == "compaction" else "main"
                else:
                    blocks, why = [{"type": "text", "text": outer._side_text(body)}], {"why": "side"}
                    kind = "side"
                outer._log(self.command, self.path, kind, body, {"content": blocks, **why})
                stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
                msg_id = "msg_" + uuid.uuid4().hex[:24]
                model = body.get("model") or MODEL_FALLBACK
                usage_in = rough_tokens(body)
                out_tokens = max(1, len(json.dumps(blocks)) // 4)
                if body.get("stream"):
                    self._stream(msg_id, model, blocks, stop, usage_in, out_tokens)
                else:
                    self._json(
                        200,
                        {
                            "id": msg_id,
                            "type": "message",
                            "role": "assistant",
                            "model": model,
                            "content": blocks,
                            "stop_reason": stop,
                            "stop_sequence": None,
                            "usage": {"input_tokens": usage_in, "output_tokens": out_tokens},
                        },
                    )

            def _stream(self, msg_id, model, blocks, stop, usage_in, out_tokens):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.send_header("request-id", "req_" + uuid.uuid4().hex[:20])
                self.end_headers()
                self.close_connection = True

                def ev(name, data):
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

                ev(
                    "message_start",
                    {
                        "type": "message_start",
                        "message": {
                            "id": msg_id,
                            "type": "message",
                            "role": "assistant",
                            "model": model,
                            "content": [],
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": {"input_tokens": usage_in, "output_tokens": 1},
                        },
                    },
                )
                ev("ping", {"type": "ping"})
                for i, b in enumerate(blocks):
                    if b["type"] == "text":
                        ev("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
                        text = b["text"]
                        for k in range(0, len(text), 40) or [0]:
                            ev("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": text[k : k + 40]}})
                    else:
                        ev(
                            "content_block_start",
                            {"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}},
                        )
                        js = json.dumps(b["input"])
                        for k in range(0, len(js), 30):
                            ev("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": js[k : k + 30]}})
                    ev("content_block_stop", {"type": "content_block_stop", "index": i})
                ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": out_tokens}})
                ev("message_stop", {"type": "message_stop"})
                self.wfile.flush()

        self.httpd = http.server.ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = None

    def _side_text(self, body):
        # A title / topic request asks for JSON or a few words; a short plain answer fits.
        sysp = json.dumps(body.get("system") or "")
        if "json" in sysp.lower() and "title" in sysp.lower():
            return json.dumps({"title": "Scripted session"})
        return "Scripted session"

    def _current_script(self):
        if self.script_path:
            try:
                m = os.path.getmtime(self.script_path)
                if m != self._script_mtime:
                    with open(self.script_path) as f:
                        self.script = json.load(f)
                    self._script_mtime = m
            except OSError:
                pass
        return self.script

    def _log(self, method, path, kind, body, reply):
        rec = {"seq": next(self._seq), "ts": time.time(), "method": method, "path": path, "kind": kind, "body": body, "reply": reply}
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
    srv = FakeAnthropic(a.log, script_path=a.script, port=a.port)
    print(f"PORT {srv.port}", flush=True)
    try:
        srv.httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
