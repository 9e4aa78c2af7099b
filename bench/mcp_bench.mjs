// SPDX-License-Identifier: Apache-2.0
// srt-mcp's cost: the official MCP TypeScript SDK client calling @modelcontextprotocol/server-memory
// (read_graph, a cheap tool) three ways, each timed from the client:
//   stdio        node server.js as a child, unsandboxed (the floor)
//   stdio+srt    srt -s SETTINGS node server.js as a child (a sandbox, no HTTP)
//   srt-mcp      Streamable HTTP to srt-mcp on loopback, which runs the server in a sandbox
//   http-sse     the same client against a trivial node HTTP server in this process that answers
//   http-json    every POST at once (SSE, or one JSON body): what the SDK client and Node's
//                fetch cost per call on their own, the floor of any Streamable HTTP server
// The ways take turns run by run (interleaved), so that a change in the machine's load touches
// each alike.
// For each: connect (spawn + initialize, one sample per run) and tools/call round trips (median
// and p95 over --calls). Then srt-mcp alone: the first initialize after srt-mcp started (cold:
// nothing of node or the server in the page cache yet, a new sandbox) against later ones (warm:
// still a new sandbox each), sessions per second (initialize + DELETE, one at a time and four at
// once), and the memory an idle session costs (PSS of srt-mcp and everything below it, before
// and after --idle sessions). Figures only: nothing here fails on a number (bench/README.md).
//
//   node bench/mcp_bench.mjs --bin build/release/bin [--node-modules tests/mcp/node_modules]
//                            [--runs 5] [--calls 200]
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

// The floor: a loopback HTTP server (its own node process, as srt-mcp is its own process) that
// answers initialize and tools/call at once with a canned result the size of read_graph's, as one
// SSE event or as an application/json body; 202 for notifications, 405 for GET (no standalone
// stream) and DELETE.
function serveFloor(json) {
  const graph = JSON.stringify({ entities: [], relations: [] }, null, 2);
  const srv = createServer((req, res) => {
    if (req.method !== 'POST') { res.writeHead(405, { allow: 'POST' }).end(); return; }
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      const msg = JSON.parse(Buffer.concat(chunks).toString());
      if (msg.id === undefined) { res.writeHead(202).end(); return; }
      const result = msg.method === 'initialize'
        ? { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} },
            serverInfo: { name: 'floor', version: '1.0.0' } }
        : { content: [{ type: 'text', text: graph }], structuredContent: JSON.parse(graph) };
      const body = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result });
      if (json) {
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'floor' }).end(body);
      } else {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'floor' })
          .end(`event: message\ndata: ${body}\n\n`);
      }
    });
  });
  srv.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${srv.address().port}/mcp`));
}
const opt = { bin: 'build/release/bin', 'node-modules': 'tests/mcp/node_modules', runs: '5', calls: '200',
              sessions: '20', idle: '8' };
for (let i = 2; i < process.argv.length; i += 2) opt[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
if (opt['serve-floor']) {
  serveFloor(opt['serve-floor'] === 'json');
} else {
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
  limits: { maxSessionsPerClient: 64, maxSessions: 64 },
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

async function startFloor(kind) {
  const child = spawn(process.execPath, [process.argv[1], '--serve-floor', kind], { stdio: ['ignore', 'pipe', 'inherit'] });
  const u = await new Promise((ok) => child.stdout.once('data', (d) => ok(String(d).trim())));
  return [child, u];
}
const [sseServer, sseUrl] = await startFloor('sse');
const [jsonServer, jsonUrl] = await startFloor('json');

const env = { ...process.env, MEMORY_FILE_PATH: memoryFile };
const ways = {
  'stdio': () => new StdioClientTransport({ command: process.execPath, args: [server], env, stderr: 'ignore' }),
  'stdio+srt': () => new StdioClientTransport({
    command: join(bin, 'srt'), args: ['-s', join(scratch, 'settings.json'), process.execPath, server], env,
    stderr: 'ignore' }),
  'srt-mcp': () => new StreamableHTTPClientTransport(new URL(url)),
  'http-sse': () => new StreamableHTTPClientTransport(new URL(sseUrl)),
  'http-json': () => new StreamableHTTPClientTransport(new URL(jsonUrl)),
};

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
const loadBefore = load();

// PSS in KiB of `pid` and every process below it (srt-mcp, bwrap, srt-init, the servers).
function treePss(pid) {
  const children = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(d));
    } catch { /* gone */ }
  }
  let kib = 0;
  const todo = [pid];
  while (todo.length) {
    const p = todo.pop();
    try {
      const m = readFileSync(`/proc/${p}/smaps_rollup`, 'utf8').match(/^Pss:\s+(\d+) kB/m);
      if (m) kib += Number(m[1]);
    } catch { /* gone */ }
    todo.push(...(children.get(p) ?? []));
  }
  return kib;
}
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const rows = Object.keys(ways).map((name) => ({ name, connects: [], calls: [] }));
for (let run = 0; run < Number(opt.runs); ++run) {
  for (const row of rows) {
    const client = new Client({ name: 'srt-mcp-bench', version: '1.0.0' });
    const transport = ways[row.name]();
    let t0 = process.hrtime.bigint();
    await client.connect(transport);
    row.connects.push(ms(t0));
    for (let i = 0; i < 5; ++i) await client.callTool({ name: 'read_graph', arguments: {} });  // warm-up
    for (let i = 0; i < Number(opt.calls); ++i) {
      t0 = process.hrtime.bigint();
      await client.callTool({ name: 'read_graph', arguments: {} });
      row.calls.push(ms(t0));
    }
    if (transport.terminateSession) await transport.terminateSession();
    await client.close();
  }
}
for (const r of rows) Object.assign(r, { connect: pct(r.connects, 0.5), call50: pct(r.calls, 0.5), call95: pct(r.calls, 0.95) });
// srt-mcp alone. The first connect above (run 0 of 'srt-mcp') was the cold one.
const cold = rows.find((r) => r.name === 'srt-mcp').connects[0];
const warm = pct(rows.find((r) => r.name === 'srt-mcp').connects.slice(1), 0.5);
const serverStart = rows.find((r) => r.name === 'stdio').connect;

async function oneSession() {
  const client = new Client({ name: 'srt-mcp-bench', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  await transport.terminateSession();
  await client.close();
}
let t0 = process.hrtime.bigint();
for (let i = 0; i < Number(opt.sessions); ++i) await oneSession();
const serial = Number(opt.sessions) / (ms(t0) / 1000);
t0 = process.hrtime.bigint();
for (let i = 0; i < Number(opt.sessions); i += 4) await Promise.all([0, 1, 2, 3].map(oneSession));
const parallel = Math.ceil(Number(opt.sessions) / 4) * 4 / (ms(t0) / 1000);

await new Promise((ok) => setTimeout(ok, 3000));  // ended sessions' sandboxes gone
const before = treePss(daemon.pid);
const idle = [];
for (let i = 0; i < Number(opt.idle); ++i) {
  const client = new Client({ name: 'srt-mcp-bench', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  await client.callTool({ name: 'read_graph', arguments: {} });
  idle.push([client, transport]);
}
await new Promise((ok) => setTimeout(ok, 2000));
const after = treePss(daemon.pid);
for (const [client, transport] of idle) {
  await transport.terminateSession();
  await client.close();
}

sseServer.kill('SIGTERM');
jsonServer.kill('SIGTERM');
daemon.kill('SIGTERM');
await new Promise((ok) => daemon.on('exit', ok));
rmSync(scratch, { recursive: true, force: true });

console.log(`tools/call read_graph on server-memory, ${opt.runs} sessions x ${opt.calls} calls each`);
console.log('way         connect (median)   call median   call p95');
for (const r of rows) {
  console.log(`${r.name.padEnd(11)} ${r.connect.toFixed(1).padStart(10)} ms ${r.call50.toFixed(3).padStart(10)} ms ${r.call95.toFixed(3).padStart(8)} ms`);
}
const row = (n) => rows.find((r) => r.name === n);
const target = 1.2 * row('stdio').call50 + 0.5;
console.log(`target for srt-mcp's median (1.2 x stdio + 0.5 ms): ${target.toFixed(3)} ms; ` +
            `srt-mcp over the floor: ${(row('srt-mcp').call50 - row('http-sse').call50).toFixed(3)} ms (SSE), ` +
            `${(row('srt-mcp').call50 - row('http-json').call50).toFixed(3)} ms (JSON)`);
console.log(`srt-mcp initialize: cold ${cold.toFixed(1)} ms (first session after start), warm ${warm.toFixed(1)} ms ` +
            `(median of later ones; the server alone on stdio: ${serverStart.toFixed(1)} ms)`);
console.log(`srt-mcp sessions per second (initialize + DELETE): ${serial.toFixed(1)} one at a time, ` +
            `${parallel.toFixed(1)} four at once`);
console.log(`srt-mcp memory per idle session: ${((after - before) / Number(opt.idle) / 1024).toFixed(1)} MiB PSS ` +
            `(${opt.idle} sessions; srt-mcp and its sandboxes, ${(before / 1024).toFixed(1)} MiB before)`);
console.log(`load average before: ${loadBefore}; after: ${load()} (${(await import('node:os')).cpus().length} CPUs)`);
}  // not --serve-floor
