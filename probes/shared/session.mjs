// The session loop of ../PROTOCOL.md (protocol 2; a v1 harness sees nothing new unless it
// asks for it), shared by the Node/Bun probe (../node/probe.mjs) and the Deno probe
// (../deno/probe.ts). Node, Bun and Deno all import this file as plain JavaScript.
//
// What lives here: reading lines from stdin, the dispatch of hello / prepare -> ready /
// go -> result / stop / quit, the timestamps, and the recipes (named multi-step routines,
// written with node:fs, so each runtime runs the same steps). What stays in each probe: its
// variants (one call each), how it spells a raw error, how it writes a mark file, and how it
// reads stdin and writes stdout (each probe keeps the I/O it had under protocol 1).
//
// A probe never judges an outcome: it performs the call or the recipe's steps and reports
// what they returned; read.poll only counts what it read, by a mechanical rule the harness
// chose (params.expect).
//
// This file imports nothing: each probe hands it the runtime's modules (`useModules`), so
// that the Node/Bun probe can load them by the specifier its runtime understands (Node
// before 12.20 and 14.13.1 knows no `node:` specifiers; Deno before 2.x knows no bare ones),
// and it keeps to the syntax of Node 12 (no `??`, no `?.`, no `Object.hasOwn`), the oldest
// runtime the probes support (see ../PROTOCOL.md, "Oldest runtimes").
let fs;
let path;
let Buffer;
let process;

/**
 * Hands this module the runtime's `fs`, `path`, `Buffer` and `process` (objects with Node's
 * API: `node:fs`, `node:path`, `node:buffer`'s Buffer, `node:process`). Call it once, before
 * anything else of this module.
 */
export function useModules(m) {
  fs = m.fs;
  path = m.path;
  Buffer = m.Buffer;
  process = m.process;
}

/** True when `o` has its own property `k` (Object.hasOwn, which Node 12 lacks). */
export function hasOwn(o, k) {
  return Object.prototype.hasOwnProperty.call(o, k);
}

/** The protocol version these probes speak. */
export const PROTOCOL = 2;

/** At most this many raw errors travel in a result's `errors_sample`. */
export const ERRORS_SAMPLE_MAX = 8;

/**
 * A clock for the `*_us` stamps: `{ kind, nowUs }`. `kind` is what the hello announces as
 * `clock`: `monotonic` (the system-wide monotonic clock in microseconds, CLOCK_MONOTONIC on
 * Linux, the same for every process, so stamps of different contenders compare) or `wall`
 * (microseconds since the Unix epoch). `nowUs()` returns a float. Each probe picks the best
 * clock its runtime gives (see `nodeClock` and the Deno probe).
 */
export function wallClock() {
  if (typeof performance !== 'undefined' && typeof performance.timeOrigin === 'number') {
    return { kind: 'wall', nowUs: () => (performance.timeOrigin + performance.now()) * 1000 };
  }
  return { kind: 'wall', nowUs: () => Date.now() * 1000 };
}

let clock = null;

/** Stamps in microseconds on the probe's clock (see `wallClock`); the clock `useClock` set, else the wall clock. */
export function nowUs() {
  if (clock === null) clock = wallClock();
  return clock.nowUs();
}

/** Sets the clock of every stamp (`{kind, nowUs}`). */
export function useClock(c) {
  clock = c;
}

/**
 * The system monotonic clock read through a C call, for runtimes whose JavaScript clocks all
 * start at the process's own start (measured on Linux: Bun 1.1.44 and 1.4.5 and Deno 1.46 to
 * 2.9.6 return `process.hrtime.bigint()` counted from process start; Node's counts from the
 * system's CLOCK_MONOTONIC, libuv's `uv_hrtime`). `call(buf)` must run
 * `clock_gettime(CLOCK_MONOTONIC, buf)` on a 16-byte buffer (struct timespec of 64-bit Linux:
 * seconds, then nanoseconds, both int64) and return its result. Linux only (CLOCK_MONOTONIC is
 * 1 there, `<linux/time.h>`). Returns a clock, or null when the call fails or is not Linux.
 */
export function ffiMonotonicClock(call) {
  if (process.platform !== 'linux') return null;
  const ts = new BigInt64Array(2);
  const read = () => {
    if (call(ts) !== 0) throw new Error('clock_gettime(CLOCK_MONOTONIC) failed');
    return Number(ts[0]) * 1e6 + Number(ts[1]) / 1e3;
  };
  try {
    read();
  } catch {
    return null;
  }
  return { kind: 'monotonic', nowUs: read };
}

/** Milliseconds on a monotonic clock, for pacing and waiting in loops (never sent). */
function nowMs() {
  if (process && process.hrtime && typeof process.hrtime.bigint === 'function') return Number(process.hrtime.bigint()) / 1e6;
  return Date.now();
}

/** `v`, or `fallback` when `v` is undefined or null (the `??` that Node 12 lacks). */
export function orDefault(v, fallback) {
  return v === undefined || v === null ? fallback : v;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
const NL = 10;
let utf8 = null;

/**
 * Lines of stdin. `readChunk(chunk)` fills `chunk` (a Uint8Array) with what stdin has,
 * blocking until there is something, and returns the byte count (0 at end of input).
 * `next()` blocks for a line; `poll()` never blocks (used only while a loop recipe runs).
 */
export class LineReader {
  constructor(readChunk) {
    this.readChunk = readChunk;
    this.buf = new Uint8Array(0);
    this.chunk = new Uint8Array(65536);
    this.eof = false;
    this.back = [];
    this.pollFd = undefined;
    this.pollProblem = undefined;
  }

  take() {
    const nl = this.buf.indexOf(NL);
    if (nl < 0) return undefined;
    if (utf8 === null) utf8 = new TextDecoder('utf-8');
    const line = utf8.decode(this.buf.subarray(0, nl));
    this.buf = this.buf.slice(nl + 1);
    return line;
  }

  append(n) {
    const merged = new Uint8Array(this.buf.length + n);
    merged.set(this.buf);
    merged.set(this.chunk.subarray(0, n), this.buf.length);
    this.buf = merged;
  }

  /** Puts a line back: the next `next()` or `poll()` returns it first. */
  unread(line) {
    this.back.push(line);
  }

  /** The next line (blocking), or null at end of input. */
  next() {
    if (this.back.length) return this.back.shift();
    for (;;) {
      const line = this.take();
      if (line !== undefined) return line;
      if (this.eof) return null;
      const n = this.readChunk(this.chunk);
      if (!n) {
        this.eof = true;
        return null;
      }
      this.append(n);
    }
  }

  /**
   * Why this probe cannot poll stdin without blocking, or null when it can. Polling reads
   * the same pipe through a second, non-blocking file description (`/dev/stdin` opened with
   * O_NONBLOCK), which only Linux gives (macOS's /dev/stdin is a dup of fd 0, and making
   * fd 0 non-blocking would slow every release).
   */
  pollReason() {
    if (this.pollFd !== undefined) return null;
    if (this.pollProblem !== undefined) return this.pollProblem;
    if (process.platform !== 'linux') {
      this.pollProblem = `polling stdin for stop needs a second, non-blocking /dev/stdin, which this probe opens on Linux only (this is ${process.platform})`;
      return this.pollProblem;
    }
    try {
      this.pollFd = fs.openSync('/dev/stdin', fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      return null;
    } catch (e) {
      this.pollProblem = `cannot open /dev/stdin non-blocking to poll for stop: ${e && e.message ? e.message : e}`;
      return this.pollProblem;
    }
  }

  /** A complete line if one is there without waiting; null at end of input; undefined otherwise. */
  poll() {
    if (this.back.length) return this.back.shift();
    const line = this.take();
    if (line !== undefined) return line;
    if (this.eof) return null;
    if (this.pollReason() !== null) throw new Error(this.pollReason());
    for (;;) {
      let n;
      try {
        n = fs.readSync(this.pollFd, this.chunk, 0, this.chunk.length, null);
      } catch (e) {
        if (e.code === 'EAGAIN' || e.code === 'EWOULDBLOCK') return undefined;
        throw e;
      }
      if (n === 0) {
        this.eof = true;
        return null;
      }
      this.append(n);
      const got = this.take();
      if (got !== undefined) return got;
    }
  }
}

// Node and Bun: a synchronous reader keeps the release path free of event-loop latency.
// Node may leave fd 0 non-blocking (a pipe shared with libuv), which would turn readSync into
// a busy loop on EAGAIN; on Linux, opening /dev/stdin gives a fresh, blocking file
// description of the same pipe (it is opened on macOS too). On Windows fd 0 is read directly.
function stdinFd() {
  if (process.platform === 'win32') return 0;
  try { return fs.openSync('/dev/stdin', 'r'); } catch { return 0; }
}

/** The stdin reader of the Node/Bun probe (node:fs, blocking). */
export function nodeStdinReader() {
  const fd = stdinFd();
  return new LineReader((chunk) => {
    for (;;) {
      try {
        return fs.readSync(fd, chunk, 0, chunk.length, null);
      } catch (e) {
        if (e.code === 'EAGAIN') { Atomics.wait(sleeper, 0, 0, 1); continue; }
        if (e.code === 'EOF') return 0;
        throw e;
      }
    }
  });
}

/** One protocol line on stdout through node:fs. */
export function nodeSend(obj) {
  fs.writeSync(1, JSON.stringify(obj) + '\n');
}

function nodeDiag(msg) {
  process.stderr.write(`probe: ${msg}\n`);
}

// ---- recipes ------------------------------------------------------------------------------
//
// A recipe is `{ prepare(req, ctx) }`. prepare runs before `ready`: it checks the request and
// returns the routine `run(ctx)`, or throws Unsupported(reason). `run` returns (or resolves to)
// `{ ok, error, step, counters?, errors_sample? }`: `step` names the step that failed (null on
// success), `error` is that step's raw error. req = {id, target, source, token, data (the token's
// UTF-8 bytes), params, role, scenario}; ctx = {rawError, reader, stopRequested()}.

/** Thrown (through `unsupported`) by a recipe's or a variant's preparation that cannot run here. */
export class Unsupported extends Error {}

/** Throws Unsupported(reason): the attempt is answered `supported:false` with the reason. */
export function unsupported(reason) {
  throw new Unsupported(reason);
}

function writeAll(fd, data) {
  let off = 0;
  while (off < data.length) off += fs.writeSync(fd, data, off, data.length - off);
}

function stringParam(req, name, fallback) {
  const v = req.params[name];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'string' || v === '') unsupported(`params.${name} must be a non-empty string`);
  return v;
}

function boolParam(req, name) {
  const v = req.params[name];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') unsupported(`params.${name} must be true or false`);
  return v;
}

/**
 * The content a publish recipe writes: the token's UTF-8 bytes, or, with params.size (bytes,
 * 1 to 16 MiB), the framed content `conformance-publish <token> <size>\n`, then `size` bytes
 * of `<token>\n` repeated (the last copy cut), then `end <token>\n` — the same bytes the
 * harness computes (src/scenario/publish.rs, `framed`), so a reader can tell a complete file
 * from a torn one by comparing bytes, with no rule of its own.
 */
export function publishContent(req) {
  const size = req.params.size;
  if (size === undefined || size === null) return req.data;
  if (!Number.isInteger(size) || size < 1 || size > 16 * 1024 * 1024) unsupported('params.size must be an integer from 1 to 16777216');
  const line = Buffer.from(`${req.token}\n`, 'utf8');
  const payload = Buffer.alloc(size);
  for (let off = 0; off < size; off += line.length) line.copy(payload, off, 0, Math.min(line.length, size - off));
  return Buffer.concat([Buffer.from(`conformance-publish ${req.token} ${size}\n`, 'utf8'), payload, Buffer.from(`end ${req.token}\n`, 'utf8')]);
}

/** Largest single write of the publish recipes (bytes): a framed file takes several writes. */
const PUBLISH_CHUNK = 4096;

function writeChunks(fd, data) {
  for (let off = 0; off < data.length; off += PUBLISH_CHUNK) writeAll(fd, data.subarray(off, Math.min(off + PUBLISH_CHUNK, data.length)));
}

/** The default temp name of publish.temp-rename: beside the target, unique per process and attempt. */
export function defaultTempName(target, id, pid) {
  return path.join(path.dirname(target), `.${path.basename(target)}.${pid}.${id}.tmp`);
}

/** Rounds without progress after which a claim worker gives up (see claimWorker). */
const CLAIM_STUCK_ROUNDS = 100000;

function claimWorker(method) {
  const moves = method === 'rename' || method === 'fs-extra';
  return {
    prepare(req, ctx) {
      const incoming = stringParam(req, 'incoming', null);
      const output = stringParam(req, 'output', null);
      const processing = moves ? stringParam(req, 'processing', null) : null;
      if (incoming === null || output === null || (moves && processing === null)) {
        unsupported('claim workers need params.incoming, params.output (and params.processing to move into)');
      }
      const library = method === 'fs-extra' ? stringParam(req, 'library', null) : null;
      if (method === 'fs-extra' && library === null) {
        unsupported('claim.fs-extra-move needs params.library, the node_modules folder the harness installed fs-extra into');
      }
      const work = (move) => {
        const c = { rounds: 0, listed: 0, claimed: 0, claim_failed: 0, delete_failed: 0, processed: 0 };
        const sample = [];
        const fail = (e) => { if (sample.length < ERRORS_SAMPLE_MAX) sample.push(ctx.rawError(e)); };
        let out;
        try {
          out = fs.openSync(output, 'a');
        } catch (e) {
          return { ok: false, error: ctx.rawError(e), step: 'output', counters: c, errors_sample: sample };
        }
        try {
          let idle = 0;
          for (;;) {
            c.rounds++;
            let names;
            try {
              names = fs.readdirSync(incoming).filter((n) => !n.endsWith('.claim'));
            } catch (e) {
              return { ok: false, error: ctx.rawError(e), step: 'list', counters: c, errors_sample: sample };
            }
            if (names.length === 0) break;
            let progress = false;
            for (const name of names) {
              c.listed++;
              const item = path.join(incoming, name);
              let at = item;
              let data;
              try {
                if (method === 'rename') {
                  at = path.join(processing, name);
                  fs.renameSync(item, at);
                } else if (method === 'fs-extra') {
                  at = path.join(processing, name);
                  move(item, at);
                } else if (method === 'marker') {
                  fs.closeSync(fs.openSync(`${item}.claim`, 'wx'));
                }
                data = fs.readFileSync(at);
                c.claimed++;
              } catch (e) {
                c.claim_failed++;
                fail(e);
                continue;
              }
              writeAll(out, Buffer.concat([data, Buffer.from('\n')]));
              c.processed++;
              progress = true;
              try {
                fs.unlinkSync(at);
              } catch (e) {
                c.delete_failed++;
                fail(e);
              }
            }
            idle = progress ? 0 : idle + 1;
            if (idle >= CLAIM_STUCK_ROUNDS) {
              return { ok: false, error: null, step: 'stuck', counters: c, errors_sample: sample };
            }
          }
        } finally {
          fs.closeSync(out);
        }
        return { ok: true, error: null, step: null, counters: c, errors_sample: sample };
      };
      if (method !== 'fs-extra') return () => work(null);
      // fs-extra's moveSync(src, dest) (overwrite: false, its default: it refuses an existing dest)
      return async () => {
        let move;
        try {
          const fse = (await requireFrom(library))('fs-extra');
          move = (src, dest) => fse.moveSync(src, dest);
        } catch (e) {
          return { ok: false, error: ctx.rawError(e), step: 'load', counters: {}, errors_sample: [] };
        }
        return work(move);
      };
    },
  };
}

/** Sleeps `ms` milliseconds without giving the event loop a turn (Atomics.wait on the main thread). */
function sleepSync(ms) {
  if (ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * The done-marker writers: the data file (publishContent, 4 KiB writes with params.chunk_ms
 * milliseconds between them) and, by the method, a manifest at params.marker — JSON {name,
 * size (bytes), records (payload lines), idempotency_key (the token)} — after the data, before
 * it, or none (the consumer then watches the data file's size or mtime). Steps: manifest,
 * open, write, close.
 */
function doneWriter(method) {
  return {
    prepare(req, ctx) {
      const data = publishContent(req);
      const marker = stringParam(req, 'marker', null);
      if (marker === null && method.startsWith('marker')) unsupported('a marker method needs params.marker');
      const chunkMs = orDefault(req.params.chunk_ms, 0);
      if (!Number.isInteger(chunkMs) || chunkMs < 0 || chunkMs > 1000) unsupported('params.chunk_ms must be an integer from 0 to 1000');
      const manifest = Buffer.from(JSON.stringify({
        name: path.basename(req.target),
        size: data.length,
        records: data.toString('latin1').split('\n').length - 1,
        idempotency_key: req.token,
      }));
      return () => {
        let step = 'manifest';
        try {
          if (method === 'marker-before-data') fs.writeFileSync(marker, manifest);
          step = 'open';
          const fd = fs.openSync(req.target, 'w');
          let open = true;
          try {
            step = 'write';
            for (let off = 0; off < data.length; off += PUBLISH_CHUNK) {
              if (off > 0) sleepSync(chunkMs);
              writeAll(fd, data.subarray(off, Math.min(off + PUBLISH_CHUNK, data.length)));
            }
            step = 'close';
            open = false;
            fs.closeSync(fd);
          } finally {
            if (open) { try { fs.closeSync(fd); } catch { /* the write's error is reported */ } }
          }
          step = 'manifest';
          if (method === 'marker-after-data') fs.writeFileSync(marker, manifest);
          return { ok: true, error: null, step: null };
        } catch (e) {
          return { ok: false, error: ctx.rawError(e), step };
        }
      };
    },
  };
}

/** An integer parameter from 1 to `max`, or Unsupported. */
function positiveParam(req, name, max) {
  const v = req.params[name];
  if (!Number.isInteger(v) || v < 1 || v > max) unsupported(`params.${name} must be an integer from 1 to ${max}`);
  return v;
}

/** An integer parameter from 0 to `max`, 0 when absent, or Unsupported. */
function optionalParam(req, name, max) {
  if (req.params[name] === undefined || req.params[name] === null) return 0;
  const v = req.params[name];
  if (!Number.isInteger(v) || v < 0 || v > max) unsupported(`params.${name} must be an integer from 0 to ${max}`);
  return v;
}

/**
 * A lease record (the second article's fields; times in ms since the Unix epoch, on the wall
 * clock, which is what a lease on a shared folder is judged by): the token as ownerId.
 */
function leaseRecord(req, ttlMs) {
  const now = Date.now();
  return JSON.stringify({
    ownerId: req.token,
    host: orDefault(process.env.HOSTNAME, ''),
    pid: process.pid,
    acquiredAt: now,
    expiresAt: now + ttlMs,
    heartbeatAt: now,
  });
}

/** The lease record at `p` as {record} ({record: null} when it does not parse), or null when `p` is absent. */
function readLease(p) {
  let text;
  try {
    text = fs.readFileSync(p, 'utf8');
  } catch (e) {
    if (e && e.code === 'ENOENT') return null;
    throw e;
  }
  try {
    const r = JSON.parse(text);
    return { record: r !== null && typeof r === 'object' ? r : null };
  } catch (e) {
    return { record: null };
  }
}

/** True for an error of code `code` (the runtime's Node-style `code`). */
function isCode(e, code) {
  return !!e && e.code === code;
}

/**
 * The lease takers (docs/HANDOFF.md, "lease"). A stale lease lies at params.lease (a file
 * holding a record, or for `dir-mtime` a directory holding it in `owner`); each taker tries to
 * take it over by its method and, when it believes it did, writes its token to its own marker
 * params.held ('wx') and keeps the lease (nothing is released). Staleness: params.stale_ms
 * against the lock's mtime (`mtime`, `dir-mtime`) or the record's expiresAt (the others); the
 * leases it writes live params.ttl_ms. Methods:
 * - mtime: stat; stale (or absent) -> unlink (ENOENT is fine), create 'wx'.
 * - expires: read the record; expired (or absent) -> unlink, create 'wx'.
 * - rename-aside: read the record; expired -> rename the lease to `<lease>.<token>.stale`,
 *   read that: the record read before -> unlink it, create 'wx'; another one -> link it back
 *   to the lease (never replacing), unlink the aside name, give up.
 * - breaker: read the record; expired -> create `<lease>.takeover` 'wx' (only its creator may
 *   break); read again: the same record -> unlink, create 'wx'; remove the breaker.
 * - dir-mtime: mkdir; EEXIST and stale mtime -> unlink `<lease>/owner` (ENOENT is fine),
 *   rmdir (ENOENT is fine; ENOTEMPTY: another took it), mkdir, write the record to `owner`.
 * A refused step (EEXIST, ENOENT, ENOTEMPTY where the method expects a rival) means not
 * acquired; any other error fails the step. counters: acquired (0/1), fresh (1 when it found
 * the lease live), unreadable (a record it could not parse: not taken), restore_failed
 * (rename-aside could not put a live lease back).
 */
function leaseTaker(method) {
  return {
    prepare(req, ctx) {
      const lease = stringParam(req, 'lease', null);
      const held = stringParam(req, 'held', null);
      if (lease === null || held === null) unsupported('a lease taker needs params.lease and params.held');
      const staleMs = positiveParam(req, 'stale_ms', 86400000);
      const ttlMs = positiveParam(req, 'ttl_ms', 86400000);
      const record = leaseRecord(req, ttlMs);
      const stallMs = optionalParam(req, 'stall_us', 1000000) / 1000;
      return () => {
        const c = { acquired: 0, fresh: 0, unreadable: 0, restore_failed: 0 };
        let step = 'check';
        // a slow taker (params.stall_us): it waits before each step after its check, as one
        // descheduled between its steps would
        const to = (next) => {
          sleepSync(stallMs);
          step = next;
        };
        // dir-mtime's first mkdir is its check: no wait before it
        let first = method === 'dir-mtime';
        // the marker is written as soon as the taker holds the lease (before a breaker is
        // removed), so a later failed step cannot hide a holder
        const markHeld = () => {
          if (c.acquired === 1) return;
          step = 'held';
          fs.writeFileSync(held, req.token, { flag: 'wx' });
          c.acquired = 1;
        };
        const done = (acquired) => {
          if (acquired) markHeld();
          return { ok: true, error: null, step: null, counters: c };
        };
        const create = () => {
          if (first) step = 'create';
          else to('create');
          first = false;
          try {
            if (method === 'dir-mtime') {
              fs.mkdirSync(lease);
              to('record');
              fs.writeFileSync(path.join(lease, 'owner'), record);
            } else {
              fs.writeFileSync(lease, record, { flag: 'wx' });
            }
            return true;
          } catch (e) {
            if (step === 'create' && isCode(e, 'EEXIST')) return false;
            throw e;
          }
        };
        const unlinkQuiet = (p) => {
          try { fs.unlinkSync(p); } catch (e) { if (!isCode(e, 'ENOENT')) throw e; }
        };
        try {
          if (method === 'mtime' || method === 'dir-mtime') {
            if (method === 'dir-mtime') {
              if (create()) return done(true);
              step = 'check';
            }
            let st = null;
            try { st = fs.statSync(lease); } catch (e) { if (!isCode(e, 'ENOENT')) throw e; }
            if (st !== null && Date.now() - st.mtimeMs < staleMs) { c.fresh = 1; return done(false); }
            to('delete');
            if (method === 'dir-mtime') {
              unlinkQuiet(path.join(lease, 'owner'));
              try { fs.rmdirSync(lease); } catch (e) { if (!isCode(e, 'ENOENT') && !isCode(e, 'ENOTEMPTY')) throw e; if (isCode(e, 'ENOTEMPTY')) return done(false); }
            } else if (st !== null) {
              unlinkQuiet(lease);
            }
            return done(create());
          }
          const seen = readLease(lease);
          if (seen !== null && seen.record === null) { c.unreadable = 1; return done(false); }
          if (seen !== null && !(Number(seen.record.expiresAt) <= Date.now())) { c.fresh = 1; return done(false); }
          if (seen === null) return done(create());
          if (method === 'expires') {
            to('delete');
            unlinkQuiet(lease);
            return done(create());
          }
          if (method === 'rename-aside') {
            const aside = `${lease}.${req.token}.stale`;
            to('rename');
            try { fs.renameSync(lease, aside); } catch (e) { if (isCode(e, 'ENOENT')) return done(false); throw e; }
            to('recheck');
            const moved = readLease(aside);
            if (moved !== null && moved.record !== null && moved.record.ownerId === seen.record.ownerId) {
              to('delete');
              unlinkQuiet(aside);
              return done(create());
            }
            to('restore');
            try { fs.linkSync(aside, lease); } catch (e) { if (!isCode(e, 'EEXIST')) throw e; c.restore_failed = 1; }
            unlinkQuiet(aside);
            return done(false);
          }
          // breaker
          const breaker = `${lease}.takeover`;
          to('breaker');
          try { fs.closeSync(fs.openSync(breaker, 'wx')); } catch (e) { if (isCode(e, 'EEXIST')) return done(false); throw e; }
          let took = false;
          let failed = null;
          try {
            to('recheck');
            const again = readLease(lease);
            if (again === null || (again.record !== null && again.record.ownerId === seen.record.ownerId)) {
              to('delete');
              if (again !== null) unlinkQuiet(lease);
              took = create();
              if (took) markHeld();
            }
          } catch (e) {
            failed = { e, step };
          }
          // the breaker goes whatever happened; a failed step before it is the one reported
          try {
            unlinkQuiet(breaker);
          } catch (e) {
            if (failed === null) failed = { e, step: 'unbreak' };
          }
          if (failed !== null) return { ok: false, error: ctx.rawError(failed.e), step: failed.step, counters: c };
          return done(took);
        } catch (e) {
          return { ok: false, error: ctx.rawError(e), step, counters: c };
        }
      };
    },
  };
}

// ---- holder ------------------------------------------------------------------------------

// The lease holders (docs/HANDOFF.md, "holder"): the harness gave this holder the lease at
// params.lease (its token as ownerId) and stops it inside its work (params.work_ms, slept
// without giving the event loop a turn); a taker takes the lease over meanwhile. Then:
// - no-check: make the side effect (params.effect, its token, 'wx'), release: unlink the
//   lease (ENOENT is fine);
// - renew-blind: renew (writeFileSync a fresh record, living params.ttl_ms, over the lease),
//   make the side effect, go on holding;
// - check-owner: read the lease; not its own record (or none) -> stop; else renew, read it
//   again: its own -> the side effect; read it again: its own -> unlink it.
// counters: effect (0/1), renewed (0/1), released (0/1), lost (1 when it saw another's
// record and stopped). Steps: check, renew, effect, release.
function holderWorker(method) {
  return {
    prepare(req, ctx) {
      const lease = stringParam(req, 'lease', null);
      const effect = stringParam(req, 'effect', null);
      if (lease === null || effect === null) unsupported('a lease holder needs params.lease and params.effect');
      const ttlMs = positiveParam(req, 'ttl_ms', 86400000);
      const workMs = positiveParam(req, 'work_ms', 86400000);
      return () => {
        const c = { effect: 0, renewed: 0, released: 0, lost: 0 };
        let step = 'work';
        const mine = () => {
          step = 'check';
          const seen = readLease(lease);
          const ok = seen !== null && seen.record !== null && seen.record.ownerId === req.token;
          if (!ok) c.lost = 1;
          return ok;
        };
        const ok = () => ({ ok: true, error: null, step: null, counters: c });
        try {
          sleepSync(workMs);
          if (method === 'check-owner' && !mine()) return ok();
          if (method !== 'no-check') {
            step = 'renew';
            fs.writeFileSync(lease, leaseRecord(req, ttlMs));
            c.renewed = 1;
          }
          if (method === 'check-owner' && !mine()) return ok();
          step = 'effect';
          fs.writeFileSync(effect, req.token, { flag: 'wx' });
          c.effect = 1;
          if (method === 'renew-blind') return ok();
          if (method === 'check-owner' && !mine()) return ok();
          step = 'release';
          try { fs.unlinkSync(lease); } catch (e) { if (!isCode(e, 'ENOENT')) throw e; }
          c.released = 1;
          return ok();
        } catch (e) {
          return { ok: false, error: ctx.rawError(e), step, counters: c };
        }
      };
    },
  };
}

// ---- ledger ------------------------------------------------------------------------------

// The ledger workers (docs/HANDOFF.md, "ledger"): one input item with the idempotency key
// params.key is delivered to every worker; a worker that decides to process it makes the side
// effect, its own file params.effect holding its token ('wx'), and records the key:
// - key-first: create params.ledger/<key> 'wx' first; EEXIST means processed (or being
//   processed) by another: skip; else make the effect.
// - check-process-append: read the processed list params.list (absent: empty); the key on a
//   line of it means processed: skip; else make the effect, then append `<key>\n` to it (the
//   second article's diagram order: check, process, record).
// - check-process-create: the key's file params.ledger/<key> present means processed: skip;
//   else make the effect, then create the key's file 'wx' (record after the effect; EEXIST
//   there counts record_refused: another recorded it meanwhile).
// counters: processed, skipped, record_refused. Steps: check, record, effect.
function ledgerWorker(method) {
  return {
    prepare(req, ctx) {
      const key = stringParam(req, 'key', null);
      const effect = stringParam(req, 'effect', null);
      const ledger = stringParam(req, 'ledger', null);
      const list = stringParam(req, 'list', null);
      if (key === null || effect === null || ledger === null || list === null) {
        unsupported('a ledger worker needs params.key, params.effect, params.ledger and params.list');
      }
      const keyFile = path.join(ledger, key);
      return () => {
        const c = { processed: 0, skipped: 0, record_refused: 0 };
        let step = 'check';
        const effectNow = () => {
          step = 'effect';
          fs.writeFileSync(effect, req.token, { flag: 'wx' });
          c.processed = 1;
        };
        try {
          if (method === 'key-first') {
            step = 'record';
            try { fs.writeFileSync(keyFile, req.token, { flag: 'wx' }); } catch (e) { if (isCode(e, 'EEXIST')) { c.skipped = 1; return { ok: true, error: null, step: null, counters: c }; } throw e; }
            effectNow();
          } else if (method === 'check-process-append') {
            let text = '';
            try { text = fs.readFileSync(list, 'utf8'); } catch (e) { if (!isCode(e, 'ENOENT')) throw e; }
            if (text.split('\n').includes(key)) { c.skipped = 1; return { ok: true, error: null, step: null, counters: c }; }
            effectNow();
            step = 'record';
            fs.appendFileSync(list, `${key}\n`);
          } else {
            if (fs.existsSync(keyFile)) { c.skipped = 1; return { ok: true, error: null, step: null, counters: c }; }
            effectNow();
            step = 'record';
            try { fs.writeFileSync(keyFile, req.token, { flag: 'wx' }); } catch (e) { if (!isCode(e, 'EEXIST')) throw e; c.record_refused = 1; }
          }
          return { ok: true, error: null, step: null, counters: c };
        } catch (e) {
          return { ok: false, error: ctx.rawError(e), step, counters: c };
        }
      };
    },
  };
}

// ---- update ------------------------------------------------------------------------------

/** How long a locked update waits for the lock before it gives up (step `lock`), ms. */
const UPDATE_LOCK_WAIT_MS = 10_000;
/** How often a worker reads the counter again when it held no whole number, at most. */
const UPDATE_READ_TRIES = 1_000;

// The shared-file update workers (docs/HANDOFF.md, "update"): each adds 1 to the counter file
// params.counter params.increments times:
// - read-modify-write: read it (fs.readFileSync), write n+1 and a newline over it
//   (fs.writeFileSync: open 'w' truncates, then writes);
// - locked-read-modify-write: the same inside a lock: create params.lock 'wx', retrying about
//   every 0.1 ms while it exists (EEXIST), delete it afterwards;
// - temp-rename: read it, write n+1 to params.temp 'wx', rename that onto the counter;
// - locked-temp-rename: temp-rename inside the lock;
// - append-line: append `1\n` (fs.appendFileSync: open 'a', write, close).
// A read that holds no whole number (an empty or partial value) is read again, up to
// UPDATE_READ_TRIES times. counters: increments (made), unreadable_reads, lock_waits.
// Steps: lock, read, write, rename, unlock, append.
function updateWorker(method) {
  return {
    prepare(req, ctx) {
      const counter = stringParam(req, 'counter', null);
      const lock = stringParam(req, 'lock', null);
      const temp = stringParam(req, 'temp', null);
      const increments = req.params.increments;
      if (counter === null || lock === null || temp === null || !Number.isInteger(increments) || increments < 0) {
        unsupported('an update worker needs params.counter, params.lock, params.temp and params.increments');
      }
      const locked = method.startsWith('locked-');
      const viaTemp = method.endsWith('temp-rename');
      return () => {
        const c = { increments: 0, unreadable_reads: 0, lock_waits: 0 };
        let step = 'read';
        const readValue = () => {
          for (let tries = 0; ; tries++) {
            step = 'read';
            const text = fs.readFileSync(counter, 'utf8').trim();
            if (/^[0-9]+$/.test(text)) return Number(text);
            c.unreadable_reads++;
            if (tries >= UPDATE_READ_TRIES) throw new Error(`the counter held no whole number ${UPDATE_READ_TRIES} times in a row`);
          }
        };
        try {
          for (let i = 0; i < increments; i++) {
            if (method === 'append-line') {
              step = 'append';
              fs.appendFileSync(counter, '1\n');
              c.increments++;
              continue;
            }
            if (locked) {
              step = 'lock';
              const until = nowMs() + UPDATE_LOCK_WAIT_MS;
              for (;;) {
                try { fs.closeSync(fs.openSync(lock, 'wx')); break; } catch (e) { if (!isCode(e, 'EEXIST')) throw e; }
                c.lock_waits++;
                if (nowMs() > until) throw new Error(`the lock stayed taken for ${UPDATE_LOCK_WAIT_MS} ms`);
                sleepSync(0.1);
              }
            }
            const next = `${readValue() + 1}\n`;
            if (viaTemp) {
              step = 'write';
              fs.writeFileSync(temp, next, { flag: 'wx' });
              step = 'rename';
              fs.renameSync(temp, counter);
            } else {
              step = 'write';
              fs.writeFileSync(counter, next);
            }
            c.increments++;
            if (locked) {
              step = 'unlock';
              fs.unlinkSync(lock);
            }
          }
          return { ok: true, error: null, step: null, counters: c };
        } catch (e) {
          return { ok: false, error: ctx.rawError(e), step, counters: c };
        }
      };
    },
  };
}

// ---- os-lock -----------------------------------------------------------------------------

/**
 * The OS locks a holder can take (docs/HANDOFF.md, "os-lock"), by recipe id: `take(path)`
 * opens and locks the file and returns `{ release() }`, or throws; `tryTake(path, waitMs)` is a
 * second holder's try: resolves to `{ release() }` when it holds the lock, to null when the lock
 * did not come within waitMs (a lock call that blocks instead of refusing), or throws the
 * refusal. node:fs has no file lock: only `os-lock.none` (open, no lock: the control) is here;
 * a probe adds its runtime's own (../deno/probe.ts: `os-lock.flock`) together with its recipe
 * (`osLockHolder`).
 */
export const OS_LOCKS = {
  'os-lock.none': {
    take(p) {
      const fd = fs.openSync(p, 'r+');
      return { release() { fs.closeSync(fd); } };
    },
    async tryTake(p) {
      return OS_LOCKS['os-lock.none'].take(p);
    },
  },
};

/**
 * The OS-lock holder of recipe `id` (OS_LOCKS[id]): locks every file of params.files (an object
 * of paths), creates params.locked ('wx') once all are locked, holds them until `stop`, then
 * releases them. counters: locked (files locked), released. Steps: lock, mark, hold, release.
 */
export function osLockHolder(id) {
  return {
    prepare(req, ctx) {
      const files = req.params.files;
      const locked = stringParam(req, 'locked', null);
      if (files === null || typeof files !== 'object' || locked === null) {
        unsupported('an OS-lock holder needs params.files and params.locked');
      }
      const kind = OS_LOCKS[id];
      if (kind === undefined) unsupported(`no ${id} here`);
      const why = ctx.reader.pollReason();
      if (why !== null) unsupported(why);
      return () => {
        const c = { locked: 0, released: 0 };
        const held = [];
        let step = 'lock';
        let failed = null;
        try {
          for (const p of Object.values(files)) {
            held.push(kind.take(p));
            c.locked++;
          }
          step = 'mark';
          fs.closeSync(fs.openSync(locked, 'wx'));
          step = 'hold';
          while (!ctx.stopRequested()) sleepSync(1);
        } catch (e) {
          failed = { e, step };
        }
        for (const h of held) {
          try {
            h.release();
            c.released++;
          } catch (e) {
            if (failed === null) failed = { e, step: 'release' };
          }
        }
        if (failed !== null) return { ok: false, error: ctx.rawError(failed.e), step: failed.step, counters: c };
        return { ok: true, error: null, step: null, counters: c };
      };
    },
  };
}

/**
 * The OS-lock intruder (docs/HANDOFF.md, "os-lock"): waits (up to params.wait_ms) for the
 * holder's params.locked, then goes at its own files of params.files without asking: write
 * (fs.writeFileSync), append (fs.appendFileSync), rename (fs.renameSync to params.moved), delete
 * (fs.unlinkSync); node:fs cannot map a file (mmap_tried stays 0); then takes the holder's own
 * kind of lock (OS_LOCKS[params.lock].tryTake, waiting params.relock_ms at most) on the relock
 * file and, only while it holds it, creates params.relocked ('wx', its token). counters: one per
 * intrusion, 1 when its call returned without an error (what got through is the harness's to
 * read from the files); errors_sample: the refusals. Step: wait.
 */
const osLockIntruder = {
  prepare(req, ctx) {
    const files = req.params.files;
    const locked = stringParam(req, 'locked', null);
    const relocked = stringParam(req, 'relocked', null);
    const moved = stringParam(req, 'moved', null);
    const lock = stringParam(req, 'lock', null);
    if (files === null || typeof files !== 'object' || locked === null || relocked === null || moved === null || lock === null) {
      unsupported('an OS-lock intruder needs params.files, params.locked, params.relocked, params.moved and params.lock');
    }
    const kind = OS_LOCKS[lock];
    if (kind === undefined) unsupported(`no ${lock} here`);
    const waitMs = positiveParam(req, 'wait_ms', 600000);
    const relockMs = positiveParam(req, 'relock_ms', 600000);
    return async () => {
      const c = { write: 0, append: 0, rename: 0, delete: 0, mmap_tried: 0, relock: 0 };
      const sample = [];
      const refused = (e) => {
        if (sample.length < ERRORS_SAMPLE_MAX) sample.push(ctx.rawError(e));
      };
      const attempt = (name, f) => {
        try {
          f();
          c[name] = 1;
        } catch (e) {
          refused(e);
        }
      };
      const until = nowMs() + waitMs;
      while (!fs.existsSync(locked)) {
        if (nowMs() > until) {
          return { ok: false, error: ctx.rawError(new Error(`the holder had not locked its files after ${waitMs} ms`)), step: 'wait', counters: c };
        }
        sleepSync(1);
      }
      attempt('write', () => fs.writeFileSync(files.write, req.token));
      attempt('append', () => fs.appendFileSync(files.append, req.token));
      attempt('rename', () => fs.renameSync(files.rename, moved));
      attempt('delete', () => fs.unlinkSync(files.delete));
      try {
        const h = await kind.tryTake(files.relock, relockMs);
        if (h !== null) {
          try {
            fs.writeFileSync(relocked, req.token, { flag: 'wx' });
            c.relock = 1;
          } finally {
            h.release();
          }
        }
      } catch (e) {
        refused(e);
      }
      return { ok: true, error: null, step: null, counters: c, errors_sample: sample };
    };
  },
};

// ---- watch -------------------------------------------------------------------------------

/**
 * How a consumer gets change notifications for a folder (docs/HANDOFF.md, "watch"):
 * `start(dir, onName)` starts watching and calls onName(name) for each file name an event
 * gives; returns a function that stops watching. node:fs's is fs.watch (inotify on Linux, by
 * libuv); a probe may put its runtime's own here (../deno/probe.ts: Deno.watchFs).
 */
export const WATCHER = {
  start(dir, onName) {
    const w = fs.watch(dir, (event, name) => {
      if (name !== null && name !== undefined) onName(String(name));
    });
    return () => w.close();
  },
};

/** Resolves after about `ms` milliseconds, giving the event loop turns meanwhile. */
function sleepAsync(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The folder-watch consumer by `method`: `events` (WATCHER only), `events-and-rescan` (WATCHER
 * and a listing, fs.readdirSync, every params.rescan_ms), `poll` (the listing only). Every name
 * not recorded yet is appended as a line to params.record (kept open, fs.writeSync); once it
 * watches it creates params.watching ('wx'), then goes on, giving the event loop a turn about
 * every millisecond, until `stop`. counters: events (names the events gave), listings,
 * recorded. Steps: watch, mark, list, record.
 */
function watchConsumer(method) {
  return {
    prepare(req, ctx) {
      const dir = stringParam(req, 'dir', null);
      const record = stringParam(req, 'record', null);
      const watching = stringParam(req, 'watching', null);
      if (dir === null || record === null || watching === null) {
        unsupported('a watch consumer needs params.dir, params.record and params.watching');
      }
      const rescanMs = positiveParam(req, 'rescan_ms', 600000);
      const why = ctx.reader.pollReason();
      if (why !== null) unsupported(why);
      return async () => {
        const c = { events: 0, listings: 0, recorded: 0 };
        const seen = new Set();
        let step = 'record';
        let fd = null;
        let unwatch = null;
        let failed = null;
        const note = (name) => {
          if (seen.has(name)) return;
          seen.add(name);
          fs.writeSync(fd, `${name}\n`);
          c.recorded++;
        };
        try {
          fd = fs.openSync(record, 'a');
          if (method !== 'poll') {
            step = 'watch';
            unwatch = WATCHER.start(dir, (name) => {
              c.events++;
              try {
                note(name);
              } catch (e) {
                if (failed === null) failed = { e, step: 'record' };
              }
            });
          }
          step = 'mark';
          fs.closeSync(fs.openSync(watching, 'wx'));
          let nextList = method === 'events' ? Infinity : nowMs() + rescanMs;
          while (failed === null && !ctx.stopRequested()) {
            if (nowMs() >= nextList) {
              step = 'list';
              for (const name of fs.readdirSync(dir)) note(name);
              c.listings++;
              nextList = nowMs() + rescanMs;
            }
            await sleepAsync(1);
          }
        } catch (e) {
          if (failed === null) failed = { e, step };
        } finally {
          if (unwatch !== null) unwatch();
          if (fd !== null) fs.closeSync(fd);
        }
        if (failed !== null) return { ok: false, error: ctx.rawError(failed.e), step: failed.step, counters: c };
        return { ok: true, error: null, step: null, counters: c };
      };
    },
  };
}

// ---- mutex (lock code) --------------------------------------------------------------------

/**
 * The built-in lock implementations of the mutex scenario (docs/HANDOFF.md, "mutex"), by recipe
 * id, each `{ acquire(path, owner) -> boolean, release(path, owner) }` as a user's module
 * exports them (`mutex.module`):
 * - check-then-create: the lock file absent (existsSync) -> create it with the owner id; release
 *   unlinks it (the anti-pattern: the check and the create are two calls);
 * - exclusive-create: create it 'wx' (O_CREAT|O_EXCL) with the owner id, EEXIST -> not acquired;
 *   release unlinks it only while it holds the owner id. Neither takes a stale lock over.
 */
export const LOCKS = {
  'mutex.check-then-create': {
    acquire(p, owner) {
      if (fs.existsSync(p)) return false;
      fs.writeFileSync(p, owner);
      return true;
    },
    release(p) {
      try { fs.unlinkSync(p); } catch (e) { if (!isCode(e, 'ENOENT')) throw e; }
    },
  },
  'mutex.exclusive-create': {
    acquire(p, owner) {
      try {
        fs.writeFileSync(p, owner, { flag: 'wx' });
        return true;
      } catch (e) {
        if (isCode(e, 'EEXIST')) return false;
        throw e;
      }
    },
    release(p, owner) {
      let seen;
      try { seen = fs.readFileSync(p, 'utf8'); } catch (e) { if (isCode(e, 'ENOENT')) return; throw e; }
      if (seen === owner) fs.unlinkSync(p);
    },
  },
};

/**
 * Lock code of libraries people use, by recipe id: `make(require)` -> { acquire, release }, with
 * `require` loading from the library's installed node_modules folder (params.library, installed
 * by the harness at the recipe's pinned version):
 * - proper-lockfile: lock(path, {stale: 2000 (its minimum), retries: 0, realpath: false}) (a
 *   directory `<path>.lock`, its mtime refreshed every stale/2; an older one is taken over),
 *   ELOCKED -> not acquired; unlock(path, {realpath: false}). Its onCompromised, which throws
 *   from a timer (ending the process) by default, does nothing here: the log shows the rest;
 * - lockfile: lockSync(path, {stale: 2000}) (O_EXCL; an older lock is unlinked and taken),
 *   EEXIST -> not acquired; unlockSync(path) (whoever holds it);
 * - @rushstack/node-core-library: LockFile.tryAcquire(dirname(path), basename(path)) (a file
 *   `<name>#<pid>.lock`, others' pids checked alive), undefined -> not acquired; release: the
 *   LockFile this process took for that owner, if any.
 */
const LIBRARY_LOCKS = {
  'mutex.proper-lockfile': (require) => {
    const pl = require('proper-lockfile');
    return {
      async acquire(p) {
        try {
          await pl.lock(p, { stale: 2000, retries: 0, realpath: false, onCompromised() {} });
          return true;
        } catch (e) {
          if (isCode(e, 'ELOCKED')) return false;
          throw e;
        }
      },
      async release(p) {
        await pl.unlock(p, { realpath: false });
      },
    };
  },
  'mutex.lockfile': (require) => {
    const lf = require('lockfile');
    return {
      acquire(p) {
        try {
          lf.lockSync(p, { stale: 2000 });
          return true;
        } catch (e) {
          if (isCode(e, 'EEXIST')) return false;
          throw e;
        }
      },
      release(p) {
        lf.unlockSync(p);
      },
    };
  },
  'mutex.rushstack-lockfile': (require) => {
    const { LockFile } = require('@rushstack/node-core-library');
    const held = {};
    return {
      acquire(p, owner) {
        const l = LockFile.tryAcquire(path.dirname(p), path.basename(p));
        if (!l) return false;
        held[owner] = l;
        return true;
      },
      release(p, owner) {
        const l = held[owner];
        if (l) {
          delete held[owner];
          l.release();
        }
      },
    };
  },
};

/**
 * The publish recipes that hand the content to a library (params.library, the node_modules
 * folder the harness installed it into), by recipe id: each a function of the folder that
 * resolves to `write(target, data)`.
 * - write-file-atomic: writeFileAtomic.sync(target, data) (a temp file `<target>.<hash>`,
 *   fsync, rename);
 * - steno (ESM): new Writer(target).write(data) (a temp file `.<name>.tmp` beside it, rename);
 * - atomically (ESM): writeFile(target, data) (a temp file `<target>.tmp-<time><random>`,
 *   fsync, rename).
 */
const LIBRARY_PUBLISHERS = {
  'publish.write-file-atomic': async (dir) => {
    const wfa = (await requireFrom(dir))('write-file-atomic');
    return (target, data) => wfa.sync(target, data);
  },
  'publish.steno': async (dir) => {
    const { Writer } = await importFrom(dir, 'steno');
    return (target, data) => new Writer(target).write(data);
  },
  'publish.atomically': async (dir) => {
    const { writeFile } = await importFrom(dir, 'atomically');
    return (target, data) => writeFile(target, data);
  },
};

/** The libraries' publishers made so far, by recipe id and folder. */
const libraryPublishers = {};

/** A publish recipe of LIBRARY_PUBLISHERS (see there). */
function libraryPublisher(id) {
  return {
    prepare(req, ctx) {
      const dir = stringParam(req, 'library', null);
      if (dir === null) unsupported(`${id} needs params.library, the node_modules folder the harness installed it into`);
      const data = publishContent(req);
      return async () => {
        let write;
        try {
          const key = `${id} ${dir}`;
          if (!hasOwn(libraryPublishers, key)) libraryPublishers[key] = await LIBRARY_PUBLISHERS[id](dir);
          write = libraryPublishers[key];
        } catch (e) {
          return { ok: false, error: ctx.rawError(e), step: 'load' };
        }
        try {
          await write(req.target, data);
          return { ok: true, error: null, step: null };
        } catch (e) {
          return { ok: false, error: ctx.rawError(e), step: 'write' };
        }
      };
    },
  };
}

/**
 * The ES module `name` of the node_modules folder `dir`: its entry as `require.resolve` finds
 * it there (the package's `exports`), imported by file URL.
 */
async function importFrom(dir, name) {
  const entry = (await requireFrom(dir)).resolve(name);
  return import(fileUrl(entry));
}

/** The libraries' locks made so far, by recipe id and folder. */
const libraryLocks = {};

/** `require` from the node_modules folder `dir` (node:module's createRequire). */
async function requireFrom(dir) {
  let m;
  try { m = await import('node:module'); } catch { m = await import('module'); }
  const createRequire = m.createRequire || (m.default && m.default.createRequire);
  return createRequire(path.join(dir, 'conformance-library.js'));
}

/** The user's modules loaded so far, by path (one import per probe process). */
const userModules = {};

/** `p` (an absolute POSIX path) as a file: URL, every segment percent-encoded (`%`, `#`, `?`, spaces, non-ASCII). */
function fileUrl(p) {
  return 'file://' + p.split('/').map(encodeURIComponent).join('/');
}

/**
 * The lock of recipe `id`: LOCKS[id], or for `mutex.module` the module at params.module — its
 * named exports `acquire` and `release`, or those of its default export. The user's code runs
 * here, in the probe, never in the harness; its console.log/info/debug go to stderr so that
 * they cannot break the protocol on stdout. Throws when the module cannot be loaded or exports
 * no such functions (the step `load`).
 */
async function lockOf(id, req) {
  if (hasOwn(LIBRARY_LOCKS, id)) {
    const key = `${id} ${req.params.library}`;
    if (!hasOwn(libraryLocks, key)) libraryLocks[key] = LIBRARY_LOCKS[id](await requireFrom(req.params.library));
    return libraryLocks[key];
  }
  if (id !== 'mutex.module') return LOCKS[id];
  const p = req.params.module;
  if (!hasOwn(userModules, p)) {
    const quiet = (...a) => console.error(...a);
    console.log = quiet;
    console.info = quiet;
    console.debug = quiet;
    userModules[p] = await import(fileUrl(p));
  }
  const m = userModules[p];
  const lock = m.default && typeof m.default.acquire === 'function' ? m.default : m;
  if (typeof lock.acquire !== 'function' || typeof lock.release !== 'function') {
    throw new Error(`${p} exports no acquire(path, owner) and release(path, owner)`);
  }
  return lock;
}

/** A raw error of `e` as ctx.rawError spells it, its message the stack where there is one (user code's faults say where). */
function userError(ctx, e) {
  const r = ctx.rawError(e);
  if (e && typeof e.stack === 'string') r.message = e.stack.slice(0, 2000);
  return r;
}

/** True when the log at `log` holds a line starting `prefix`. */
function logHas(log, prefix) {
  let text;
  try { text = fs.readFileSync(log, 'utf8'); } catch (e) { if (isCode(e, 'ENOENT')) return false; throw e; }
  return text.split('\n').some((l) => l.startsWith(prefix));
}

/** Waits (async, 1 ms steps) until `ready()`; throws after `ms` milliseconds. */
async function waitUntil(ready, ms, what) {
  const until = nowMs() + ms;
  while (!ready()) {
    if (nowMs() > until) throw new Error(`${what} did not come within ${ms} ms`);
    await sleepAsync(1);
  }
}

/**
 * A contender of the mutex scenario with the lock of recipe `id` (lockOf), in role req.role:
 * - `contender`: (after params.go exists, when given) acquire — again every params.retry_ms
 *   while it returns something falsy, for params.wait_ms at most —, then, holding the lock, append
 *   `enter <token> <ms>` to params.log, sleep params.hold_ms, append `leave <token> <ms>`,
 *   release;
 * - `holder`: the same, but it holds until the harness stops it (a loop recipe: the harness
 *   kills or pauses it meanwhile);
 * - `releaser`: waits for params.holder's `enter` line, calls release(lock, its own token) —
 *   someone else's release —, creates params.released, then goes on as a contender.
 * Every role ends by appending `done <token> <ms>`. The log (O_APPEND, one write per line) is
 * what the harness judges; <ms> is the wall clock (Date.now()). counters: acquired, released,
 * tries (acquire calls), foreign_release (1 when the releaser's release returned),
 * foreign_refused (1 when it threw: the releaser goes on). Steps: load,
 * wait, release-other, acquire, enter, hold, leave, release.
 */
function mutexWorker(id) {
  return {
    prepare(req, ctx) {
      const lockPath = stringParam(req, 'lock', null);
      const log = stringParam(req, 'log', null);
      if (lockPath === null || log === null) unsupported('a mutex contender needs params.lock and params.log');
      if (id === 'mutex.module' && stringParam(req, 'module', null) === null) {
        unsupported('mutex.module races the lock module of params.module (conformance check FILE)');
      }
      if (hasOwn(LIBRARY_LOCKS, id) && stringParam(req, 'library', null) === null) {
        unsupported(`${id} needs params.library, the node_modules folder the harness installed it into`);
      }
      if (id !== 'mutex.module' && !hasOwn(LOCKS, id) && !hasOwn(LIBRARY_LOCKS, id)) unsupported(`no ${id} here`);
      const role = req.role;
      if (role !== 'contender' && role !== 'holder' && role !== 'releaser') unsupported(`no mutex role ${role}`);
      const waitMs = orDefault(req.params.wait_ms, 0);
      if (!Number.isInteger(waitMs) || waitMs < 0 || waitMs > 3600000) unsupported('params.wait_ms must be an integer from 0 to 3600000');
      const retryMs = positiveParam(req, 'retry_ms', 10000);
      const holdMs = positiveParam(req, 'hold_ms', 600000);
      const goWaitMs = positiveParam(req, 'go_wait_ms', 3600000);
      const go = stringParam(req, 'go', null);
      const holderToken = stringParam(req, 'holder', null);
      const released = stringParam(req, 'released', null);
      if (role === 'releaser' && (holderToken === null || released === null)) unsupported('a releaser needs params.holder and params.released');
      if (role === 'holder') {
        const why = ctx.reader.pollReason();
        if (why !== null) unsupported(why);
      }
      return async () => {
        const c = { acquired: 0, released: 0, tries: 0, foreign_release: 0, foreign_refused: 0 };
        const line = (what) => fs.appendFileSync(log, `${what} ${req.token} ${Date.now()}\n`);
        let step = 'load';
        let failed = null;
        try {
          const lock = await lockOf(id, req);
          if (go !== null) {
            step = 'wait';
            await waitUntil(() => fs.existsSync(go), goWaitMs, `the go marker ${go}`);
          }
          if (role === 'releaser') {
            step = 'wait';
            await waitUntil(() => logHas(log, `enter ${holderToken} `), goWaitMs, 'the holder\'s enter line');
            step = 'release-other';
            // a lock that refuses someone else's release by throwing does its job: noted, and
            // the releaser goes on to try the lock
            try {
              await lock.release(lockPath, req.token);
              c.foreign_release = 1;
            } catch (e) {
              c.foreign_refused = 1;
            }
            fs.writeFileSync(released, req.token, { flag: 'wx' });
          }
          step = 'acquire';
          const until = nowMs() + waitMs;
          for (;;) {
            c.tries++;
            // truthy: took it (a boolean, or a handle such as a library's release function)
            if (await lock.acquire(lockPath, req.token)) {
              c.acquired = 1;
              break;
            }
            if (nowMs() >= until) break;
            await sleepAsync(retryMs);
          }
          if (c.acquired === 1) {
            step = 'enter';
            line('enter');
            step = 'hold';
            if (role === 'holder') {
              while (!ctx.stopRequested()) await sleepAsync(2);
            } else {
              await sleepAsync(holdMs);
            }
            step = 'leave';
            line('leave');
            step = 'release';
            await lock.release(lockPath, req.token);
            c.released = 1;
          }
        } catch (e) {
          failed = { e, step };
        }
        try { line('done'); } catch (e) { if (failed === null) failed = { e, step: 'done' }; }
        if (failed !== null) return { ok: false, error: userError(ctx, failed.e), step: failed.step, counters: c };
        return { ok: true, error: null, step: null, counters: c };
      };
    },
  };
}

export const RECIPES = {
  // The same steps with params.temp on another file system (the harness's second scratch
  // folder): renameSync then fails with EXDEV where the runtime does not copy instead.
  get 'publish.temp-rename-cross-volume'() { return this['publish.temp-rename']; },

  // The done-marker writers (doneWriter) and their consumer (consume.poll).
  'done.marker-after-data': doneWriter('marker-after-data'),
  'done.marker-before-data': doneWriter('marker-before-data'),
  'done.size-stable': doneWriter('size-stable'),
  'done.mtime-stable': doneWriter('mtime-stable'),

  // Wait, polling about once a millisecond, until the data file counts as complete by
  // params.rule — `marker` (params.marker exists), `size-stable` or `mtime-stable` (the data
  // file exists, is not empty, and its size, or mtime, has not changed for params.stable_ms) —
  // then read it once and compare with params.expect[0]: counters consumed (0/1), whole,
  // partial (the bytes differ), checks. Runs until `stop`; after the stop it keeps checking
  // for up to 2 × stable_ms + 100 ms, then reports (consumed 0 when the rule never held).
  'consume.poll': {
    prepare(req, ctx) {
      const rule = stringParam(req, 'rule', null);
      const marker = stringParam(req, 'marker', null);
      const stableMs = orDefault(req.params.stable_ms, 0);
      const expect = req.params.expect;
      if (!['marker', 'size-stable', 'mtime-stable'].includes(rule) || (rule === 'marker' && marker === null)) {
        unsupported('consume.poll needs params.rule (marker, size-stable, mtime-stable) and params.marker for marker');
      }
      if (!Array.isArray(expect) || typeof expect[0] !== 'string') unsupported('consume.poll needs params.expect');
      const whole = Buffer.from(expect[0], 'utf8');
      const why = ctx.reader.pollReason();
      if (why !== null) unsupported(why);
      return () => {
        const c = { consumed: 0, whole: 0, partial: 0, checks: 0 };
        let last = null;
        let since = 0;
        let deadline = null;
        for (;;) {
          c.checks++;
          const now = nowMs();
          let ready = false;
          try {
            if (rule === 'marker') {
              ready = fs.existsSync(marker);
            } else {
              const st = fs.statSync(req.target);
              const key = rule === 'size-stable' ? st.size : st.mtimeMs;
              if (st.size > 0 && key === last) ready = now - since >= stableMs;
              else { last = key; since = now; }
            }
          } catch { /* not there yet */ }
          if (ready) {
            c.consumed = 1;
            let bytes = null;
            try { bytes = fs.readFileSync(req.target); } catch { /* counted as partial */ }
            if (bytes !== null && bytes.equals(whole)) c.whole = 1; else c.partial = 1;
            break;
          }
          if (deadline === null && ctx.stopRequested()) deadline = now + 2 * stableMs + 100;
          if (deadline !== null && now >= deadline) break;
          sleepSync(1);
        }
        while (deadline === null && !ctx.stopRequested()) sleepSync(1);
        return { ok: true, error: null, step: null, counters: c, errors_sample: [] };
      };
    },
  },

  // Write the content (publishContent) straight to the target: open 'w' (create or truncate),
  // write in chunks of PUBLISH_CHUNK bytes, close. The wrong recipe: a reader can see the
  // name before the content is whole. params: size. Steps: open, write, close.
  'publish.direct': {
    prepare(req, ctx) {
      const data = publishContent(req);
      return () => {
        let step = 'open';
        try {
          const fd = fs.openSync(req.target, 'w');
          let open = true;
          try {
            step = 'write';
            writeChunks(fd, data);
            step = 'close';
            open = false;
            fs.closeSync(fd);
          } finally {
            if (open) { try { fs.closeSync(fd); } catch { /* the write's error is reported */ } }
          }
          return { ok: true, error: null, step: null };
        } catch (e) {
          return { ok: false, error: ctx.rawError(e), step };
        }
      };
    },
  },

  // Write the content (publishContent) to a temp name beside the target (open 'wx', write in
  // chunks, [fsync], close), then rename the temp name onto the target. params: temp (path;
  // default defaultTempName), fsync (bool, default false), size. A failed step after the temp
  // file exists removes the temp file (best effort). Steps: open, write, fsync, close, rename.
  'publish.temp-rename': {
    prepare(req, ctx) {
      const temp = stringParam(req, 'temp', defaultTempName(req.target, req.id, process.pid));
      const fsync = boolParam(req, 'fsync');
      const data = publishContent(req);
      return () => {
        let step = 'open';
        let created = false;
        try {
          const fd = fs.openSync(temp, 'wx');
          created = true;
          let open = true;
          try {
            step = 'write';
            writeChunks(fd, data);
            if (fsync) {
              step = 'fsync';
              fs.fsyncSync(fd);
            }
            step = 'close';
            open = false;
            fs.closeSync(fd);
          } finally {
            if (open) { try { fs.closeSync(fd); } catch { /* the step's error is reported */ } }
          }
          step = 'rename';
          fs.renameSync(temp, req.target);
          return { ok: true, error: null, step: null };
        } catch (e) {
          if (created) { try { fs.unlinkSync(temp); } catch { /* already gone or never renamed */ } }
          return { ok: false, error: ctx.rawError(e), step };
        }
      };
    },
  },

  // The libraries' publishers (LIBRARY_PUBLISHERS): the content (publishContent) handed to
  // the library's one call, which writes a temp file beside the target and renames it. params:
  // library (the node_modules folder), size. Steps: load, write.
  'publish.write-file-atomic': libraryPublisher('publish.write-file-atomic'),
  'publish.steno': libraryPublisher('publish.steno'),
  'publish.atomically': libraryPublisher('publish.atomically'),

  // Rename the prepared source onto the target (one step, `rename`). Needs `source`.
  'claim.rename': {
    prepare(req, ctx) {
      if (typeof req.source !== 'string' || req.source === '') unsupported('claim.rename needs a source');
      return () => {
        try {
          fs.renameSync(req.source, req.target);
          return { ok: true, error: null, step: null };
        } catch (e) {
          return { ok: false, error: ctx.rawError(e), step: 'rename' };
        }
      };
    },
  },

  // Read the whole target again and again (fs.readFileSync) until `stop`, then report
  // counters: reads; complete (the bytes equal one of params.expect, UTF-8); empty (0
  // bytes); torn (other bytes); absent (ENOENT); errors (any other error, the first
  // ERRORS_SAMPLE_MAX of them in errors_sample); changes (reads whose class or bytes differ
  // from the previous read's). stdin is polled at most once a millisecond, after a read; once
  // `stop` is seen one last read is made, so the last read always starts after the stop was
  // sent (a reader never misses what was published before it). Step: read.
  'read.poll': {
    prepare(req, ctx) {
      const expect = req.params.expect;
      if (!Array.isArray(expect) || !expect.every((s) => typeof s === 'string')) {
        unsupported('read.poll needs params.expect: the list of complete contents (strings)');
      }
      const whole = new Set(expect.map((s) => Buffer.from(s, 'utf8').toString('latin1')));
      const why = ctx.reader.pollReason();
      if (why !== null) unsupported(why);
      return () => {
        const c = { reads: 0, complete: 0, empty: 0, torn: 0, absent: 0, errors: 0, changes: 0 };
        const sample = [];
        let last;
        let nextPoll = 0;
        let stopping = false;
        for (;;) {
          let seen;
          c.reads++;
          try {
            const bytes = fs.readFileSync(req.target).toString('latin1');
            if (bytes.length === 0) { c.empty++; seen = 'E'; }
            else if (whole.has(bytes)) { c.complete++; seen = `C${bytes}`; }
            else { c.torn++; seen = `T${bytes}`; }
          } catch (e) {
            if (e && e.code === 'ENOENT') { c.absent++; seen = 'A'; }
            else {
              c.errors++;
              seen = `X${e && e.code}`;
              if (sample.length < ERRORS_SAMPLE_MAX) sample.push(ctx.rawError(e));
            }
          }
          if (last !== undefined && seen !== last) c.changes++;
          last = seen;
          if (stopping) break;
          const now = nowMs();
          if (now >= nextPoll) {
            stopping = ctx.stopRequested();
            nextPoll = now + 1;
          }
        }
        return { ok: true, error: null, step: null, counters: c, errors_sample: sample };
      };
    },
  },

  // The claim workers: each takes items from params.incoming until none is left, and for every
  // item it took appends the item's content and a newline to its own params.output file (the
  // harness counts duplicates and losses from those files). Methods:
  // - claim.rename-claim: rename the item into params.processing (this worker's folder); only a
  //   successful rename means ownership; then read it there, append, delete it.
  // - claim.list-then-open (the usual wrong way): read the listed item, append, delete it
  //   (a failed delete is counted, the item was processed anyway).
  // - claim.exclusive-marker: create `<item>.claim` exclusively ('wx'); only that success
  //   means ownership; then read, append, delete the item (the marker stays).
  // A worker that makes no progress for CLAIM_STUCK_ROUNDS rounds in a row stops (step
  // `stuck`). counters: rounds, listed, claimed, claim_failed (a claim step that failed:
  // rename, 'wx', or a read of an item gone), delete_failed, processed; errors_sample.
  'claim.rename-claim': claimWorker('rename'),
  'claim.list-then-open': claimWorker('list-then-open'),
  'claim.exclusive-marker': claimWorker('marker'),
  'claim.fs-extra-move': claimWorker('fs-extra'),

  // The lease takers (leaseTaker): each tries to take a stale lease over and, if it believes
  // it did, writes its own marker; the harness counts double holders from the markers.
  'lease.mtime-delete-create': leaseTaker('mtime'),
  'lease.expires-delete-create': leaseTaker('expires'),
  'lease.rename-aside': leaseTaker('rename-aside'),
  'lease.breaker': leaseTaker('breaker'),
  'lease.dir-mtime': leaseTaker('dir-mtime'),

  // The lease holders (holderWorker): a holder stopped past its lease goes on by its method.
  'holder.no-check': holderWorker('no-check'),
  'holder.renew-blind': holderWorker('renew-blind'),
  'holder.check-owner': holderWorker('check-owner'),

  // The ledger workers (ledgerWorker): one item, one idempotency key, delivered to every
  // worker; the harness counts the side effects each trial made.
  'ledger.key-first': ledgerWorker('key-first'),
  'ledger.check-process-append': ledgerWorker('check-process-append'),
  'ledger.check-process-create': ledgerWorker('check-process-create'),

  // The update workers (updateWorker): each adds 1 to one counter file a number of times; the
  // harness sums the counter afterwards.
  'update.read-modify-write': updateWorker('read-modify-write'),
  'update.locked-read-modify-write': updateWorker('locked-read-modify-write'),
  'update.temp-rename': updateWorker('temp-rename'),
  'update.locked-temp-rename': updateWorker('locked-temp-rename'),
  'update.append-line': updateWorker('append-line'),

  // The OS-lock holder and intruder: the holder locks a file per intrusion and holds them
  // until stopped; the intruder goes at its own files without asking (osLockIntruder). A probe
  // with a lock of its runtime's own adds it (OS_LOCKS, osLockHolder).
  'os-lock.none': osLockHolder('os-lock.none'),
  'os-lock.intrude': osLockIntruder,

  // The folder-watch consumers (watchConsumer): record every file seen in a folder while the
  // harness drops a burst larger than the notification queue on it.
  'watch.events-only': watchConsumer('events'),
  'watch.events-and-rescan': watchConsumer('events-and-rescan'),
  'watch.poll': watchConsumer('poll'),

  // The mutex contenders (mutexWorker): built-in lock code, and the user's module of
  // params.module (conformance check FILE), raced around a critical section.
  'mutex.check-then-create': mutexWorker('mutex.check-then-create'),
  'mutex.exclusive-create': mutexWorker('mutex.exclusive-create'),
  'mutex.module': mutexWorker('mutex.module'),
  'mutex.proper-lockfile': mutexWorker('mutex.proper-lockfile'),
  'mutex.lockfile': mutexWorker('mutex.lockfile'),
  'mutex.rushstack-lockfile': mutexWorker('mutex.rushstack-lockfile'),

};

// ---- outcomes of a call, as facts ----------------------------------------------------------

/**
 * An error together with how the call delivered it: `throw` (a synchronous exception),
 * `rejected` (the returned promise rejected), `callback` (an error-first callback's error),
 * `error-event` (an `'error'` event, e.g. of a stream). A variant wraps an error it caught
 * from a callback or an event in this, so the loop can report the channel; an unwrapped
 * synchronous exception is `throw`, an unwrapped rejection `rejected`.
 */
export class Delivered extends Error {
  constructor(error, how) {
    super(error && error.message ? error.message : String(error));
    this.error = error;
    this.how = how;
  }
}

/**
 * A returned value as plain data, for the result's `returned`: `{type}` with the JavaScript
 * type (`typeof`, or `null`), and `value` for strings, finite numbers and booleans, or
 * `class` (the constructor's name) for objects. Never the object itself.
 */
export function describeReturned(v) {
  if (v === null) return { type: 'null' };
  const t = typeof v;
  if (t === 'string' || t === 'boolean') return { type: t, value: v };
  if (t === 'number') return Number.isFinite(v) ? { type: t, value: v } : { type: t, value: String(v) };
  if (t === 'bigint') return { type: t, value: v.toString() };
  if (t === 'object' || t === 'function') {
    return { type: t, class: (v.constructor && v.constructor.name) || 'Object' };
  }
  return { type: t };
}

/**
 * A variant entry: a function `(p) => value|Promise`, or `{ call, returns, needs }` where
 * `returns: true` reports the call's value as `returned` and `needs` lists dotted names
 * (`fs.cpSync`, `Bun.write`) that must be functions in `api` for the variant to be supported.
 */
function entryOf(v) {
  return typeof v === 'function' ? { call: v, returns: false, needs: [] } : {
    call: v.call,
    returns: !!v.returns,
    needs: v.needs || [],
  };
}

/** Why a variant cannot run here (a name in `needs` that is not a function in `api`), or null. */
function missingApi(needs, api) {
  for (const name of needs) {
    let o = api;
    for (const part of name.split('.')) o = o === undefined || o === null ? undefined : o[part];
    if (typeof o !== 'function') return `${name} is not a function in this runtime`;
  }
  return null;
}

/** Keeps the event loop alive while an attempt awaits (a promise that never settles must end
 * in the harness's timeout, not in an exit with nothing pending). Returns the release function. */
function keepAlive() {
  const t = setInterval(() => {}, 1 << 30);
  return () => clearInterval(t);
}

function field(msg, k) {
  return msg[k] === undefined ? null : msg[k];
}

/**
 * Makes a prepared variant's call between two stamps (`attempt`: {entry, p, mark, token}) and
 * writes the mark on success. Returns the result's fields (no `type`/`id`): ok, t0_us, t1_us,
 * error, and delivery (failures) or returned (values the variant reports).
 */
async function callVariant(attempt, probe) {
  const { entry, p, mark, token } = attempt;
  const rawError = probe.rawError;
  let ok = true;
  let error = null;
  let delivery = null;
  let value;
  let release = null;
  const t0 = nowUs();
  try {
    value = entry.call(p);
    if (value && typeof value.then === 'function') {
      release = keepAlive();
      delivery = 'rejected';
      value = await value;
      delivery = null;
    }
  } catch (e) {
    ok = false;
    if (delivery === null) delivery = 'throw';
    if (e instanceof Delivered) {
      delivery = e.how;
      error = rawError(e.error);
    } else {
      error = rawError(e);
    }
  }
  if (release) release();
  const t1 = nowUs();
  if (ok && mark) {
    try {
      probe.writeMark(mark, token);
    } catch (e) {
      ok = false;
      error = Object.assign({}, rawError(e), { type: 'MarkError' });
      delivery = 'throw';
    }
  }
  const result = { ok, t0_us: t0, t1_us: t1, error };
  if (!ok) result.delivery = delivery;
  if (ok && entry.returns) result.returned = describeReturned(value);
  return result;
}

/**
 * Resolves a variant message (`{variant, target, source, token, mark}`) ahead of its call:
 * `{attempt}` (see callVariant), or `{reason}` when the probe cannot make it here.
 */
function resolveVariant(msg, probe) {
  const variants = probe.variants;
  const entry = hasOwn(variants, msg.variant) ? entryOf(variants[msg.variant]) : null;
  if (!entry) return { reason: `unknown variant ${msg.variant}` };
  const lacking = missingApi(entry.needs, probe.api || {});
  if (lacking !== null) return { reason: lacking };
  let p;
  try {
    p = probe.params(msg);
  } catch (e) {
    if (!(e instanceof Unsupported)) throw e;
    return { reason: e.message };
  }
  return { attempt: { entry, p, mark: msg.mark, token: msg.token } };
}

// The shared memory of a thread race (../PROTOCOL.md, "Threads"): Int32 [0] the generation
// released last, [1] 1 when that generation is abandoned (a worker could not get ready);
// Float64 at byte 8: the release stamp (µs, the probe's clock), written before [0].
const GATE_BYTES = 16;

/**
 * The workers of thread races, started on first use and kept: `spawn()` (from the probe)
 * returns a port `{post(msg), onMessage(fn), onError(fn)}` to a new worker running
 * `runThreadWorker` on this probe's variants.
 */
class ThreadPool {
  constructor(spawn, diag, exit) {
    this.spawn = spawn;
    this.fatal = (m) => { diag(m); exit(4); };
    this.workers = [];
    this.sab = new SharedArrayBuffer(GATE_BYTES);
    this.gate = new Int32Array(this.sab, 0, 2);
    this.stamp = new Float64Array(this.sab, 8, 1);
    this.gen = 0;
    this.n = 0;
  }

  /** The next message of worker `w` (a promise). */
  next(w) {
    if (w.queue.length > 0) return Promise.resolve(w.queue.shift());
    return new Promise((resolve) => { w.waiting = resolve; });
  }

  /** A new worker, once it said `up` on the same clock as this process. */
  async start() {
    const port = this.spawn();
    const w = { port, queue: [], waiting: null };
    port.onMessage((m) => {
      if (w.waiting) { const r = w.waiting; w.waiting = null; r(m); } else w.queue.push(m);
    });
    port.onError((e) => this.fatal(`a worker failed: ${e && e.stack ? e.stack : e}`));
    port.post({ type: 'init', sab: this.sab });
    const up = await this.next(w);
    if (up.clock !== clock.kind) this.fatal(`a worker's clock is ${up.clock}, the probe's ${clock.kind}`);
    return w;
  }

  /** prepare-threads: each contender to its worker; the ready answer's fields. */
  async prepare(msg) {
    const list = Array.isArray(msg.contenders) ? msg.contenders : [];
    if (list.length === 0) return { supported: false, reason: 'prepare-threads without contenders' };
    const release = keepAlive();
    try {
      while (this.workers.length < list.length) this.workers.push(await this.start());
      this.gen = (this.gen % 0x3fffffff) + 1;
      this.n = list.length;
      Atomics.store(this.gate, 1, 0);
      list.forEach((c, i) => this.workers[i].port.post({ type: 'prepare', gen: this.gen, contender: c }));
      const answers = [];
      for (let i = 0; i < list.length; i++) answers.push(await this.next(this.workers[i]));
      const refused = answers.find((a) => !a.supported);
      if (!refused) return { supported: true };
      // the ready ones wait at the gate: release them as abandoned, and collect their answers
      Atomics.store(this.gate, 1, 1);
      Atomics.store(this.gate, 0, this.gen);
      Atomics.notify(this.gate, 0);
      for (let i = 0; i < list.length; i++) if (answers[i].supported) await this.next(this.workers[i]);
      return { supported: false, reason: refused.reason };
    } finally {
      release();
    }
  }

  /** go: releases every worker of the prepared generation at once; their results, in order. */
  async go() {
    const release = keepAlive();
    this.stamp[0] = nowUs();
    Atomics.store(this.gate, 0, this.gen);
    Atomics.notify(this.gate, 0);
    const results = [];
    for (let i = 0; i < this.n; i++) {
      const r = await this.next(this.workers[i]);
      delete r.type;
      results.push(r);
    }
    release();
    return results;
  }
}

/**
 * The body of a worker of a thread race: `probe` as for runSession (variants, api, params,
 * rawError, writeMark), `port` `{post(msg), onMessage(fn)}` to the probe's main thread. Per
 * `prepare` it resolves the call, answers `ready`, blocks on the shared gate
 * (`Atomics.wait`) until its generation is released, waits its `delay_us` after the release
 * stamp, makes the call between two stamps and answers `result`.
 */
export function runThreadWorker(probe, port) {
  if (clock === null) clock = wallClock();
  let gate = null;
  let stamp = null;
  port.onMessage((msg) => {
    if (msg.type === 'init') {
      gate = new Int32Array(msg.sab, 0, 2);
      stamp = new Float64Array(msg.sab, 8, 1);
      port.post({ type: 'up', clock: clock.kind });
      return;
    }
    if (msg.type !== 'prepare') return;
    const c = msg.contender || {};
    const resolved = resolveVariant(c, probe);
    if (resolved.reason !== undefined) {
      port.post({ type: 'ready', supported: false, reason: resolved.reason });
      return;
    }
    port.post({ type: 'ready', supported: true });
    for (;;) {
      const seen = Atomics.load(gate, 0);
      if (seen === msg.gen) break;
      Atomics.wait(gate, 0, seen, 1000);
    }
    if (Atomics.load(gate, 1) === 1) {
      port.post({ type: 'result', abandoned: true });
      return;
    }
    const delay = typeof c.delay_us === 'number' ? c.delay_us : 0;
    if (delay > 0) {
      const at = stamp[0] + delay;
      while (nowUs() < at) { /* spin: a sleep's granularity is coarser than the offsets */ }
    }
    callVariant(resolved.attempt, probe).then((r) => port.post(Object.assign({ type: 'result' }, r)),
      (e) => port.post({ type: 'result', ok: false, t0_us: null, t1_us: null, error: probe.rawError(e) }));
  });
}

// ---- the loop -----------------------------------------------------------------------------

/**
 * Runs the session until `quit` or end of input, then exits with status 0.
 *
 * probe: {
 *   probe, families, runtime, version, pid   (the hello),
 *   variants: {id: entry}                     (one call each; see entryOf),
 *   api                                       (the object `needs` names are looked up in),
 *   params(msg) -> p                          (the argument of a variant, built at prepare),
 *   rawError(e) -> {type, code, errno, hresult, message},
 *   writeMark(path, token)                    (after a successful call, when `mark` is set),
 *   reader?, send?, diag?, exit?              (I/O; default: node:fs and node:process),
 *   recipes?                                  (default RECIPES),
 * }
 * The clock is the one `useClock` set (its kind goes into the hello as `clock`).
 */
export async function runSession(probe) {
  const or = (v, d) => (v === undefined || v === null ? d : v);
  const reader = or(probe.reader, null) || nodeStdinReader();
  const send = or(probe.send, nodeSend);
  const diag = or(probe.diag, nodeDiag);
  const exit = or(probe.exit, (code) => process.exit(code));
  const recipes = or(probe.recipes, RECIPES);
  const { variants, rawError } = probe;
  const fatal = (msg, code) => { diag(msg); exit(code); };
  if (clock === null) clock = wallClock();

  send({
    protocol: PROTOCOL,
    type: 'hello',
    probe: probe.probe,
    families: probe.families,
    runtime: probe.runtime,
    version: probe.version,
    pid: probe.pid,
    clock: clock.kind,
    variants: Object.keys(variants),
    recipes: Object.keys(recipes),
    capabilities: probe.threads ? ['threads'] : undefined,
  });
  const threads = probe.threads ? new ThreadPool(probe.threads, diag, exit) : null;

  let running = null; // the attempt id of a running loop recipe
  const ctx = {
    rawError,
    reader,
    // True when the harness asked the running loop to end: `stop` (for this attempt, or
    // without id), `quit` or end of input (both left for the main loop).
    stopRequested() {
      for (;;) {
        const line = reader.poll();
        if (line === undefined) return false;
        if (line === null) return true;
        if (line.trim() === '') continue;
        let msg;
        try { msg = JSON.parse(line); } catch { fatal(`not JSON: ${line}`, 3); }
        if (msg && msg.type === 'stop') {
          if (msg.id === undefined || msg.id === null || msg.id === running) return true;
          continue;
        }
        if (msg && msg.type === 'quit') { reader.unread(line); return true; }
        fatal(`${msg && msg.type} while attempt ${running} runs (only stop or quit may come)`, 3);
      }
    },
  };

  let prepared = null;
  for (;;) {
    const line = reader.next();
    if (line === null) break;
    if (line.trim() === '') continue;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      fatal(`not JSON: ${line}`, 3);
    }
    if (msg.type === 'quit') break;
    if (msg.type === 'stop') continue; // nothing runs: the result was sent already
    if (msg.type === 'prepare') {
      prepared = null;
      if (msg.recipe !== undefined && msg.recipe !== null) {
        const name = msg.recipe;
        const recipe = typeof name === 'string' && hasOwn(recipes, name) ? recipes[name] : null;
        if (!recipe) {
          send({ type: 'ready', id: msg.id, supported: false, reason: `unknown recipe ${name}` });
          continue;
        }
        const token = typeof msg.token === 'string' ? msg.token : '';
        const req = {
          id: msg.id,
          target: msg.target,
          source: field(msg, 'source'),
          token,
          data: Buffer.from(token, 'utf8'),
          params: msg.params && typeof msg.params === 'object' ? msg.params : {},
          role: field(msg, 'role'),
          scenario: field(msg, 'scenario'),
        };
        let run;
        try {
          run = recipe.prepare(req, ctx);
        } catch (e) {
          if (!(e instanceof Unsupported)) throw e;
          send({ type: 'ready', id: msg.id, supported: false, reason: e.message });
          continue;
        }
        prepared = { id: msg.id, recipe: run, mark: msg.mark, token };
        send({ type: 'ready', id: msg.id, supported: true });
        continue;
      }
      const resolved = resolveVariant(msg, probe);
      if (resolved.reason !== undefined) {
        send({ type: 'ready', id: msg.id, supported: false, reason: resolved.reason });
        continue;
      }
      prepared = Object.assign({ id: msg.id }, resolved.attempt);
      send({ type: 'ready', id: msg.id, supported: true });
      continue;
    }
    if (msg.type === 'go') {
      if (!prepared || prepared.id !== msg.id) fatal(`go ${msg.id} without prepare`, 3);
      const attempt = prepared;
      prepared = null;
      if (attempt.threads) {
        const results = await threads.go();
        send({ type: 'results', id: msg.id, results });
        continue;
      }
      if (attempt.recipe) {
        running = attempt.id;
        const t0 = nowUs();
        let out;
        const release = keepAlive();
        try {
          out = attempt.recipe(ctx);
          if (out && typeof out.then === 'function') out = await out;
        } catch (e) {
          out = { ok: false, error: rawError(e), step: 'recipe' };
        }
        release();
        const t1 = nowUs();
        running = null;
        let { ok, error } = out;
        if (ok && attempt.mark) {
          try {
            probe.writeMark(attempt.mark, attempt.token);
          } catch (e) {
            ok = false;
            error = Object.assign({}, rawError(e), { type: 'MarkError' });
          }
        }
        const result = { type: 'result', id: msg.id, ok, t0_us: t0, t1_us: t1, error, step: or(out.step, null) };
        if (out.counters) result.counters = out.counters;
        if (out.errors_sample) result.errors_sample = out.errors_sample;
        send(result);
        continue;
      }
      // A variant: exactly the protocol-1 path (one call between the two timestamps), plus
      // the facts of version 2: how a failure was delivered, and the value it returned.
      const out = await callVariant(attempt, probe);
      send(Object.assign({ type: 'result', id: msg.id }, out));
      continue;
    }
    if (msg.type === 'prepare-threads') {
      prepared = null;
      if (!threads) {
        send({ type: 'ready', id: msg.id, supported: false, reason: 'this probe has no threads' });
        continue;
      }
      const answer = await threads.prepare(msg);
      if (answer.supported) prepared = { id: msg.id, threads: true };
      send(Object.assign({ type: 'ready', id: msg.id }, answer));
      continue;
    }
    fatal(`unknown message type ${msg.type}`, 3);
  }
  exit(0);
}
