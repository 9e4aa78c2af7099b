// SPDX-License-Identifier: Apache-2.0
// A stdio MCP server for srt-mcp's tests, speaking newline-delimited JSON-RPC by hand (no SDK):
// tools `sleep` (answers after params.arguments.ms, unless cancelled), `crash` (exits 3),
// `pid` (its process id), `huge` (a line of params.arguments.bytes), `notify` (a progress
// notification, then the answer). Every notifications/cancelled it receives is appended to
// $FIXTURE_LOG, one JSON line each, so a test can see what reached the server.
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const log = process.env.FIXTURE_LOG;
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const pending = new Map();

const tools = ['sleep', 'crash', 'pid', 'huge', 'notify'].map((name) => ({
  name,
  description: `fixture tool ${name}`,
  inputSchema: { type: 'object', properties: {} },
}));

createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') {
    send({ jsonrpc: '2.0', id: m.id, result: {
      protocolVersion: m.params.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: 'srt-mcp-fixture', version: '1.0.0' } } });
  } else if (m.method === 'tools/list') {
    send({ jsonrpc: '2.0', id: m.id, result: { tools } });
  } else if (m.method === 'notifications/cancelled') {
    if (log) appendFileSync(log, JSON.stringify(m.params) + '\n');
    const t = pending.get(JSON.stringify(m.params.requestId));
    if (t) clearTimeout(t);
  } else if (m.method === 'tools/call') {
    const args = m.params.arguments ?? {};
    const text = (t) => ({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: t }] } });
    switch (m.params.name) {
      case 'sleep':
        pending.set(JSON.stringify(m.id), setTimeout(() => send(text('slept')), args.ms ?? 1000));
        break;
      case 'crash':
        process.exit(3);
      case 'pid':
        send(text(`${process.pid} ${process.env.TMPDIR} ${process.env.HOME}`));
        break;
      case 'huge':
        send(text('x'.repeat(args.bytes ?? 1000)));
        break;
      case 'notify':
        send({ jsonrpc: '2.0', method: 'notifications/progress',
               params: { progressToken: m.params._meta?.progressToken ?? 0, progress: 1, total: 2 } });
        send(text('notified'));
        break;
      default:
        send({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: 'unknown tool' } });
    }
  } else if (m.id !== undefined && m.method) {
    send({ jsonrpc: '2.0', id: m.id, result: {} });
  }
});
