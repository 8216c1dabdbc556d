// Drives `amber mcp` with the official MCP TypeScript SDK (@modelcontextprotocol/sdk), the
// way an MCP host does: the server is spawned over stdio, the client declares the `roots`
// capability and answers `roots/list` with one root, the project the caller made.
//
// Environment (set by tests/mcp/test_ts_sdk.py):
//   AMBER_BIN        the amber binary (run as `$AMBER_BIN mcp`)
//   AMBER_TEST_ROOT  a temporary git repository, offered as the only root
//   AMBER_DATA_DIR, AMBER_SOCKET, ...  passed through to the server (a private daemon)
//
// Prints one line per check and exits non-zero at the first failure.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { basename } from "node:path";
import { pathToFileURL } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

// A tool call may start the daemon, which loads the embedding model: allow for it
// (the SDK's default request timeout is 60 s).
const CALL_TIMEOUT_MS = 180_000;

const AMBER_BIN = process.env.AMBER_BIN;
const ROOT = process.env.AMBER_TEST_ROOT;

function ok(what) {
  console.log(`ok - ${what}`);
}

function textOf(result) {
  return (result.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("");
}

async function call(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
}

/** A successful tool call's JSON answer. */
async function okCall(client, name, args) {
  const r = await call(client, name, args);
  assert.ok(!r.isError, `${name} ${JSON.stringify(args)} failed: ${textOf(r)}`);
  try {
    return JSON.parse(textOf(r));
  } catch (e) {
    assert.fail(`${name} answered text that is not JSON: ${textOf(r).slice(0, 300)}`);
  }
}

async function main() {
  assert.ok(AMBER_BIN, "AMBER_BIN is not set");
  assert.ok(ROOT, "AMBER_TEST_ROOT is not set");
  const rootUri = pathToFileURL(ROOT).href; // file:///tmp/..., percent-encoded where needed

  const transport = new StdioClientTransport({
    command: AMBER_BIN,
    args: ["mcp", "--tools", "all"],
    // The SDK passes only a few variables (HOME, PATH, ...) unless told otherwise: the
    // caller's AMBER_* settings must reach the server.
    env: Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined)),
    stderr: "inherit",
  });
  const client = new Client(
    { name: "amber-ts-sdk-test", version: "0.0.0" },
    { capabilities: { roots: { listChanged: true } } },
  );
  let rootsAsked = 0;
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    rootsAsked += 1;
    return { roots: [{ uri: rootUri, name: basename(ROOT) }] };
  });

  await client.connect(transport);
  try {
    const info = client.getServerVersion();
    assert.equal(info?.name, "amber", `server name: ${JSON.stringify(info)}`);
    ok(`initialize: server ${info.name} ${info.version ?? ""}`.trimEnd());

    // tools/list
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of ["remember", "recall", "get"]) {
      const tool = byName.get(name);
      assert.ok(tool, `tool ${name} missing from tools/list: ${[...byName.keys()].join(", ")}`);
      assert.equal(tool.inputSchema?.type, "object", `${name}: input schema is not an object`);
    }
    ok(`tools/list: remember, recall, get with object input schemas (${tools.length} tools)`);

    // remember, with no scope: the server files it in the scope of the root it was given.
    const tag = randomBytes(4).toString("hex");
    const sentence =
      `The ${tag} staging cluster rotates its TLS certificates every second Thursday at 04:00 UTC.`;
    const filed = await okCall(client, "remember", { content: sentence });
    assert.match(String(filed.id ?? ""), /^[0-9a-f]{32}$/, `remember answered ${JSON.stringify(filed)}`);
    ok(`remember (no scope): id ${filed.id}`);

    // recall, with no scope either.
    const found = await okCall(client, "recall", {
      query: `when does the ${tag} staging cluster rotate its TLS certificates?`,
    });
    assert.ok(Array.isArray(found.hits) && found.hits.length > 0, `recall found nothing: ${JSON.stringify(found)}`);
    const top = found.hits[0];
    assert.equal(top.content, sentence, `top hit is not the sentence: ${JSON.stringify(top)}`);
    assert.equal(top.id, filed.id, "top hit has another id");
    ok("recall (no scope): the top hit is the sentence");
    assert.ok(
      typeof top.scope === "string" && top.scope.startsWith("project/"),
      `scope of the top hit is ${JSON.stringify(top.scope)}, not project/... ` +
        `(roots/list was asked ${rootsAsked} time(s))`,
    );
    ok(`recall: scope ${top.scope} (roots/list asked ${rootsAsked} time(s))`);

    // get by an id prefix.
    const prefix = filed.id.slice(0, 8);
    const got = await okCall(client, "get", { id: prefix });
    assert.equal(got.memory?.id, filed.id, `get ${prefix} returned ${JSON.stringify(got).slice(0, 300)}`);
    assert.equal(got.memory.content, sentence);
    ok(`get by prefix ${prefix}: the same memory`);

    // get an unknown id: a tool error, not a protocol error.
    let unknown = "0123456789abcdef0123456789abcdef";
    if (unknown === filed.id) unknown = "fedcba9876543210fedcba9876543210";
    const missing = await call(client, "get", { id: unknown });
    assert.equal(missing.isError, true, `get of an unknown id: ${JSON.stringify(missing)}`);
    ok(`get of an unknown id: isError (${textOf(missing).slice(0, 80)})`);
  } finally {
    await client.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.log(`FAIL - ${err?.message ?? err}`);
    process.exit(1);
  },
);
