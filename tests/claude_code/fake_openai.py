"""A stand-in for an OpenAI-compatible chat endpoint, for Amber's `[learn]` model.

Standard library only. Serves `POST {base}/chat/completions` on 127.0.0.1 (port 0: the
OS picks one; `url` is the base to put in `[learn] url`, ending `/v1`) and answers by
the system prompt's first words, the way daemon/tests/loop.rs's `model()` does:

- `You sort`: every task listed between `<tasks>\\n` and `\\n</tasks>` (one a line,
  numbered from 0) goes to the one situation `SITUATION`;
- `You tidy`: `{"merge": []}`;
- `You write`: `NOTE` (When, Steps, Pitfalls, Evidence; general words only, so that
  Amber's check for a record's literal repeated verbatim passes);
- `You route`: `1` (the first situation listed);
- `You judge`: a verdict of 1;
- `You read the record` (the judge's word per served note): every note `N1`, `N2`, …
  applied and helped.

Every request is kept (`requests`: `{"seq", "ts", "kind", "body"}`, `kind` one of
`sort`, `tidy`, `write`, `route`, `judge`, `other`) and, when a log path is given,
appended to it as a JSON line. `count(kind)` counts them.
"""

import http.server
import itertools
import json
import re
import threading
import time

SITUATION = "ops/staging-deploys"
SITUATION_LINE = "A service's deploy to the staging environment fails and the cause is sought"
STEPS = "1. Read the deploy settings of the environment before anything else.\n2. Check the recent commits that touched them."
PITFALLS = "- Looking for a failure log that the deploy never writes: ask the deploy tool for its status instead."
NOTE = (
    "## When\nThe deploy of a service to the staging environment fails.\n"
    f"## Steps\n{STEPS}\n"
    f"## Pitfalls\n{PITFALLS}\n"
    "## Evidence\nTwo runs went wrong [R1] [R2], three went right [R3]."
)

KINDS = {
    "You sort": "sort",
    "You tidy": "tidy",
    "You write": "write",
    "You route": "route",
    "You judge": "judge",
    "You read the record": "notes",
}


def kind_of(body):
    try:
        system = body["messages"][0]["content"]
    except (KeyError, IndexError, TypeError):
        return "other"
    for head, kind in KINDS.items():
        if isinstance(system, str) and system.startswith(head):
            return kind
    return "other"


def user_text(body):
    try:
        return body["messages"][1]["content"]
    except (KeyError, IndexError, TypeError):
        return ""


def answer(kind, body):
    if kind == "sort":
        user = user_text(body)
        listed = user.split("<tasks>\n", 1)[1].split("\n</tasks>", 1)[0] if "<tasks>\n" in user else ""
        tasks = [{"task": i, "situation": SITUATION} for i, _ in enumerate(listed.splitlines())]
        return json.dumps({"situations": [{"key": SITUATION, "line": SITUATION_LINE}], "tasks": tasks})
    if kind == "tidy":
        return json.dumps({"merge": []})
    if kind == "write":
        return NOTE
    if kind == "route":
        return "1"
    if kind == "judge":
        return json.dumps({"verdict": 1, "reason": "the run reached an answer"})
    if kind == "notes":
        handles = re.findall(r"<note (N\d+)>", user_text(body))
        return json.dumps({"notes": [{"note": h, "applied": "yes", "helped": "yes", "reason": "it was followed"} for h in handles]})
    return "OK"


class FakeOpenAI:
    def __init__(self, log_path=None, host="127.0.0.1", port=0):
        self.log_path = log_path
        self.requests = []
        self._lock = threading.Lock()
        self._seq = itertools.count(1)
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                kind = kind_of(body) if self.path.rstrip("/").endswith("/chat/completions") else "other"
                content = answer(kind, body)
                outer._log(kind, self.path, body, content)
                data = json.dumps(
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "model": body.get("model", "m") if isinstance(body, dict) else "m",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": max(1, len(raw) // 4), "completion_tokens": max(1, len(content) // 4)},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                outer._log("other", self.path, None, "")
                data = b"{}"
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = http.server.ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://{host}:{self.port}/v1"
        self._thread = None

    def _log(self, kind, path, body, reply):
        rec = {"seq": next(self._seq), "ts": time.time(), "kind": kind, "path": path, "body": body, "reply": reply}
        with self._lock:
            self.requests.append(rec)
            if self.log_path:
                with open(self.log_path, "a") as f:
                    f.write(json.dumps(rec) + "\n")

    def count(self, kind):
        with self._lock:
            return sum(1 for r in self.requests if r["kind"] == kind)

    def kinds(self):
        with self._lock:
            return [r["kind"] for r in self.requests]

    def start(self):
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
