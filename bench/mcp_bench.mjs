// SPDX-License-Identifier: Apache-2.0
// srt-mcp's cost: the official MCP TypeScript SDK client calling @modelcontextprotocol/server-memory
// (read_graph, a cheap tool) three ways, each timed from the client:
//   stdio        node server.js as a child, unsandboxed (the floor)
//   stdio+srt    srt -s SETTINGS node server.js as a child (a sandbox, no HTTP)
//   srt-mcp      Streamable HTTP to srt-mcp on loopback, which runs the server in a sandbox
// For each: connect (spawn + initialize, one sample per run) and tools/call round trips (median
// and p95 over --calls). Figures only: nothing here fails on a number (bench/README.md).
//
//   node bench/mcp_bench.mjs --bin build/release/bin [--node-modules tests/mcp/node_modules]
//                            [--runs 5] [--calls 200]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const opt = { bin: 'build/release/bin', 'node-modules': 'tests/mcp/node_modules', runs: '5', calls: '200' };
for (let i = 2; i < process.argv.length; i += 2) opt[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const nm = resolve(opt['node-modules']);
const bin = resolve(opt.bin);
const sdk = (p) => import(pathToFileURL(join(nm, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');

const scratch = mkdtempSync(join(tmpdir(), 'srt-mcp-bench-'));
const server = join(nm, '@modelcontextprotocol/server-memory/dist/index.js');
const memoryFile = join(scratch, 'memory.jsonl');
const settings = { filesystem: { allowWrite: [scratch] }, network: { allowedDomains: [] } };
writeFileSync(join(scratch, 'settings.json'), JSON.stringify(settings));
writeFileSync(join(scratch, 'srt-mcp.json'), JSON.stringify({
  listen: { hostname: '127.0.0.1', port: 0 },
  servers: { memory: { command: process.execPath, args: [server], env: { MEMORY_FILE_PATH: memoryFile },
                       srt: settings } },
  limits: { maxSessionsPerClient: 64 },
}));

// srt-mcp on a free port; resolves with its URL once it logs `listening`.
const daemon = spawn(join(bin, 'srt-mcp'), ['--config', join(scratch, 'srt-mcp.json')],
                     { stdio: ['ignore', 'ignore', 'pipe'] });
const url = await new Promise((ok, fail) => {
  let buf = '';
  daemon.stderr.on('data', (d) => {
    buf += d;
    const m = buf.match(/"event":"listening".*?"port":(\d+)/);
    if (m) ok(`http://127.0.0.1:${m[1]}/mcp/memory`);
  });
  daemon.on('exit', (code) => fail(new Error(`srt-mcp exited ${code}: ${buf}`)));
});

const env = { ...process.env, MEMORY_FILE_PATH: memoryFile };
const ways = {
  'stdio': () => new StdioClientTransport({ command: process.execPath, args: [server], env, stderr: 'ignore' }),
  'stdio+srt': () => new StdioClientTransport({
    command: join(bin, 'srt'), args: ['-s', join(scratch, 'settings.json'), process.execPath, server], env,
    stderr: 'ignore' }),
  'srt-mcp': () => new StreamableHTTPClientTransport(new URL(url)),
};

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const rows = [];
for (const [name, make] of Object.entries(ways)) {
  const connects = [];
  const calls = [];
  for (let run = 0; run < Number(opt.runs); ++run) {
    const client = new Client({ name: 'srt-mcp-bench', version: '1.0.0' });
    const transport = make();
    let t0 = process.hrtime.bigint();
    await client.connect(transport);
    connects.push(ms(t0));
    for (let i = 0; i < 5; ++i) await client.callTool({ name: 'read_graph', arguments: {} });  // warm-up
    for (let i = 0; i < Number(opt.calls); ++i) {
      t0 = process.hrtime.bigint();
      await client.callTool({ name: 'read_graph', arguments: {} });
      calls.push(ms(t0));
    }
    if (transport.terminateSession) await transport.terminateSession();
    await client.close();
  }
  rows.push({ name, connect: pct(connects, 0.5), call50: pct(calls, 0.5), call95: pct(calls, 0.95) });
}
daemon.kill('SIGTERM');
await new Promise((ok) => daemon.on('exit', ok));
rmSync(scratch, { recursive: true, force: true });

console.log(`tools/call read_graph on server-memory, ${opt.runs} sessions x ${opt.calls} calls each`);
console.log('way         connect (median)   call median   call p95');
for (const r of rows) {
  console.log(`${r.name.padEnd(11)} ${r.connect.toFixed(1).padStart(10)} ms ${r.call50.toFixed(3).padStart(10)} ms ${r.call95.toFixed(3).padStart(8)} ms`);
}
