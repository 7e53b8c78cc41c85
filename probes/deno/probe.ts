// conformance probe for Deno's own file-system API family (protocol 2, see ../PROTOCOL.md).
// Run with `deno run -A probe.ts`. It performs exactly the call a variant names and reports
// the raw result; it never judges the outcome. Deno's node:fs variants are served by
// ../node/probe.mjs, which Deno runs as well. The session loop and the recipes live in
// ../shared/session.mjs (shared with ../node/probe.mjs).
import * as fs from "node:fs";
import * as path from "node:path";
import { Buffer } from "node:buffer";
import process from "node:process";
import {
  ffiMonotonicClock,
  LineReader,
  OS_LOCKS,
  osLockHolder,
  RECIPES,
  WATCHER,
  runSession,
  runThreadWorker,
  useClock,
  useModules,
  wallClock,
} from "../shared/session.mjs";

useModules({ fs, path, Buffer, process });

// The barrier stamps' clock (../PROTOCOL.md, "Clocks"): Deno's performance.now() and
// process.hrtime.bigint() count from the process's own start (measured on 1.46.3, 2.0.0 and
// 2.9.6), and performance.timeOrigin, the wall-clock time of that start, was off by tens of
// milliseconds per process on 2.0.0 (issue 11) — so CLOCK_MONOTONIC is read through
// Deno.dlopen (FFI; allowed by -A on Deno 2, behind --unstable-ffi on Deno 1, where the wall
// clock is used instead). Linux only.
function pickClock() {
  try {
    if (Deno.build.os !== "linux" || typeof Deno.dlopen !== "function") return wallClock();
    const lib = Deno.dlopen("libc.so.6", { clock_gettime: { parameters: ["i32", "buffer"], result: "i32" } });
    return ffiMonotonicClock((ts: BigInt64Array) => lib.symbols.clock_gettime(1, new Uint8Array(ts.buffer))) ?? wallClock();
  } catch {
    return wallClock();
  }
}
useClock(pickClock());

const enc = new TextEncoder();

// Deno's own change notifications (docs/HANDOFF.md, "watch"): Deno.watchFs
// (https://docs.deno.com/api/deno/~/Deno.watchFs), each event's paths given by their file name.
WATCHER.start = (dir: string, onName: (name: string) => void) => {
  const w = Deno.watchFs(dir, { recursive: false });
  (async () => {
    try {
      for await (const ev of w) for (const p of ev.paths) onName(path.basename(p));
    } catch {
      // closed
    }
  })();
  return () => w.close();
};

// Deno's own file lock (docs/HANDOFF.md, "os-lock"): FsFile.lockSync(true), an exclusive
// flock(2) on Linux (https://docs.deno.com/api/deno/~/Deno.FsFile.prototype.lock). Its lock()
// waits instead of refusing, so a second holder's try races it against a timer; a lock still
// pending then is released and closed once it comes (when the holder lets go). Deno 1 had it
// only as the unstable Deno.flock: such a Deno lists no os-lock.flock.
function openForLock(p: string): Deno.FsFile {
  return Deno.openSync(p, { read: true, write: true });
}
if (typeof Deno.FsFile?.prototype?.lockSync === "function") {
  OS_LOCKS["os-lock.flock"] = {
    take(p: string) {
      const f = openForLock(p);
      try {
        f.lockSync(true);
      } catch (e) {
        f.close();
        throw e;
      }
      return { release: () => (f.unlockSync(), f.close()) };
    },
    async tryTake(p: string, waitMs: number) {
      const f = openForLock(p);
      const got = f.lock(true).then(() => true);
      let timer: number | undefined;
      const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
      let held: boolean;
      try {
        held = await Promise.race([got, late]);
      } catch (e) {
        f.close();
        throw e;
      } finally {
        clearTimeout(timer);
      }
      if (held) return { release: () => (f.unlockSync(), f.close()) };
      got.then(() => f.unlockSync(), () => {}).finally(() => {
        try {
          f.close();
        } catch {
          // already closed
        }
      });
      return null;
    },
  };
  RECIPES["os-lock.flock"] = osLockHolder("os-lock.flock");
}

function send(obj: unknown): void {
  const bytes = enc.encode(JSON.stringify(obj) + "\n");
  let off = 0;
  while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
}

interface Params {
  target: string;
  source: string | null;
  data: Uint8Array;
  text: string;
}

function writeThroughFile(f: Deno.FsFile, data: Uint8Array): void {
  try {
    let off = 0;
    while (off < data.length) off += f.writeSync(data.subarray(off));
  } finally {
    f.close();
  }
}

async function writeThroughFileAsync(f: Deno.FsFile, data: Uint8Array): Promise<void> {
  try {
    let off = 0;
    while (off < data.length) off += await f.write(data.subarray(off));
  } finally {
    f.close();
  }
}

function checkExists(p: Params): void {
  let exists = true;
  try {
    Deno.statSync(p.target);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    exists = false;
  }
  if (exists) {
    const err = new Error(`target exists (checked with statSync): ${p.target}`);
    err.name = "CheckExists";
    throw err;
  }
}

type Call = (p: Params) => unknown;

const VARIANTS: Record<string, Call> = {
  "deno.writeFileSync.createNew": (p) => Deno.writeFileSync(p.target, p.data, { createNew: true }),
  "deno.writeFileSync": (p) => Deno.writeFileSync(p.target, p.data),
  "deno.writeFile.createNew": (p) => Deno.writeFile(p.target, p.data, { createNew: true }),
  "deno.writeTextFileSync.createNew": (p) => Deno.writeTextFileSync(p.target, p.text, { createNew: true }),
  "deno.writeFileSync.append": (p) => Deno.writeFileSync(p.target, p.data, { append: true }),
  "deno.openSync.createNew": (p) => writeThroughFile(Deno.openSync(p.target, { write: true, createNew: true }), p.data),
  "deno.openSync.create": (p) =>
    writeThroughFile(Deno.openSync(p.target, { write: true, create: true, truncate: true }), p.data),
  "deno.open.createNew": async (p) =>
    writeThroughFileAsync(await Deno.open(p.target, { write: true, createNew: true }), p.data),
  "deno.create": async (p) => writeThroughFileAsync(await Deno.create(p.target), p.data),
  "deno.open.createNew.writable": async (p) => {
    const f = await Deno.open(p.target, { write: true, createNew: true });
    const w = f.writable.getWriter();
    await w.write(p.data);
    await w.close();
  },
  "deno.copyFileSync": (p) => Deno.copyFileSync(p.source!, p.target),
  "deno.renameSync": (p) => Deno.renameSync(p.source!, p.target),
  "deno.linkSync": (p) => Deno.linkSync(p.source!, p.target),
  "deno.symlinkSync": (p) => Deno.symlinkSync(p.source!, p.target),
  "deno.mkdirSync": (p) => Deno.mkdirSync(p.target),
  "deno.mkdirSync.recursive": (p) => Deno.mkdirSync(p.target, { recursive: true }),
  "deno.statSync+writeFileSync": (p) => {
    checkExists(p);
    Deno.writeFileSync(p.target, p.data);
  },
  "deno.statSync+renameSync": (p) => {
    checkExists(p);
    Deno.renameSync(p.source!, p.target);
  },
};

// deno-lint-ignore no-explicit-any
function rawError(e: any) {
  if (e === null || typeof e !== "object") {
    return { type: typeof e, code: null, errno: null, hresult: null, message: String(e) };
  }
  return {
    type: e.name || (e.constructor && e.constructor.name) || "Error",
    code: typeof e.code === "string" ? e.code : null,
    errno: typeof e.errno === "number" ? e.errno : null,
    hresult: null,
    message: String(e.message ?? e),
  };
}

// Synchronous line reader on stdin (Deno's own API): keeps the release path free of
// event-loop latency.
const reader = new LineReader((chunk: Uint8Array) => Deno.stdin.readSync(chunk) ?? 0);

function fatal(msg: string, code: number): never {
  console.error(`probe: ${msg}`);
  Deno.exit(code);
}

// Thread races (../PROTOCOL.md, "Threads"): the workers are Web Workers running this same
// file, which knows itself a worker by its name.
const WORKER_NAME = "conformance-worker";
const probe = {
  variants: VARIANTS,
  // deno-lint-ignore no-explicit-any
  params: (msg: any): Params => ({ target: msg.target, source: msg.source, data: enc.encode(msg.token), text: msg.token }),
  rawError,
  writeMark: (mark: string, token: string) => Deno.writeTextFileSync(mark, token),
};

// deno-lint-ignore no-explicit-any
const scope = globalThis as any;
if (scope.name === WORKER_NAME) {
  runThreadWorker(probe, {
    post: (m: unknown) => scope.postMessage(m),
    onMessage: (fn: (m: unknown) => void) => {
      scope.onmessage = (e: MessageEvent) => fn(e.data);
    },
  });
} else {
  runSession({
    ...probe,
    probe: "deno",
    families: ["deno"],
    runtime: "deno",
    version: Deno.version.deno,
    pid: Deno.pid,
    reader,
    send,
    diag: (msg: string) => console.error(`probe: ${msg}`),
    exit: (code: number) => Deno.exit(code),
    threads: () => {
      const w = new Worker(import.meta.url, { type: "module", name: WORKER_NAME });
      return {
        post: (m: unknown) => w.postMessage(m),
        onMessage: (fn: (m: unknown) => void) => {
          w.onmessage = (e: MessageEvent) => fn(e.data);
        },
        onError: (fn: (e: unknown) => void) => {
          w.onerror = (e: ErrorEvent) => {
            e.preventDefault();
            fn(e.message);
          };
        },
      };
    },
  }).catch((e) => fatal(`fatal: ${e?.stack ?? e}`, 4));
}
