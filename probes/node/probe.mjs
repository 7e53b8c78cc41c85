// conformance probe for the Node.js `fs` API family (protocol 2, see ../PROTOCOL.md).
// Runs unchanged on Node.js (12.17 and later), Bun, and Deno (through node:fs); on Bun it also
// serves Bun's own API (family `bun`). It performs exactly the call a variant names and
// reports the raw result; it never judges the outcome. The session loop and the recipes live
// in ../shared/session.mjs (shared with ../deno/probe.ts).
//
// Old runtimes: the built-in modules are loaded with `import()`, `node:` first and the bare
// name second (Node before 12.20 and 14.13.1 has no `node:` specifiers; Deno before 2.x has no
// bare ones), and the file keeps to Node 12's syntax (no `??`, no `?.`, no top-level await).
import {
  Delivered, ffiMonotonicClock, runSession, runThreadWorker, unsupported, useClock, useModules, wallClock,
} from '../shared/session.mjs';

// Thread races (../PROTOCOL.md, "Threads"): the probe's workers run this same file. A worker
// knows itself by its data (worker_threads: `workerData`, Node and Bun) or its name (Deno's
// Web Worker).
const WORKER_NAME = 'conformance-worker';

function builtin(name) {
  return import(`node:${name}`).catch(() => import(name));
}

function runtimeInfo(process) {
  if (typeof Deno !== 'undefined') return { runtime: 'deno', version: Deno.version.deno };
  if (process.versions.bun) return { runtime: 'bun', version: process.versions.bun };
  return { runtime: 'node', version: process.versions.node };
}

// O_CREAT|O_EXCL|O_WRONLY as the host's own number, written out (not read from fs.constants),
// so that a runtime whose constants or flag translation differ from its host shows it:
// Linux (asm-generic/fcntl.h: O_WRONLY 01, O_CREAT 0100, O_EXCL 0200; the architectures below
// use those values), macOS (sys/fcntl.h: 0x0001, 0x0200, 0x0800) and Windows (libuv's
// UV_FS_O_* are the CRT's _O_WRONLY 0x0001, _O_CREAT 0x0100, _O_EXCL 0x0400).
const GENERIC_LINUX_ARCHES = ['x64', 'arm64', 'arm', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64'];
function hostLiteralCreateExclWrite(process) {
  if (process.platform === 'linux' && GENERIC_LINUX_ARCHES.indexOf(process.arch) >= 0) return 0o301;
  if (process.platform === 'darwin') return 0xa01;
  if (process.platform === 'win32') return 0x501;
  return null;
}

// The best clock for the barrier stamps (see ../PROTOCOL.md, "Clocks"): Node's
// process.hrtime.bigint() is the system's CLOCK_MONOTONIC on Linux (libuv's uv_hrtime);
// Bun's and Deno's count from their own start (measured), so they read CLOCK_MONOTONIC
// through their FFI (bun:ffi, Deno.dlopen: -A allows it on Deno 2; Deno 1 needs
// --unstable-ffi and falls back). Elsewhere, the wall clock.
function pickClock(process, info) {
  if (process.platform !== 'linux') return Promise.resolve(wallClock());
  if (info.runtime === 'node' && process.hrtime && typeof process.hrtime.bigint === 'function') {
    return Promise.resolve({ kind: 'monotonic', nowUs: () => Number(process.hrtime.bigint()) / 1e3 });
  }
  if (info.runtime === 'deno') {
    try {
      if (typeof Deno.dlopen !== 'function') return Promise.resolve(wallClock());
      const lib = Deno.dlopen('libc.so.6', { clock_gettime: { parameters: ['i32', 'buffer'], result: 'i32' } });
      const c = ffiMonotonicClock((ts) => lib.symbols.clock_gettime(1, new Uint8Array(ts.buffer)));
      return Promise.resolve(c || wallClock());
    } catch {
      return Promise.resolve(wallClock());
    }
  }
  return import('bun:ffi').then((ffi) => {
    const lib = ffi.dlopen('libc.so.6', { clock_gettime: { args: [ffi.FFIType.i32, ffi.FFIType.ptr], returns: ffi.FFIType.i32 } });
    return ffiMonotonicClock((ts) => lib.symbols.clock_gettime(1, ts)) || wallClock();
  }).catch(() => wallClock());
}

function main(fs, path, Buffer, process) {
  useModules({ fs, path, Buffer, process });
  const fsp = fs.promises;
  const info = runtimeInfo(process);
  const onBun = info.runtime === 'bun';
  const literal = hostLiteralCreateExclWrite(process);

  // Callback-style calls wrapped so that every variant is `() => Promise|void`; an error
  // passed to the callback is delivered as `callback`.
  const cb = (fn, ...args) => new Promise((resolve, reject) =>
    fn(...args, (err, value) => (err ? reject(new Delivered(err, 'callback')) : resolve(value))));

  function writeThroughFd(fd, data) {
    try { fs.writeSync(fd, data); } finally { fs.closeSync(fd); }
  }

  // createWriteStream(p, {flags}) then end(data): settles on 'close'. A synchronous throw of
  // the constructor or of end() propagates as `throw`; an 'error' event is kept and the
  // promise rejects with it (delivered as `error-event`) when 'close' comes. A stream that
  // never emits 'close' leaves the promise pending: the harness's timeout ends the attempt.
  function streamWrite(target, data, flags) {
    const s = fs.createWriteStream(target, { flags });
    let failed = null;
    const settled = new Promise((resolve, reject) => {
      s.on('error', (e) => { if (failed === null) failed = e; });
      s.on('close', () => (failed === null ? resolve() : reject(new Delivered(failed, 'error-event'))));
    });
    s.end(data);
    return settled;
  }

  const api = { fs, fsp, Bun: onBun ? Bun : undefined };

  // Each entry: (p) => the call, or {call, returns, needs} (see ../shared/session.mjs).
  // p = {target, source, data}. Returning a promise is fine.
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
    'node.openSync.numeric': (p) => writeThroughFd(
      fs.openSync(p.target, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY), p.data),
    'node.openSync.numeric-literal': {
      call: (p) => {
        if (literal === null) unsupported(`no literal O_CREAT|O_EXCL|O_WRONLY known for ${process.platform}/${process.arch}`);
        return writeThroughFd(fs.openSync(p.target, literal), p.data);
      },
    },
    'node.open.wx': (p) => new Promise((resolve, reject) => fs.open(p.target, 'wx', (err, fd) => {
      if (err) return reject(new Delivered(err, 'callback'));
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
    'node.createWriteStream.wx': { call: (p) => streamWrite(p.target, p.data, 'wx'), needs: ['fs.createWriteStream'] },
    'node.createWriteStream.ax': { call: (p) => streamWrite(p.target, p.data, 'ax'), needs: ['fs.createWriteStream'] },
    'node.copyFileSync.excl': { call: (p) => fs.copyFileSync(p.source, p.target, fs.constants.COPYFILE_EXCL), needs: ['fs.copyFileSync'] },
    'node.copyFileSync': { call: (p) => fs.copyFileSync(p.source, p.target), needs: ['fs.copyFileSync'] },
    'node.promises.copyFile.excl': { call: (p) => fsp.copyFile(p.source, p.target, fs.constants.COPYFILE_EXCL), needs: ['fsp.copyFile'] },
    'node.cpSync.errorOnExist': { call: (p) => fs.cpSync(p.source, p.target, { force: false, errorOnExist: true }), needs: ['fs.cpSync'] },
    'node.cpSync': { call: (p) => fs.cpSync(p.source, p.target), needs: ['fs.cpSync'] },
    'node.cpSync.recursive.errorOnExist': {
      call: (p) => fs.cpSync(p.source, p.target, { recursive: true, force: false, errorOnExist: true }),
      needs: ['fs.cpSync'],
    },
    'node.promises.cp.recursive': {
      call: (p) => fsp.cp(p.source, p.target, { recursive: true, force: true }),
      needs: ['fsp.cp'],
    },
    'node.renameSync': (p) => fs.renameSync(p.source, p.target),
    'node.promises.rename': (p) => fsp.rename(p.source, p.target),
    'node.linkSync': (p) => fs.linkSync(p.source, p.target),
    'node.symlinkSync': (p) => fs.symlinkSync(p.source, p.target),
    'node.mkdirSync': { call: (p) => fs.mkdirSync(p.target), returns: true },
    'node.mkdirSync.recursive': { call: (p) => fs.mkdirSync(p.target, { recursive: true }), returns: true },
    'node.promises.mkdir.recursive': { call: (p) => fsp.mkdir(p.target, { recursive: true }), returns: true },
    'node.existsSync+writeFileSync': (p) => {
      if (fs.existsSync(p.target)) {
        const e = new Error(`target exists (checked with existsSync): ${p.target}`);
        e.code = 'CHECK_EXISTS';
        throw e;
      }
      fs.writeFileSync(p.target, p.data);
    },
    'node.existsSync+renameSync': (p) => {
      if (fs.existsSync(p.target)) {
        const e = new Error(`target exists (checked with existsSync): ${p.target}`);
        e.code = 'CHECK_EXISTS';
        throw e;
      }
      fs.renameSync(p.source, p.target);
    },
  };

  // Bun's own API (family `bun`), offered only on Bun.
  if (onBun) {
    Object.assign(VARIANTS, {
      'bun.write': { call: (p) => Bun.write(p.target, p.data), returns: true, needs: ['Bun.write'] },
      'bun.write.file': { call: (p) => Bun.write(p.target, Bun.file(p.source)), returns: true, needs: ['Bun.write', 'Bun.file'] },
      'bun.file.writer': {
        call: (p) => {
          const w = Bun.file(p.target).writer();
          w.write(p.data);
          return w.end();
        },
        returns: true,
        needs: ['Bun.file'],
      },
      'bun.file.exists+write': {
        call: async (p) => {
          if (await Bun.file(p.target).exists()) {
            const e = new Error(`target exists (checked with Bun.file(p).exists()): ${p.target}`);
            e.code = 'CHECK_EXISTS';
            throw e;
          }
          return Bun.write(p.target, p.data);
        },
        needs: ['Bun.write', 'Bun.file'],
      },
    });
  }

  function rawError(e) {
    if (e === null || typeof e !== 'object') {
      return { type: typeof e, code: null, errno: null, hresult: null, message: String(e) };
    }
    return {
      type: (e.constructor && e.constructor.name) || e.name || 'Error',
      code: typeof e.code === 'string' ? e.code : null,
      errno: typeof e.errno === 'number' ? e.errno : null,
      hresult: null,
      message: String(e.message === undefined || e.message === null ? e : e.message),
    };
  }

  const probe = {
    variants: VARIANTS,
    api,
    params: (msg) => ({ target: msg.target, source: msg.source, data: Buffer.from(msg.token, 'utf8') }),
    rawError,
    writeMark: (mark, token) => fs.writeFileSync(mark, token),
  };
  return Promise.all([pickClock(process, info), threadPorts()]).then(([clock, ports]) => {
    useClock(clock);
    if (ports.worker) return runThreadWorker(probe, ports.worker);
    return runSession(Object.assign(probe, {
      probe: 'node',
      families: onBun ? ['node', 'bun'] : ['node'],
      runtime: info.runtime,
      version: info.version,
      pid: process.pid,
      threads: ports.spawn,
    }));
  });
}

// How this file runs as a worker of a thread race: `{worker}` (a port to the main thread) when
// it is one; else `{spawn}`, a function that starts a worker and returns a port to it, or null
// where the runtime has no workers. A port is `{post(msg), onMessage(fn), onError(fn)}`. Deno
// uses its Web Worker (`node:worker_threads` is an emulation on top of it there); Node and Bun
// `worker_threads`.
function threadPorts() {
  const self = import.meta.url;
  if (typeof Deno !== 'undefined') {
    if (typeof Worker !== 'function') return Promise.resolve({ spawn: null });
    if (globalThis.name === WORKER_NAME) {
      return Promise.resolve({
        worker: {
          post: (m) => globalThis.postMessage(m),
          onMessage: (fn) => { globalThis.onmessage = (e) => fn(e.data); },
        },
      });
    }
    return Promise.resolve({
      spawn: () => {
        const w = new Worker(self, { type: 'module', name: WORKER_NAME });
        return {
          post: (m) => w.postMessage(m),
          onMessage: (fn) => { w.onmessage = (e) => fn(e.data); },
          onError: (fn) => { w.onerror = (e) => { e.preventDefault(); fn(e.message); }; },
        };
      },
    });
  }
  return builtin('worker_threads').then((m) => {
    const wt = mod(m);
    if (!wt.isMainThread && wt.workerData === WORKER_NAME) {
      return {
        worker: {
          post: (msg) => wt.parentPort.postMessage(msg),
          onMessage: (fn) => wt.parentPort.on('message', fn),
        },
      };
    }
    return {
      spawn: () => {
        const w = new wt.Worker(new URL(self), { workerData: WORKER_NAME });
        return {
          post: (msg) => w.postMessage(msg),
          onMessage: (fn) => w.on('message', fn),
          onError: (fn) => w.on('error', fn),
        };
      },
    };
  }).catch(() => ({ spawn: null }));
}

const mod = (m) => (m && m.default ? m.default : m);
Promise.all([builtin('fs'), builtin('path'), builtin('buffer'), builtin('process')])
  .then(([fs, path, buffer, proc]) => main(mod(fs), mod(path), buffer.Buffer || mod(buffer).Buffer, mod(proc)))
  .catch((e) => {
    // eslint-disable-next-line no-console
    console.error(`probe: fatal: ${e && e.stack ? e.stack : e}`);
    if (typeof Deno !== 'undefined') Deno.exit(4);
    else if (typeof process !== 'undefined') process.exit(4);
  });
