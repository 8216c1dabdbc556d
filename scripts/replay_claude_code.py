#!/usr/bin/env python3
"""Replays a recorded Claude Code session through Amber's hooks and measures what they add
to the agent's context.

    replay_claude_code.py --amber PATH [--amberd PATH] [--fixture DIR] [--json]

Everything runs in a fresh temporary home (data dir, socket, state dir, empty config), so
the user's own Amber is never touched. The fixture directory holds:

- events.jsonl: one `{"event": NAME, "payload": {...}}` per line, in session order;
- transcript.jsonl: the Claude Code transcript the payloads point at;
- seed.json: `{"project": [...], "user": [...]}`, memories filed before the session.

In the fixture, `$CWD` stands for the project directory and `$TRANSCRIPT` for the
transcript's path. The project scope is computed the way Amber names it
(`project/<dir name>-<8 hex of FNV-1a over the path>`), so old and new binaries alike see
the seed memories in the project's scope.

Characters added to the context: `hookSpecificOutput.additionalContext` of SessionStart and
UserPromptSubmit answers, and the `reason` of a Stop that blocks. When a Stop blocks, the
agent's answer is simulated: a `pattern` memory is filed and the Stop is replayed with
`stop_hook_active: true`.

The transcript grows as the session goes: at the k-th Stop the file holds the lines
before the (k+1)-th prompt, at SessionEnd all of it (Amber files the transcript at each
Stop and at the end, only what is new).

What was stored: every memory of the session, read from the data directory's SQLite file
at the end, counted by source (prompt, tool, transcript) in memories and characters, and
the share of captured characters stored twice: lines of at least 30 characters that occur
in more than one stored memory.

Standard library only.
"""

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_FIXTURE = os.path.join(HERE, "..", "cli", "tests", "fixtures", "claude_replay")
PROJECT = "ledger-api"
DEADLINE_MS = 10000
# A hook that took this much of its deadline probably ran out of it (its answer dropped).
SLOW_FRACTION = 0.9
PREFIX = 60
MIN_PROMPT = 40


def project_scope(root):
    """Amber's `project_scope`: `project/<sanitised dir name>-<%08x of FNV-1a 64, low 32 bits>`."""
    name = os.path.basename(root.rstrip("/")) or "root"
    name = "".join(c if (c.isascii() and c.isalnum()) or c in "_-." else "-" for c in name)[:64]
    name = name.strip(".") or "project"
    h = 0xCBF29CE484222325
    for b in os.fsencode(root):
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "project/%s-%08x" % (name, h & 0xFFFFFFFF)


def substitute(value, subs):
    """Every string in a JSON value with each placeholder replaced."""
    if isinstance(value, str):
        for k, v in subs.items():
            value = value.replace(k, v)
        return value
    if isinstance(value, list):
        return [substitute(v, subs) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, subs) for k, v in value.items()}
    return value


def added_text(event, stdout):
    """(text added to the context, blocked?) of one hook answer."""
    out = stdout.strip()
    if not out:
        return "", False
    try:
        v = json.loads(out)
    except ValueError:
        # Plain stdout of a SessionStart/UserPromptSubmit hook is added as context too.
        return (out, False) if event in ("SessionStart", "UserPromptSubmit") else ("", False)
    if not isinstance(v, dict):
        return "", False
    if v.get("decision") == "block":
        return str(v.get("reason") or ""), True
    ctx = (v.get("hookSpecificOutput") or {}).get("additionalContext")
    return (ctx if isinstance(ctx, str) else ""), False


class Replay:
    def __init__(self, amber, amberd, fixture):
        self.amber = os.path.abspath(amber)
        self.amberd = os.path.abspath(amberd) if amberd else os.path.join(os.path.dirname(self.amber), "amberd")
        self.fixture = fixture
        self.tmp = tempfile.mkdtemp(prefix="amber-rp-", dir="/tmp")
        self.env = dict(os.environ)
        for k in ("AMBER_NO_START", "AMBER_LOG", "AMBER_HOOK_DEADLINE_MS"):
            self.env.pop(k, None)
        config = os.path.join(self.tmp, "config.toml")
        open(config, "w").close()
        self.state = os.path.join(self.tmp, "state")
        self.env.update(
            AMBER_DATA_DIR=os.path.join(self.tmp, "data"),
            AMBER_SOCKET=os.path.join(self.tmp, "s.sock"),
            AMBER_STATE_DIR=self.state,
            AMBER_CONFIG=config,
            AMBERD=self.amberd,
        )
        proj = os.path.join(self.tmp, PROJECT)
        os.makedirs(proj)
        subprocess.run(["git", "init", "-q", proj], check=True)
        self.project = os.path.realpath(proj)
        self.scope = project_scope(self.project)
        self.transcript = os.path.join(self.tmp, "transcript.jsonl")
        # The path as it reads inside a JSON string.
        with open(os.path.join(fixture, "transcript.jsonl"), encoding="utf-8") as f:
            text = f.read()
        self.lines = text.replace("$CWD", json.dumps(self.project)[1:-1]).splitlines(keepends=True)
        # Where each prompt starts in the transcript: a user line whose content is text.
        self.prompt_at = [i for i, l in enumerate(self.lines) if is_prompt_line(l)]
        self.write_transcript(len(self.lines))
        self.subs = {"$CWD": self.project, "$TRANSCRIPT": self.transcript}
        self.problems = []

    def write_transcript(self, n):
        with open(self.transcript, "w", encoding="utf-8") as f:
            f.writelines(self.lines[:n])

    def stored(self):
        """What the session left in the store: memories by source, and captured lines
        stored twice."""
        db = os.path.join(self.tmp, "data", "amber.db")
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        try:
            rows = con.execute(
                "SELECT source, content FROM memories WHERE session_id IS NOT NULL AND forgotten_at IS NULL"
            ).fetchall()
        finally:
            con.close()
        by = {}
        seen = {}
        for source, content in rows:
            kind = source or "?"
            if kind.startswith("claude-code:transcript:"):
                kind = "claude-code:transcript"
            b = by.setdefault(kind, {"memories": 0, "chars": 0})
            b["memories"] += 1
            b["chars"] += len(content)
            for l in set(x.strip() for x in content.splitlines()):
                if len(l) >= 30:
                    seen[l] = seen.get(l, 0) + 1
        total = sum(b["chars"] for b in by.values())
        data_bytes = 0
        for root, _, files in os.walk(os.path.join(self.tmp, "data")):
            for f in files:
                try:
                    data_bytes += os.path.getsize(os.path.join(root, f))
                except OSError:
                    pass
        twice = sum(len(l) * (n - 1) for l, n in seen.items() if n > 1)
        return {
            "by_source": by,
            "memories": sum(b["memories"] for b in by.values()),
            "chars": total,
            "lines_stored_twice": sum(1 for n in seen.values() if n > 1),
            "chars_stored_twice": twice,
            "share_stored_twice": round(twice / total, 4) if total else 0.0,
            "data_dir_bytes": data_bytes,
            "stored_twice_examples": sorted((l[:100] for l, n in seen.items() if n > 1), key=len, reverse=True)[:8],
        }

    def run(self, args, stdin=None, env=None, timeout=120):
        t = time.monotonic()
        p = subprocess.run(
            [self.amber] + args,
            input=stdin,
            capture_output=True,
            text=True,
            env=env or self.env,
            cwd=self.project,
            timeout=timeout,
        )
        return p, time.monotonic() - t

    def remember(self, scope, text, kind=None):
        args = ["remember", "--scope", scope] + (["--type", kind] if kind else []) + ["--", text]
        p, _ = self.run(args)
        if p.returncode != 0:
            self.problems.append("remember failed (%d): %s" % (p.returncode, p.stderr.strip()[-300:]))
        return p.returncode == 0

    def hook(self, event, payload):
        env = dict(self.env, AMBER_HOOK_DEADLINE_MS=str(DEADLINE_MS))
        p, took = self.run(["hook", "claude-code", event], stdin=json.dumps(payload), env=env)
        if p.returncode != 0:
            self.problems.append("hook %s exited %d: %s" % (event, p.returncode, p.stderr.strip()[-300:]))
        elif p.stderr.strip():
            self.problems.append("hook %s stderr: %s" % (event, p.stderr.strip()[-300:]))
        if took >= SLOW_FRACTION * DEADLINE_MS / 1000:
            self.problems.append("hook %s took %.1fs (deadline %ds): its answer may be lost" % (event, took, DEADLINE_MS // 1000))
        return p.stdout, took

    def replay(self):
        with open(os.path.join(self.fixture, "seed.json"), encoding="utf-8") as f:
            seed = json.load(f)
        seeds = list(seed.get("project", [])) + list(seed.get("user", []))
        for text in seed.get("project", []):
            self.remember(self.scope, text)
        for text in seed.get("user", []):
            self.remember("user", text)
        with open(os.path.join(self.fixture, "events.jsonl"), encoding="utf-8") as f:
            events = [json.loads(l) for l in f if l.strip()]

        per_event = {}
        outputs = []  # (index in the replay, event, text)
        prompts = []  # (index in the replay, prompt)
        blocks = block_chars = takeaways = 0
        slowest = (0.0, None)
        step = 0

        def send(event, payload):
            nonlocal step, blocks, block_chars, slowest
            step += 1
            stdout, took = self.hook(event, payload)
            slowest = max(slowest, (took, event), key=lambda s: s[0])
            text, blocked = added_text(event, stdout)
            e = per_event.setdefault(event, {"sent": 0, "outputs": 0, "chars": 0})
            e["sent"] += 1
            if text:
                e["outputs"] += 1
                e["chars"] += len(text)
                outputs.append((step, event, text))
            if blocked:
                blocks += 1
                block_chars += len(text)
            return blocked

        stops = 0
        for ev in events:
            event = ev["event"]
            payload = substitute(ev["payload"], self.subs)
            if event == "Stop":
                stops += 1
                upto = self.prompt_at[stops] if stops < len(self.prompt_at) else len(self.lines)
                self.write_transcript(upto)
            elif event == "SessionEnd":
                self.write_transcript(len(self.lines))
            if event == "UserPromptSubmit":
                prompts.append((step + 1, payload.get("prompt") or ""))
            if send(event, payload):
                # The agent answers the checkpoint: it files a takeaway, then stops again.
                takeaways += 1
                self.remember(
                    self.scope,
                    "Takeaway: checkpoint %d of this %s session; the work so far is recorded, nothing else new to file."
                    % (takeaways, PROJECT),
                    kind="pattern",
                )
                send(event, dict(payload, stop_hook_active=True))

        # Seeds shown: a seed counts in an output when its text, or its first 60 characters,
        # appears there verbatim.
        appearances = []
        for s in seeds:
            keys = {s, s[:PREFIX]}
            appearances.append(sum(1 for _, _, t in outputs if any(k in t for k in keys)))
        echoed = [
            p[:PREFIX]
            for at, p in prompts
            if len(p) >= MIN_PROMPT and any(p[:PREFIX] in t for i, _, t in outputs if i > at)
        ]
        return {
            "amber": self.amber,
            "project_scope": self.scope,
            "events": len(events),
            "hook_calls": step,
            "total_chars": sum(e["chars"] for e in per_event.values()),
            "per_event": per_event,
            "outputs": len(outputs),
            "blocks": blocks,
            "block_chars": block_chars,
            "seeds": len(seeds),
            "seeds_shown": sum(1 for a in appearances if a > 0),
            "seed_repeats": sum(max(0, a - 1) for a in appearances),
            "seed_appearances": appearances,
            "echoed_prompts": len(echoed),
            "echoed": echoed,
            "stored": self.stored(),
            "slowest_hook_s": round(slowest[0], 2),
            "slowest_hook_event": slowest[1],
            "problems": self.problems,
            "hooks_log_tail": self.log_tail(),
        }

    def log_tail(self, n=20):
        path = os.path.join(self.state, "logs", "hooks.log")
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read().splitlines()[-n:]
        except OSError:
            return []

    def close(self):
        try:
            p, _ = self.run(["daemon", "stop"], timeout=60)
            if p.returncode != 0:
                print("amber daemon stop: %s" % p.stderr.strip(), file=sys.stderr)
        except (OSError, subprocess.SubprocessError) as e:
            print("amber daemon stop: %s" % e, file=sys.stderr)
        shutil.rmtree(self.tmp, ignore_errors=True)


def is_prompt_line(line):
    try:
        v = json.loads(line)
    except ValueError:
        return False
    if v.get("type") != "user" or v.get("isMeta"):
        return False
    c = (v.get("message") or {}).get("content")
    return isinstance(c, str) or any(isinstance(b, dict) and b.get("type") == "text" for b in c or [])


def print_text(r):
    print("amber: %s" % r["amber"])
    print("project scope: %s" % r["project_scope"])
    print("events replayed: %d (hook calls: %d)" % (r["events"], r["hook_calls"]))
    print("characters added to context: %d" % r["total_chars"])
    for event, e in r["per_event"].items():
        print("  %-20s sent %3d  outputs %3d  chars %6d" % (event, e["sent"], e["outputs"], e["chars"]))
    print("outputs: %d" % r["outputs"])
    print("Stop blocks: %d (%d chars)" % (r["blocks"], r["block_chars"]))
    print("seed memories shown: %d of %d" % (r["seeds_shown"], r["seeds"]))
    print("seed repeats: %d (appearances per seed: %s)" % (r["seed_repeats"], r["seed_appearances"]))
    print("echoed prompts: %d" % r["echoed_prompts"])
    for p in r["echoed"]:
        print("  %s" % p)
    st = r["stored"]
    print("stored by the session: %d memories, %d chars; %d chars (%.1f%%) in lines stored twice"
          % (st["memories"], st["chars"], st["chars_stored_twice"], 100 * st["share_stored_twice"]))
    for source, b in sorted(st["by_source"].items()):
        print("  %-28s %3d memories %7d chars" % (source, b["memories"], b["chars"]))
    print("slowest hook: %.2fs (%s)" % (r["slowest_hook_s"], r["slowest_hook_event"]))
    if r["problems"]:
        print("problems:")
        for p in r["problems"]:
            print("  %s" % p)
    print("hooks.log (tail):")
    for l in r["hooks_log_tail"]:
        print("  %s" % l)


def main():
    ap = argparse.ArgumentParser(description="Replay a recorded Claude Code session through Amber's hooks.")
    ap.add_argument("--amber", required=True, help="the amber binary")
    ap.add_argument("--amberd", help="the amberd binary [default: next to amber]")
    ap.add_argument("--fixture", default=DEFAULT_FIXTURE, help="events.jsonl, transcript.jsonl, seed.json")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = ap.parse_args()
    rp = Replay(args.amber, args.amberd, os.path.abspath(args.fixture))
    try:
        r = rp.replay()
    finally:
        rp.close()
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        print_text(r)


if __name__ == "__main__":
    main()
