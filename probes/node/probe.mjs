// conformance probe for the Node.js `fs` API family (protocol 1, see ../PROTOCOL.md).
// Runs unchanged on Node.js, Bun and Deno (through node:fs). It performs exactly the
// call a variant names and reports the raw result; it never judges the outcome.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { Buffer } from 'node:buffer';
import process from 'node:process';

const PROTOCOL = 1;

function runtimeInfo() {
  if (typeof Deno !== 'undefined') return { runtime: 'deno', version: Deno.version.deno };
  if (process.versions.bun) return { runtime: 'bun', version: process.versions.bun };
  return { runtime: 'node', version: process.versions.node };
}

function nowUs() {
  return (performance.timeOrigin + performance.now()) * 1000;
}

function send(obj) {
  fs.writeSync(1, JSON.stringify(obj) + '\n');
}

// Callback-style calls wrapped so that every variant is `() => Promise|void`.
const cb = (fn, ...args) => new Promise((resolve, reject) =>
  fn(...args, (err) => (err ? reject(err) : resolve())));

function writeThroughFd(fd, data) {
  try { fs.writeSync(fd, data); } finally { fs.closeSync(fd); }
}

// Each entry: (p) => the call. p = {target, source, data}. Returning a promise is fine.
const VARIANTS = {
  'node.writeFileSync.wx': (p) => fs.writeFileSync(p.target, p.data, { flag: 'wx' }),
  'node.writeFileSync.w': (p) => fs.writeFileSync(p.target, p.data),
  'node.writeFile.wx': (p) => cb(fs.writeFile, p.target, p.data, { flag: 'wx' }),
  'node.writeFile.w': (p) => cb(fs.writeFile, p.target, p.data),
  'node.promises.writeFile.wx': (p) => fsp.writeFile(p.target, p.data, { flag: 'wx' }),
  'node.promises.writeFile.w': (p) => fsp.writeFile(p.target, p.data),
  'node.appendFileSync.ax': (p) => fs.appendFileSync(p.target, p.data, { flag: 'ax' }),
  'node.appendFileSync.a': (p) => fs.appendFileSync(p.target, p.data),
  'node.appendFile.ax': (p) => cb(fs.appendFile, p.target, p.data, { flag: 'ax' }),
  'node.appendFile.a': (p) => cb(fs.appendFile, p.target, p.data),
  'node.promises.appendFile.ax': (p) => fsp.appendFile(p.target, p.data, { flag: 'ax' }),
  'node.promises.appendFile.a': (p) => fsp.appendFile(p.target, p.data),
  'node.openSync.wx': (p) => writeThroughFd(fs.openSync(p.target, 'wx'), p.data),
  'node.openSync.w': (p) => writeThroughFd(fs.openSync(p.target, 'w'), p.data),
  'node.open.wx': (p) => new Promise((resolve, reject) => fs.open(p.target, 'wx', (err, fd) => {
    if (err) return reject(err);
    try { writeThroughFd(fd, p.data); resolve(); } catch (e) { reject(e); }
  })),
  'node.promises.open.wx': async (p) => {
    const h = await fsp.open(p.target, 'wx');
    try { await h.writeFile(p.data); } finally { await h.close(); }
  },
  'node.promises.open.w': async (p) => {
    const h = await fsp.open(p.target, 'w');
    try { await h.writeFile(p.data); } finally { await h.close(); }
  },
  'node.copyFileSync.excl': (p) => fs.copyFileSync(p.source, p.target, fs.constants.COPYFILE_EXCL),
  'node.copyFileSync': (p) => fs.copyFileSync(p.source, p.target),
  'node.promises.copyFile.excl': (p) => fsp.copyFile(p.source, p.target, fs.constants.COPYFILE_EXCL),
  'node.cpSync.errorOnExist': (p) => fs.cpSync(p.source, p.target, { force: false, errorOnExist: true }),
  'node.cpSync': (p) => fs.cpSync(p.source, p.target),
  'node.renameSync': (p) => fs.renameSync(p.source, p.target),
  'node.promises.rename': (p) => fsp.rename(p.source, p.target),
  'node.linkSync': (p) => fs.linkSync(p.source, p.target),
  'node.symlinkSync': (p) => fs.symlinkSync(p.source, p.target),
  'node.mkdirSync': (p) => fs.mkdirSync(p.target),
  'node.mkdirSync.recursive': (p) => fs.mkdirSync(p.target, { recursive: true }),
  'node.promises.mkdir.recursive': (p) => fsp.mkdir(p.target, { recursive: true }),
  'node.existsSync+writeFileSync': (p) => {
    if (fs.existsSync(p.target)) {
      const e = new Error(`target exists (checked with existsSync): ${p.target}`);
      e.code = 'CHECK_EXISTS';
      throw e;
    }
    fs.writeFileSync(p.target, p.data);
  },
};

function rawError(e) {
  if (e === null || typeof e !== 'object') {
    return { type: typeof e, code: null, errno: null, hresult: null, message: String(e) };
  }
  return {
    type: (e.constructor && e.constructor.name) || e.name || 'Error',
    code: typeof e.code === 'string' ? e.code : null,
    errno: typeof e.errno === 'number' ? e.errno : null,
    hresult: null,
    message: String(e.message ?? e),
  };
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

// Synchronous line reader on stdin: keeps the release path free of event-loop latency.
// Node may leave fd 0 non-blocking (a pipe shared with libuv), which would turn readSync into
// a busy loop on EAGAIN; on Linux and macOS, opening /dev/stdin gives a fresh, blocking file
// description of the same pipe. Elsewhere (Windows) fd 0 is read directly.
function stdinFd() {
  if (process.platform === 'win32') return 0;
  try { return fs.openSync('/dev/stdin', 'r'); } catch { return 0; }
}

const reader = {
  fd: stdinFd(),
  buf: Buffer.alloc(0),
  chunk: Buffer.alloc(65536),
  next() {
    for (;;) {
      const nl = this.buf.indexOf(10);
      if (nl >= 0) {
        const line = this.buf.subarray(0, nl).toString('utf8');
        this.buf = this.buf.subarray(nl + 1);
        return line;
      }
      let n;
      try {
        n = fs.readSync(this.fd, this.chunk, 0, this.chunk.length, null);
      } catch (e) {
        if (e.code === 'EAGAIN') { Atomics.wait(sleeper, 0, 0, 1); continue; }
        if (e.code === 'EOF') return null;
        throw e;
      }
      if (n === 0) return null;
      this.buf = Buffer.concat([this.buf, this.chunk.subarray(0, n)]);
    }
  },
};

async function main() {
  const info = runtimeInfo();
  send({ protocol: PROTOCOL, type: 'hello', probe: 'node', families: ['node'], ...info, pid: process.pid });
  let prepared = null;
  for (;;) {
    const line = reader.next();
    if (line === null) break;
    if (line.trim() === '') continue;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      process.stderr.write(`probe: not JSON: ${line}\n`);
      process.exit(3);
    }
    if (msg.type === 'quit') break;
    if (msg.type === 'prepare') {
      const fn = VARIANTS[msg.variant];
      if (!fn) {
        prepared = null;
        send({ type: 'ready', id: msg.id, supported: false, reason: `unknown variant ${msg.variant}` });
        continue;
      }
      prepared = {
        id: msg.id,
        fn,
        p: { target: msg.target, source: msg.source, data: Buffer.from(msg.token, 'utf8') },
        mark: msg.mark,
        token: msg.token,
      };
      send({ type: 'ready', id: msg.id, supported: true });
      continue;
    }
    if (msg.type === 'go') {
      if (!prepared || prepared.id !== msg.id) {
        process.stderr.write(`probe: go ${msg.id} without prepare\n`);
        process.exit(3);
      }
      const { fn, p, mark, token } = prepared;
      prepared = null;
      let ok = true;
      let error = null;
      const t0 = nowUs();
      try {
        const r = fn(p);
        if (r && typeof r.then === 'function') await r;
      } catch (e) {
        ok = false;
        error = rawError(e);
      }
      const t1 = nowUs();
      if (ok && mark) {
        try {
          fs.writeFileSync(mark, token);
        } catch (e) {
          ok = false;
          error = { ...rawError(e), type: 'MarkError' };
        }
      }
      send({ type: 'result', id: msg.id, ok, t0_us: t0, t1_us: t1, error });
      continue;
    }
    process.stderr.write(`probe: unknown message type ${msg.type}\n`);
    process.exit(3);
  }
  process.exit(0);
}

main().catch((e) => {
  process.stderr.write(`probe: fatal: ${e && e.stack ? e.stack : e}\n`);
  process.exit(4);
});
