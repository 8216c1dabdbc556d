#!/usr/bin/env python3
"""A scripted stand-in for the Gemini API (generativelanguage `v1beta`), for driving the
real Gemini CLI (`@google/gemini-cli` 0.61.0) offline.

Standard library only. Serves on 127.0.0.1 (port 0 by default: the OS picks one). Point
the CLI at it with `GEMINI_API_KEY=dummy GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:<port>`
and `{"security": {"auth": {"selectedType": "gemini-api-key"}}}` in settings.json (the
URL alone selects the "gateway" auth type, which headless runs reject: exit 41).

Endpoints (the @google/genai SDK asks `{base}/v1beta/models/{model}:{method}`):

- `POST .../models/{m}:streamGenerateContent?alt=sse`: SSE, one `data: <GenerateContentResponse>`
  event per chunk (`\\r\\n\\r\\n`-terminated), long text in 40-character chunks, each
  function call in a chunk of its own, the last chunk with `finishReason: STOP` and
  `usageMetadata`;
- `POST .../models/{m}:generateContent`: one GenerateContentResponse;
- `POST .../models/{m}:countTokens`: `{"totalTokens": n}` (a rough count);
- `GET .../models`, `GET .../models/{m}`: a plausible model list / model;
- anything else: `{}` with 200 (logged, so an unexpected call shows).

Every request is logged, body and all, as one JSON line (`{"seq", "ts", "method", "path",
"model", "kind", "body", "reply"}`; `kind` is `main`, `side`, `count_tokens`, `models` or
`other`).

**Main conversation or side request.** The CLI's main loop sends function declarations
(`tools`) and no `responseMimeType`. Everything else is a side request: a JSON one (the
model router's classifier, the next-speaker check, the loop check; `-m gemini-2.5-flash`
skips the router) gets an object built from its schema (`next_speaker` "user",
`complexity_score` 10, `*_confidence` 0.0, enums their first value); a plain-text one
(a session summary) gets a short text.

**The script.** A list of scenes, each `{"match": "...", "steps": [...], "takeaway":
{...}}`. The scene is picked by the newest prompt in the request (the newest `user`
content with a text part and no `functionResponse`), its `<hook_context>` parts and
blocks left out: the first scene whose `match` occurs in its text. The step is the
number of `model` contents after that prompt (0 for the first answer, 1 after the first
tool results came back, ...). A step is `{"text": "...", "calls": [{"name":
"run_shell_command", "args": {...}}, ...]}` (MCP tools are `mcp_<server>_<tool>`, e.g.
`mcp_amber_recall`). Past the last step, or with no scene, the answer is "Done.".

**Amber's checkpoint.** Gemini CLI sends an AfterAgent hook's block reason back as a new
user turn (`{"text": reason}`, then BeforeAgent's `<hook_context>` part). When the newest
prompt carries the checkpoint mark (`Amber checkpoint:`) outside a `<hook_context>`, the
model complies: the first answer calls `mcp_amber_remember` with the scene's `takeaway`
(`{"content", "type"}`; the scene is the one of the prompt before) and the `session_id`
the reason names, plus `mcp_amber_outcome` (`success`) on the first memory id the reason
lists; the next answer is text. A checkpoint asked again in the same conversation is
answered with text only (no second filing), so a hook that blocks in a loop shows as
blocks, not as an endless run.

**`$FIRST_BRIEFED_ID`** in a call's args (a whole value or inside a string) stands for the
first memory id (8 hex digits, `- <id> · <type> · ...`) of a `<hook_context>` in the
request: the model `get`s a memory it was briefed on.

Where Gemini CLI 0.61.0 puts what hooks add (headless): SessionStart's
`additionalContext` is HTML-escaped (`<`, `>`) and prepended to the prompt text as
`<hook_context>...</hook_context>\\n\\n<prompt>`; BeforeAgent's is a separate
`<hook_context>` part after the prompt (kept in history); AfterTool's is appended to the
tool's `functionResponse.response.output`.

Run alone: `python3 fake_gemini.py --log requests.jsonl [--script script.json] [--port N]`
prints `PORT <n>` and serves until killed; the script file is read again whenever it
changes. From Python: `FakeGemini(log_path).start()`, set `.script`, `.port`, `.stop()`.
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

MODEL_FALLBACK = "gemini-2.5-flash"
CHECKPOINT_MARK = "Amber checkpoint:"
PATH_RE = re.compile(r"^/(?P<ver>v1[a-z0-9]*)/models/(?P<model>[^/:?]+)(?::(?P<method>[A-Za-z]+))?$")
HOOK_BLOCK = re.compile(r"<hook_context>.*?</hook_context>", re.S)
POINTER_ID = re.compile(r"(?m)^- ([0-9a-f]{8}) · ")
CHECKPOINT_IDS = re.compile(r"memor(?:y|ies) \(([0-9a-f]{8})")
CHECKPOINT_SESSION = re.compile(r'`session_id` "([^"]+)"')


# --- reading a request ------------------------------------------------------------------


def parts_of(content):
    return [p for p in (content or {}).get("parts") or [] if isinstance(p, dict)]


def is_prompt(content):
    """A user content with a text part and no function response: a prompt (or a hook's
    block reason sent back as one)."""
    if content.get("role") != "user":
        return False
    ps = parts_of(content)
    if any("functionResponse" in p for p in ps):
        return False
    return any(isinstance(p.get("text"), str) and p["text"].strip() for p in ps)


def prompt_text(content):
    """A prompt's own text: its text parts without `<hook_context>` parts or blocks (what
    hooks added)."""
    out = []
    for p in parts_of(content):
        t = p.get("text")
        if not isinstance(t, str) or t.lstrip().startswith("<hook_context>") and t.rstrip().endswith("</hook_context>"):
            continue
        out.append(HOOK_BLOCK.sub("", t))
    return "\n".join(out).strip()


def is_checkpoint(content):
    return is_prompt(content) and CHECKPOINT_MARK in prompt_text(content)


def is_main(body):
    gc = body.get("generationConfig") or {}
    if gc.get("responseMimeType") == "application/json":
        return False
    return any((t or {}).get("functionDeclarations") for t in body.get("tools") or [])


def response_text(resp):
    """A functionResponse's `response` as the model reads it."""
    if isinstance(resp, dict):
        out = resp.get("output")
        if isinstance(out, str) and len(resp) == 1:
            return out
        if isinstance(out, str):
            return out + "\n" + json.dumps({k: v for k, v in resp.items() if k != "output"})
    return json.dumps(resp)


def request_strings(body):
    """Every string of a request the model reads: the system instruction, the text parts
    of every content and the tool results (functionResponse outputs)."""
    body = body or {}
    out = []
    si = body.get("systemInstruction")
    if isinstance(si, str):
        out.append(si)
    elif isinstance(si, dict):
        out.extend(p.get("text", "") for p in parts_of(si))
    for c in body.get("contents") or []:
        for p in parts_of(c):
            if isinstance(p.get("text"), str):
                out.append(p["text"])
            elif "functionResponse" in p:
                out.append(response_text((p["functionResponse"] or {}).get("response")))
    return out


def function_calls(body):
    """(name, args) of every functionCall the conversation holds, in order."""
    return [
        ((p["functionCall"] or {}).get("name"), (p["functionCall"] or {}).get("args") or {})
        for c in (body or {}).get("contents") or []
        for p in parts_of(c)
        if "functionCall" in p
    ]


def function_responses(body):
    """(name, text) of every functionResponse the conversation holds, in order."""
    return [
        ((p["functionResponse"] or {}).get("name"), response_text((p["functionResponse"] or {}).get("response")))
        for c in (body or {}).get("contents") or []
        for p in parts_of(c)
        if "functionResponse" in p
    ]


def rough_tokens(obj):
    return max(1, len(json.dumps(obj)) // 4)


# --- answering ----------------------------------------------------------------------------


def from_schema(schema, name=""):
    """A value that satisfies a (Gemini or JSON) schema, with the CLI's side calls in mind."""
    if not isinstance(schema, dict):
        return None
    t = str(schema.get("type", "object")).lower()
    if name == "next_speaker":
        return "user"
    if name == "complexity_score":
        return 10
    if name.endswith("_confidence"):
        return 0.0
    if schema.get("enum"):
        return schema["enum"][0]
    if t == "object":
        return {k: from_schema(v, k) for k, v in (schema.get("properties") or {}).items()}
    if t == "array":
        return []
    if t == "string":
        return "Scripted."
    if t == "integer":
        return 1
    if t == "number":
        return 0.0
    if t == "boolean":
        return False
    return None


def side_reply(body):
    gc = body.get("generationConfig") or {}
    if gc.get("responseMimeType") == "application/json":
        schema = gc.get("responseJsonSchema") or gc.get("responseSchema")
        return {"text": json.dumps(from_schema(schema) if schema else {})}, {"why": "side json"}
    return {"text": "Scripted session"}, {"why": "side text"}


def find_scene(script, text):
    for scene in script or []:
        if scene.get("match") and scene["match"] in text:
            return scene
    return None


def _fill(value, body):
    if isinstance(value, dict):
        return {k: _fill(v, body) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, body) for v in value]
    if isinstance(value, str) and "$FIRST_BRIEFED_ID" in value:
        first = "00000000"
        for s in request_strings(body):
            for block in re.findall(r"<hook_context>(.*?)</hook_context>", s, re.S):
                m = POINTER_ID.search(block)
                if m:
                    first = m.group(1)
                    break
            if first != "00000000":
                break
        return value.replace("$FIRST_BRIEFED_ID", first)
    return value


def plan_reply(body, script):
    """The turn (`{"text", "calls"}`) to answer a main-loop request with, and why."""
    contents = body.get("contents") or []
    idx = next((i for i in range(len(contents) - 1, -1, -1) if is_prompt(contents[i])), None)
    if idx is None:
        return {"text": "Done."}, {"why": "no prompt"}
    step = sum(1 for c in contents[idx + 1 :] if c.get("role") == "model")
    if is_checkpoint(contents[idx]):
        reason = prompt_text(contents[idx])
        scene = None
        for j in range(idx - 1, -1, -1):
            if is_prompt(contents[j]) and not is_checkpoint(contents[j]):
                scene = find_scene(script, prompt_text(contents[j]))
                if scene:
                    break
        again = any(is_checkpoint(c) for c in contents[:idx])
        why = {"why": "checkpoint", "step": step, "scene": (scene or {}).get("match"), "again": again}
        if again or step > 0:
            return {"text": "The takeaway is filed." if step else "The takeaway is filed already."}, why
        takeaway = dict((scene or {}).get("takeaway") or {"content": "Nothing new was learned beyond what is filed.", "type": "fact"})
        sid = CHECKPOINT_SESSION.search(reason)
        if sid:
            takeaway["session_id"] = sid.group(1)
        calls = [{"name": "mcp_amber_remember", "args": takeaway}]
        ids = CHECKPOINT_IDS.findall(reason)
        if ids and sid:
            calls.append({"name": "mcp_amber_outcome", "args": {"memory_id": ids[0], "result": "success", "session_id": sid.group(1)}})
        return {"text": "Filing the takeaway.", "calls": calls}, why
    text = prompt_text(contents[idx])
    scene = find_scene(script, text)
    if scene is None:
        return {"text": "Done."}, {"why": "no scene", "prompt": text[-200:]}
    steps = scene.get("steps") or []
    if step >= len(steps):
        return {"text": "Done."}, {"why": "past the last step", "scene": scene["match"]}
    s = steps[step]
    turn = {"text": s.get("text", ""), "calls": [dict(c, args=_fill(c.get("args", {}), body)) for c in s.get("calls") or []]}
    return turn, {"why": "scene", "scene": scene["match"], "step": step}


def turn_parts(turn):
    parts = []
    if turn.get("text"):
        parts.append({"text": turn["text"]})
    for c in turn.get("calls") or []:
        parts.append({"functionCall": {"name": c["name"], "args": c.get("args", {})}})
    return parts or [{"text": "Done."}]


def response_obj(parts, model, prompt_tokens, finish=True):
    r = {"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}], "modelVersion": model}
    if finish:
        r["candidates"][0]["finishReason"] = "STOP"
        out = rough_tokens(parts)
        r["usageMetadata"] = {"promptTokenCount": prompt_tokens, "candidatesTokenCount": out, "totalTokenCount": prompt_tokens + out}
    return r


# --- the server ---------------------------------------------------------------------------


class FakeGemini:
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
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _route(self):
                path = self.path.split("?")[0]
                m = PATH_RE.match(path)
                return path, (m.group("model") if m else None), (m.group("method") if m else None)

            @staticmethod
            def _model_info(name):
                return {
                    "name": "models/" + name,
                    "displayName": name,
                    "inputTokenLimit": 1048576,
                    "outputTokenLimit": 65536,
                    "supportedGenerationMethods": ["generateContent", "countTokens"],
                }

            def do_HEAD(self):
                outer._log(self, "other", None, None, None)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self):
                path, model, method = self._route()
                if path.rstrip("/").endswith("/models"):
                    names = ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"]
                    reply = {"models": [self._model_info(n) for n in names]}
                    outer._log(self, "models", None, None, reply)
                    return self._json(200, reply)
                if model and not method:
                    reply = self._model_info(model)
                    outer._log(self, "models", model, None, reply)
                    return self._json(200, reply)
                outer._log(self, "other", model, None, {})
                self._json(200, {})

            def do_POST(self):
                body = self._read_body() or {}
                path, model, method = self._route()
                model = model or MODEL_FALLBACK
                if method == "countTokens":
                    reply = {"totalTokens": rough_tokens(body)}
                    outer._log(self, "count_tokens", model, body, reply)
                    return self._json(200, reply)
                if method not in ("generateContent", "streamGenerateContent"):
                    outer._log(self, "other", model, body, {})
                    return self._json(200, {})
                if is_main(body):
                    turn, why = plan_reply(body, outer._current_script())
                    kind = "main"
                else:
                    turn, why = side_reply(body)
                    kind = "side"
                parts = turn_parts(turn)
                outer._log(self, kind, model, body, {"parts": parts, **why})
                ptok = rough_tokens(body)
                if method == "streamGenerateContent":
                    return self._stream(parts, model, ptok)
                self._json(200, response_obj(parts, model, ptok))

            def _stream(self, parts, model, ptok):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                chunks = []
                for p in parts:
                    if "text" in p and len(p["text"]) > 40:
                        t = p["text"]
                        chunks.extend([{"text": t[k : k + 40]}] for k in range(0, len(t), 40))
                    else:
                        chunks.append([p])
                for i, c in enumerate(chunks):
                    obj = response_obj(c, model, ptok, finish=i == len(chunks) - 1)
                    self.wfile.write(("data: " + json.dumps(obj) + "\r\n\r\n").encode())
                self.wfile.flush()

        self.httpd = http.server.ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = None

    def _current_script(self):
        if self.script_path:
            try:
                m = os.path.getmtime(self.script_path)
                if m != self._script_mtime:
                    with open(self.script_path) as f:
                        self.script = json.load(f)
                    self._script_mtime = m
            except (OSError, ValueError):
                pass
        return self.script

    def _log(self, handler, kind, model, body, reply):
        rec = {
            "seq": next(self._seq),
            "ts": time.time(),
            "method": handler.command,
            "path": handler.path,
            "model": model,
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
    if os.path.exists(path):
        with open(path) as f:
            out = [json.loads(line) for line in f if line.strip()]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", required=True)
    ap.add_argument("--script")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    srv = FakeGemini(a.log, script_path=a.script, port=a.port)
    print(f"PORT {srv.port}", flush=True)
    try:
        srv.httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
