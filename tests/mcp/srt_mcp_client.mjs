// SPDX-License-Identifier: Apache-2.0
// srt-mcp's end-to-end client: the official MCP TypeScript SDK (Client +
// StreamableHTTPClientTransport) against srt-mcp. `node srt_mcp_client.mjs SCENARIO BASE_URL
// [ARG...]` prints one JSON object (the scenario's findings) on stdout and exits 0, or prints
// the error and exits 1. The C++ test (srt_mcp_e2e_test.cc) asserts on the findings.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [scenario, base, ...rest] = process.argv.slice(2);

async function connect(name, options = {}) {
  const client = new Client({ name: `srt-mcp-test-${name}`, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp/${name}`), options);
  await client.connect(transport);
  return { client, transport };
}

const text = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

const scenarios = {
  // initialize, list and call tools of both npm servers; a write inside and one outside the
  // server's allowWrite.
  async basic([dataDir, readOnlyDir]) {
    const out = {};
    const files = await connect('files');
    out.sessionId = files.transport.sessionId;
    out.protocolVersion = files.transport.protocolVersion;
    out.filesTools = (await files.client.listTools()).tools.map((t) => t.name).sort();
    const ok = await files.client.callTool({ name: 'write_file',
      arguments: { path: `${dataDir}/hello.txt`, content: 'hello from the SDK' } });
    out.writeInside = { isError: !!ok.isError, text: text(ok) };
    const denied = await files.client.callTool({ name: 'write_file',
      arguments: { path: `${readOnlyDir}/evil.txt`, content: 'should not land' } });
    out.writeOutside = { isError: !!denied.isError, text: text(denied) };
    const read = await files.client.callTool({ name: 'read_text_file',
      arguments: { path: `${dataDir}/hello.txt` } });
    out.readBack = text(read);
    await files.transport.terminateSession();
    await files.client.close();

    const memory = await connect('memory');
    out.memoryTools = (await memory.client.listTools()).tools.map((t) => t.name).sort();
    await memory.client.callTool({ name: 'create_entities', arguments: { entities: [
      { name: 'srt-mcp', entityType: 'daemon', observations: ['serves MCP over HTTP'] }] } });
    const graph = await memory.client.callTool({ name: 'read_graph', arguments: {} });
    out.graph = text(graph);
    await memory.transport.terminateSession();
    await memory.client.close();
    return out;
  },

  // Two clients at once: separate sessions, separate server processes (sandboxes).
  async two([name = 'fixture']) {
    const a = await connect(name);
    const b = await connect(name);
    const pidA = text(await a.client.callTool({ name: 'pid', arguments: {} }));
    const pidB = text(await b.client.callTool({ name: 'pid', arguments: {} }));
    const out = { sessions: [a.transport.sessionId, b.transport.sessionId], pids: [pidA, pidB] };
    // Both sessions are live until here: the test counts the processes meanwhile.
    if (rest.includes('hold')) await new Promise((r) => setTimeout(r, 1500));
    await a.transport.terminateSession();
    await b.transport.terminateSession();
    await a.client.close();
    await b.client.close();
    return out;
  },

  // A tool call whose answer the client stops waiting for by closing the connection.
  async disconnect() {
    const { client, transport } = await connect('fixture');
    const sessionId = transport.sessionId;
    const controller = new AbortController();
    const call = fetch(`${base}/mcp/fixture`, {
      method: 'POST', signal: controller.signal,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
                 'mcp-session-id': sessionId, 'mcp-protocol-version': transport.protocolVersion },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'slow-1', method: 'tools/call',
                             params: { name: 'sleep', arguments: { ms: 30000 } } }),
    }).then(async (r) => { await r.body.getReader().read(); return r.status; });
    await new Promise((r) => setTimeout(r, 500));
    controller.abort();
    await call.catch(() => {});
    // The session goes on: another call works.
    const after = text(await client.callTool({ name: 'pid', arguments: {} }));
    await transport.terminateSession();
    await client.close();
    return { sessionId, after };
  },

  // The server process dies during a call: the call fails with srt-mcp's error, the session ends.
  async crash() {
    const { client, transport } = await connect('fixture');
    let error = '';
    try {
      await client.callTool({ name: 'crash', arguments: {} });
    } catch (e) {
      error = String(e.message ?? e);
    }
    const sessionId = transport.sessionId;
    const again = await fetch(`${base}/mcp/fixture`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
                 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) });
    return { error, statusAfter: again.status };
  },

  // A progress notification reaches the request's stream before its answer.
  async progress() {
    const { client, transport } = await connect('fixture');
    const seen = [];
    const r = await client.callTool({ name: 'notify', arguments: {} }, undefined,
                                    { onprogress: (p) => seen.push(p.progress) });
    await transport.terminateSession();
    await client.close();
    return { text: text(r), progress: seen };
  },

  // With a bearer token (rest[0]); requestInit carries it, as a real client's would.
  async auth([token]) {
    const { client, transport } = await connect('fixture',
      { requestInit: { headers: { authorization: `Bearer ${token}` } } });
    const tools = (await client.listTools()).tools.length;
    await transport.terminateSession();
    await client.close();
    return { tools };
  },
};

try {
  const result = await scenarios[scenario](rest);
  process.stdout.write(JSON.stringify(result) + '\n');
  process.exit(0);
} catch (e) {
  process.stdout.write(JSON.stringify({ failed: String(e?.stack ?? e) }) + '\n');
  process.exit(1);
}
