// conformance probe for the Node.js `fs` API family (protocol 2, see ../PROTOCOL.md).
// Runs unchanged on Node.js, Bun and Deno (through node:fs). It performs exactly the
// call a variant names and reports the raw result; it never judges the outcome. The
// session loop and the recipes live in ../shared/session.mjs (shared with ../deno/probe.ts).
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { Buffer } from 'node:buffer';
import process from 'node:process';
import { runSession } from '../shared/session.mjs';

function runtimeInfo() {
  if (typeof Deno !== 'undefined') return { runtime: 'deno', version: Deno.version.deno };
  if (process.versions.bun) return { runtime: 'bun', version: process.versions.bun };
  return { runtime: 'node', version: process.versions.node };
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

runSession({
  probe: 'node',
  families: ['node'],
  ...runtimeInfo(),
  pid: process.pid,
  variants: VARIANTS,
  params: (msg) => ({ target: msg.target, source: msg.source, data: Buffer.from(msg.token, 'utf8') }),
  rawError,
  writeMark: (mark, token) => fs.writeFileSync(mark, token),
}).catch((e) => {
  process.stderr.write(`probe: fatal: ${e && e.stack ? e.stack : e}\n`);
  process.exit(4);
});
