# conformance probe for Python's file API (family `python`; protocol 2, see ../PROTOCOL.md).
#
# Started as `python3 -I -u probes/python/probe.py`, the working directory the scratch root.
# It performs exactly the call a variant names, or the steps of a recipe (the recipes of
# ../shared/session.mjs, written again with Python's standard library: same ids, params,
# steps, step names and counters), and reports the raw result; it never judges an outcome.
#
# Thread races (--contender-kind thread): one threading.Thread per contender (ThreadRace).
#
# Standard library only; runs on CPython 3.8 and later (and keeps to 3.8's syntax). Calls a
# Python lacks (pathlib.Path.hardlink_to before 3.10) are looked up at run time and answered
# `supported:false`.
#
# stdin is read as bytes from fd 0 with os.read (never through sys.stdin), lines decoded as
# UTF-8 here; while a loop recipe runs, fd 0 is polled with select() (no wait) into the same
# buffer. stdout carries protocol lines only, written with os.write.
import errno
import json
import os
import pathlib
import platform
import re
import select
import shutil
import sys
import threading
import time

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None
try:
    import mmap
except ImportError:
    mmap = None

# The oldest Python this probe runs on (../PROTOCOL.md, "Oldest runtimes"): an older one says
# no hello, so the harness reports the runtime broken, not every cell failed.
if sys.version_info < (3, 8):
    os.write(2, ('probe: Python %d.%d is older than 3.8, the oldest this probe runs on\n' % sys.version_info[:2]).encode())
    os._exit(4)

PROTOCOL = 2
ERRORS_SAMPLE_MAX = 8
PUBLISH_CHUNK = 4096
CLAIM_STUCK_ROUNDS = 100000
UPDATE_LOCK_WAIT_MS = 10000
UPDATE_READ_TRIES = 1000
ON_LINUX = sys.platform.startswith('linux')


# ---- clock ---------------------------------------------------------------------------------

# The stamps (../PROTOCOL.md, "Clocks"): CLOCK_MONOTONIC on Linux, read with
# time.clock_gettime_ns (one clock for every process), in µs; elsewhere the wall clock.
if ON_LINUX and hasattr(time, 'clock_gettime_ns') and hasattr(time, 'CLOCK_MONOTONIC'):
    CLOCK_KIND = 'monotonic'

    def now_us():
        return time.clock_gettime_ns(time.CLOCK_MONOTONIC) / 1000.0
else:
    CLOCK_KIND = 'wall'

    def now_us():
        return time.time_ns() / 1000.0


def now_ms():
    """Milliseconds on a monotonic clock, for pacing and waiting in loops (never sent)."""
    return time.monotonic() * 1000.0


def wall_ms():
    """Milliseconds since the Unix epoch, an integer (JavaScript's Date.now())."""
    return int(time.time() * 1000)


def sleep_ms(ms):
    if ms > 0:
        time.sleep(ms / 1000.0)


# ---- I/O -------------------------------------------------------------------------------------

def diag(msg):
    try:
        os.write(2, ('probe: %s\n' % msg).encode('utf-8', 'replace'))
    except OSError:
        pass


def send(obj):
    data = (json.dumps(obj, ensure_ascii=False, separators=(',', ':')) + '\n').encode('utf-8', 'replace')
    view = memoryview(data)
    while len(view):
        n = os.write(1, view)
        view = view[n:]


class ProtocolError(BaseException):
    """A line the protocol does not allow: the probe exits with status 3. A BaseException, so
    that a recipe's `except Exception` never swallows it."""


class LineReader:
    """Lines of fd 0. next() blocks; poll() never blocks (select with no timeout)."""

    def __init__(self, fd=0):
        self.fd = fd
        self.buf = b''
        self.eof = False
        self.back = []
        self._poll_problem = False

    def _take(self):
        nl = self.buf.find(b'\n')
        if nl < 0:
            return None
        line = self.buf[:nl]
        self.buf = self.buf[nl + 1:]
        return line.decode('utf-8')

    def unread(self, line):
        self.back.append(line)

    def next(self):
        """The next line (blocking), or None at end of input."""
        if self.back:
            return self.back.pop(0)
        while True:
            line = self._take()
            if line is not None:
                return line
            if self.eof:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self.eof = True
                return None
            self.buf += chunk

    def poll_reason(self):
        """Why this probe cannot poll stdin without blocking, or None when it can."""
        if self._poll_problem is False:
            if sys.platform == 'win32':
                self._poll_problem = ('polling stdin for stop needs select() on a pipe, which '
                                      'Windows does not have (this is win32)')
            else:
                self._poll_problem = None
        return self._poll_problem

    def poll(self):
        """A complete line if one is there without waiting; None at end of input; False otherwise."""
        if self.back:
            return self.back.pop(0)
        line = self._take()
        if line is not None:
            return line
        if self.eof:
            return None
        why = self.poll_reason()
        if why is not None:
            raise RuntimeError(why)
        while True:
            ready, _, _ = select.select([self.fd], [], [], 0)
            if not ready:
                return False
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self.eof = True
                return None
            self.buf += chunk
            line = self._take()
            if line is not None:
                return line


# ---- raw errors ------------------------------------------------------------------------------

def type_name(e):
    cls = type(e)
    mod = getattr(cls, '__module__', 'builtins')
    if mod in ('builtins', '__main__', None):
        return cls.__name__
    return '%s.%s' % (mod, cls.__qualname__)


def raw_error(e):
    no = getattr(e, 'errno', None) if isinstance(e, OSError) else None
    if not isinstance(no, int):
        no = None
    code = getattr(e, 'code', None)
    if not isinstance(code, str):
        code = errno.errorcode.get(no) if no is not None else None
    return {'type': type_name(e), 'code': code, 'errno': no, 'hresult': None, 'message': str(e)}


class CheckExists(Exception):
    """The check of a check-then-act anti-pattern found the name taken (code CHECK_EXISTS)."""
    code = 'CHECK_EXISTS'


class Unsupported(Exception):
    """A variant or recipe that cannot run here: answered supported:false with the reason."""


# ---- small file helpers (the calls a Python integrator writes) -------------------------------

def write_all(f, data):
    """Writes all of `data` to a raw (unbuffered) file object, one write(2) per call."""
    view = memoryview(data)
    while len(view):
        n = f.write(view)
        if n is None:
            n = 0
        view = view[n:]


def write_file(p, data, mode='wb'):
    """open(p, mode) + write + close: writeFileSync's counterpart ('wb', 'xb', 'ab')."""
    with open(p, mode) as f:
        f.write(data)


def read_bytes(p):
    with open(p, 'rb') as f:
        return f.read()


def read_text(p):
    with open(p, 'r', encoding='utf-8', newline='') as f:
        return f.read()


def unlink_quiet(p):
    try:
        os.unlink(p)
    except FileNotFoundError:
        pass


# ---- variants --------------------------------------------------------------------------------

# Each entry: a function of the prepared arguments `a` (target, source, token, data) that
# returns the call, a function of no arguments; it may raise Unsupported. Everything that can
# be resolved ahead of the call (Path objects, bytes) is resolved here, before `ready`.

def _open_write(target, mode, token):
    def call():
        with open(target, mode, encoding='utf-8') as f:
            f.write(token)
    return call


def _os_open(target, flags, data):
    def call():
        fd = os.open(target, flags, 0o666)
        try:
            view = memoryview(data)
            while len(view):
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
    return call


def _touch_then_write(target, exist_ok, token):
    path = pathlib.Path(target)

    def call():
        path.touch(exist_ok=exist_ok)
        path.write_text(token, encoding='utf-8')
    return call


def _needs(obj, attr, what):
    if not hasattr(obj, attr):
        raise Unsupported('%s is not in this Python (%s)' % (what, platform.python_version()))
    return getattr(obj, attr)


def _exists_then(check, act):
    def call():
        if check():
            raise CheckExists('target exists (checked before the call)')
        act()
    return call


def _v_path_exists_touch(a):
    path = pathlib.Path(a.target)

    def act():
        path.touch()
        path.write_text(a.token, encoding='utf-8')

    def call():
        if path.exists():
            raise CheckExists('target exists (checked with Path.exists): %s' % a.target)
        act()
    return call


def _v_hardlink_to(a):
    fn = _needs(pathlib.Path, 'hardlink_to', 'pathlib.Path.hardlink_to (3.10+)')
    path = pathlib.Path(a.target)
    return lambda: fn(path, a.source)


def _v_os_path_exists_open(a):
    target, token = a.target, a.token

    def call():
        if os.path.exists(target):
            raise CheckExists('target exists (checked with os.path.exists): %s' % target)
        with open(target, 'w', encoding='utf-8') as f:
            f.write(token)
    return call


def _v_os_path_exists_rename(a):
    target, source = a.target, a.source

    def call():
        if os.path.exists(target):
            raise CheckExists('target exists (checked with os.path.exists): %s' % target)
        os.rename(source, target)
    return call


VARIANTS = {
    'python.open.x': lambda a: _open_write(a.target, 'x', a.token),
    'python.open.w': lambda a: _open_write(a.target, 'w', a.token),
    'python.open.a': lambda a: _open_write(a.target, 'a', a.token),
    'python.os.open.O_EXCL': lambda a: _os_open(a.target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, a.data),
    'python.os.open.O_CREAT': lambda a: _os_open(a.target, os.O_CREAT | os.O_WRONLY, a.data),
    'python.os.open.O_TRUNC': lambda a: _os_open(a.target, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, a.data),
    'python.Path.touch.exist_ok-False': lambda a: _touch_then_write(a.target, False, a.token),
    'python.Path.touch': lambda a: _touch_then_write(a.target, True, a.token),
    'python.Path.write_text': lambda a: (lambda path: lambda: path.write_text(a.token, encoding='utf-8'))(pathlib.Path(a.target)),
    'python.Path.write_bytes': lambda a: (lambda path: lambda: path.write_bytes(a.data))(pathlib.Path(a.target)),
    'python.os.mkdir': lambda a: lambda: os.mkdir(a.target),
    'python.os.makedirs': lambda a: lambda: os.makedirs(a.target),
    'python.os.makedirs.exist_ok': lambda a: lambda: os.makedirs(a.target, exist_ok=True),
    'python.Path.mkdir': lambda a: (lambda path: lambda: path.mkdir())(pathlib.Path(a.target)),
    'python.Path.mkdir.parents.exist_ok': lambda a: (lambda path: lambda: path.mkdir(parents=True, exist_ok=True))(pathlib.Path(a.target)),
    'python.os.rename': lambda a: lambda: os.rename(a.source, a.target),
    'python.os.replace': lambda a: lambda: os.replace(a.source, a.target),
    'python.Path.rename': lambda a: (lambda path: lambda: path.rename(a.target))(pathlib.Path(a.source)),
    'python.Path.replace': lambda a: (lambda path: lambda: path.replace(a.target))(pathlib.Path(a.source)),
    'python.shutil.move': lambda a: lambda: shutil.move(a.source, a.target),
    'python.shutil.copyfile': lambda a: lambda: shutil.copyfile(a.source, a.target),
    'python.shutil.copy': lambda a: lambda: shutil.copy(a.source, a.target),
    'python.shutil.copy2': lambda a: lambda: shutil.copy2(a.source, a.target),
    'python.shutil.copytree': lambda a: lambda: shutil.copytree(a.source, a.target),
    'python.shutil.copytree.dirs_exist_ok': lambda a: lambda: shutil.copytree(a.source, a.target, dirs_exist_ok=True),
    'python.os.link': lambda a: lambda: os.link(a.source, a.target),
    'python.Path.hardlink_to': _v_hardlink_to,
    'python.os.symlink': lambda a: lambda: os.symlink(a.source, a.target),
    'python.Path.symlink_to': lambda a: (lambda path: lambda: path.symlink_to(a.source))(pathlib.Path(a.target)),
    'python.os.path.exists+open.w': _v_os_path_exists_open,
    'python.Path.exists+Path.touch': _v_path_exists_touch,
    'python.os.path.exists+os.rename': _v_os_path_exists_rename,
}

# Variants that move, link or copy a source: prepare refuses them without one.
NEEDS_SOURCE = {
    'python.os.rename', 'python.os.replace', 'python.Path.rename', 'python.Path.replace',
    'python.shutil.move', 'python.shutil.copyfile', 'python.shutil.copy', 'python.shutil.copy2',
    'python.shutil.copytree', 'python.shutil.copytree.dirs_exist_ok', 'python.os.link',
    'python.Path.hardlink_to', 'python.os.symlink', 'python.Path.symlink_to',
    'python.os.path.exists+os.rename',
}


class Args:
    def __init__(self, msg):
        self.target = msg.get('target')
        self.source = msg.get('source')
        token = msg.get('token')
        self.token = token if isinstance(token, str) else ''
        self.data = self.token.encode('utf-8')


def write_mark(mark, token):
    with open(mark, 'w', encoding='utf-8') as f:
        f.write(token)


# ---- recipes ---------------------------------------------------------------------------------
#
# A recipe is a function prepare(req, ctx) that checks the request and returns the routine
# run() -> dict(ok, error, step, counters?, errors_sample?), or raises Unsupported(reason).
# req: id, target, source, token, data (the token's UTF-8 bytes), params, role, scenario.
# ctx: reader (poll_reason), stop_requested().

class Req:
    def __init__(self, msg):
        self.id = msg.get('id')
        self.target = msg.get('target')
        self.source = msg.get('source')
        token = msg.get('token')
        self.token = token if isinstance(token, str) else ''
        self.data = self.token.encode('utf-8')
        params = msg.get('params')
        self.params = params if isinstance(params, dict) else {}
        self.role = msg.get('role')
        self.scenario = msg.get('scenario')


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def string_param(req, name, fallback):
    v = req.params.get(name)
    if v is None:
        return fallback
    if not isinstance(v, str) or v == '':
        raise Unsupported('params.%s must be a non-empty string' % name)
    return v


def bool_param(req, name):
    v = req.params.get(name)
    if v is None:
        return False
    if not isinstance(v, bool):
        raise Unsupported('params.%s must be true or false' % name)
    return v


def positive_param(req, name, most):
    v = req.params.get(name)
    if not is_int(v) or v < 1 or v > most:
        raise Unsupported('params.%s must be an integer from 1 to %d' % (name, most))
    return v


def optional_param(req, name, most):
    """An integer parameter from 0 to `most`, 0 when absent, or Unsupported."""
    v = req.params.get(name)
    if v is None:
        return 0
    if not is_int(v) or v < 0 or v > most:
        raise Unsupported('params.%s must be an integer from 0 to %d' % (name, most))
    return v


def ok_result(counters=None, sample=None):
    r = {'ok': True, 'error': None, 'step': None}
    if counters is not None:
        r['counters'] = counters
    if sample is not None:
        r['errors_sample'] = sample
    return r


def fail_result(e, step, counters=None, sample=None):
    r = {'ok': False, 'error': raw_error(e) if e is not None else None, 'step': step}
    if counters is not None:
        r['counters'] = counters
    if sample is not None:
        r['errors_sample'] = sample
    return r


def publish_content(req):
    """The token's UTF-8 bytes, or with params.size the framed content (src/handoff.rs, framed)."""
    size = req.params.get('size')
    if size is None:
        return req.data
    if not is_int(size) or size < 1 or size > 16 * 1024 * 1024:
        raise Unsupported('params.size must be an integer from 1 to 16777216')
    line = (req.token + '\n').encode('utf-8')
    payload = (line * (size // len(line) + 1))[:size]
    return (('conformance-publish %s %d\n' % (req.token, size)).encode('utf-8') + payload
            + ('end %s\n' % req.token).encode('utf-8'))


def write_chunks(f, data):
    view = memoryview(data)
    for off in range(0, len(data), PUBLISH_CHUNK):
        write_all(f, view[off:off + PUBLISH_CHUNK])


def default_temp_name(target, id_):
    return os.path.join(os.path.dirname(target), '.%s.%d.%s.tmp' % (os.path.basename(target), os.getpid(), id_))


# publish.direct: open(target, 'wb', buffering=0) (create or truncate), 4 KiB writes, close.
def r_publish_direct(req, ctx):
    data = publish_content(req)

    def run():
        step = 'open'
        try:
            f = open(req.target, 'wb', buffering=0)
            try:
                step = 'write'
                write_chunks(f, data)
                step = 'close'
            finally:
                if step != 'close':
                    try:
                        f.close()
                    except OSError:
                        pass
            f.close()
            return ok_result()
        except Exception as e:
            return fail_result(e, step)
    return run


# publish.temp-rename (and -cross-volume): open(temp, 'xb', buffering=0), 4 KiB writes,
# [os.fsync], close, os.replace(temp, target); after a failed step the temp file is removed.
def r_publish_temp_rename(req, ctx):
    temp = string_param(req, 'temp', default_temp_name(req.target, req.id))
    fsync = bool_param(req, 'fsync')
    data = publish_content(req)

    def run():
        step = 'open'
        created = False
        try:
            f = open(temp, 'xb', buffering=0)
            created = True
            try:
                step = 'write'
                write_chunks(f, data)
                if fsync:
                    step = 'fsync'
                    os.fsync(f.fileno())
                step = 'close'
            finally:
                if step != 'close':
                    try:
                        f.close()
                    except OSError:
                        pass
            f.close()
            step = 'rename'
            os.replace(temp, req.target)
            return ok_result()
        except Exception as e:
            if created:
                try:
                    os.unlink(temp)
                except OSError:
                    pass
            return fail_result(e, step)
    return run


def r_claim_rename(req, ctx):
    if not isinstance(req.source, str) or req.source == '':
        raise Unsupported('claim.rename needs a source')

    def run():
        try:
            os.rename(req.source, req.target)
            return ok_result()
        except Exception as e:
            return fail_result(e, 'rename')
    return run


def r_read_poll(req, ctx):
    expect = req.params.get('expect')
    if not isinstance(expect, list) or not all(isinstance(s, str) for s in expect):
        raise Unsupported('read.poll needs params.expect: the list of complete contents (strings)')
    whole = set(s.encode('utf-8') for s in expect)
    why = ctx.reader.poll_reason()
    if why is not None:
        raise Unsupported(why)

    def run():
        c = {'reads': 0, 'complete': 0, 'empty': 0, 'torn': 0, 'absent': 0, 'errors': 0, 'changes': 0}
        sample = []
        last = None
        next_poll = 0.0
        stopping = False
        while True:
            c['reads'] += 1
            try:
                with open(req.target, 'rb') as f:
                    got = f.read()
                if len(got) == 0:
                    c['empty'] += 1
                    seen = ('E',)
                elif got in whole:
                    c['complete'] += 1
                    seen = ('C', got)
                else:
                    c['torn'] += 1
                    seen = ('T', got)
            except FileNotFoundError:
                c['absent'] += 1
                seen = ('A',)
            except Exception as e:
                c['errors'] += 1
                seen = ('X', getattr(e, 'errno', None))
                if len(sample) < ERRORS_SAMPLE_MAX:
                    sample.append(raw_error(e))
            if last is not None and seen != last:
                c['changes'] += 1
            last = seen
            if stopping:
                break
            now = now_ms()
            if now >= next_poll:
                stopping = ctx.stop_requested()
                next_poll = now + 1
        return ok_result(c, sample)
    return run


def claim_worker(method):
    moves = method == 'rename'

    def prepare(req, ctx):
        incoming = string_param(req, 'incoming', None)
        output = string_param(req, 'output', None)
        processing = string_param(req, 'processing', None) if moves else None
        if incoming is None or output is None or (moves and processing is None):
            raise Unsupported('claim workers need params.incoming, params.output (and params.processing to move into)')

        def run():
            c = {'rounds': 0, 'listed': 0, 'claimed': 0, 'claim_failed': 0, 'delete_failed': 0, 'processed': 0}
            sample = []

            def fail(e):
                if len(sample) < ERRORS_SAMPLE_MAX:
                    sample.append(raw_error(e))
            try:
                out = open(output, 'ab', buffering=0)
            except Exception as e:
                return fail_result(e, 'output', c, sample)
            try:
                idle = 0
                while True:
                    c['rounds'] += 1
                    try:
                        names = [n for n in os.listdir(incoming) if not n.endswith('.claim')]
                    except Exception as e:
                        return fail_result(e, 'list', c, sample)
                    if not names:
                        break
                    progress = False
                    for name in names:
                        c['listed'] += 1
                        item = os.path.join(incoming, name)
                        at = item
                        try:
                            if method == 'rename':
                                at = os.path.join(processing, name)
                                os.rename(item, at)
                            elif method == 'marker':
                                open(item + '.claim', 'xb').close()
                            with open(at, 'rb') as f:
                                data = f.read()
                            c['claimed'] += 1
                        except Exception as e:
                            c['claim_failed'] += 1
                            fail(e)
                            continue
                        write_all(out, data + b'\n')
                        c['processed'] += 1
                        progress = True
                        try:
                            os.unlink(at)
                        except Exception as e:
                            c['delete_failed'] += 1
                            fail(e)
                    idle = 0 if progress else idle + 1
                    if idle >= CLAIM_STUCK_ROUNDS:
                        return fail_result(None, 'stuck', c, sample)
            finally:
                out.close()
            return ok_result(c, sample)
        return run
    return prepare


def done_writer(method):
    def prepare(req, ctx):
        data = publish_content(req)
        marker = string_param(req, 'marker', None)
        if marker is None and method.startswith('marker'):
            raise Unsupported('a marker method needs params.marker')
        chunk_ms = req.params.get('chunk_ms')
        if chunk_ms is None:
            chunk_ms = 0
        if not is_int(chunk_ms) or chunk_ms < 0 or chunk_ms > 1000:
            raise Unsupported('params.chunk_ms must be an integer from 0 to 1000')
        manifest = json.dumps({
            'name': os.path.basename(req.target),
            'size': len(data),
            'records': data.count(b'\n'),
            'idempotency_key': req.token,
        }, ensure_ascii=False, separators=(',', ':')).encode('utf-8')

        def run():
            step = 'manifest'
            try:
                if method == 'marker-before-data':
                    write_file(marker, manifest)
                step = 'open'
                f = open(req.target, 'wb', buffering=0)
                try:
                    step = 'write'
                    view = memoryview(data)
                    for off in range(0, len(data), PUBLISH_CHUNK):
                        if off > 0:
                            sleep_ms(chunk_ms)
                        write_all(f, view[off:off + PUBLISH_CHUNK])
                    step = 'close'
                finally:
                    if step != 'close':
                        try:
                            f.close()
                        except OSError:
                            pass
                f.close()
                step = 'manifest'
                if method == 'marker-after-data':
                    write_file(marker, manifest)
                return ok_result()
            except Exception as e:
                return fail_result(e, step)
        return run
    return prepare


def r_consume_poll(req, ctx):
    rule = string_param(req, 'rule', None)
    marker = string_param(req, 'marker', None)
    stable_ms = req.params.get('stable_ms')
    if stable_ms is None:
        stable_ms = 0
    expect = req.params.get('expect')
    if rule not in ('marker', 'size-stable', 'mtime-stable') or (rule == 'marker' and marker is None):
        raise Unsupported('consume.poll needs params.rule (marker, size-stable, mtime-stable) and params.marker for marker')
    if not isinstance(expect, list) or not expect or not isinstance(expect[0], str):
        raise Unsupported('consume.poll needs params.expect')
    if not isinstance(stable_ms, (int, float)) or isinstance(stable_ms, bool):
        raise Unsupported('params.stable_ms must be a number')
    whole = expect[0].encode('utf-8')
    why = ctx.reader.poll_reason()
    if why is not None:
        raise Unsupported(why)

    def run():
        c = {'consumed': 0, 'whole': 0, 'partial': 0, 'checks': 0}
        last = None
        since = 0.0
        deadline = None
        while True:
            c['checks'] += 1
            now = now_ms()
            ready = False
            try:
                if rule == 'marker':
                    ready = os.path.exists(marker)
                else:
                    st = os.stat(req.target)
                    key = st.st_size if rule == 'size-stable' else st.st_mtime_ns
                    if st.st_size > 0 and key == last:
                        ready = now - since >= stable_ms
                    else:
                        last = key
                        since = now
            except OSError:
                pass  # not there yet
            if ready:
                c['consumed'] = 1
                got = None
                try:
                    got = read_bytes(req.target)
                except OSError:
                    pass  # counted as partial
                if got is not None and got == whole:
                    c['whole'] = 1
                else:
                    c['partial'] = 1
                break
            if deadline is None and ctx.stop_requested():
                deadline = now + 2 * stable_ms + 100
            if deadline is not None and now >= deadline:
                break
            sleep_ms(1)
        while deadline is None and not ctx.stop_requested():
            sleep_ms(1)
        return ok_result(c, [])
    return run


# ---- lease -----------------------------------------------------------------------------------

def lease_record(req, ttl_ms):
    now = wall_ms()
    return json.dumps({
        'ownerId': req.token,
        'host': os.environ.get('HOSTNAME', ''),
        'pid': os.getpid(),
        'acquiredAt': now,
        'expiresAt': now + ttl_ms,
        'heartbeatAt': now,
    }, ensure_ascii=False, separators=(',', ':')).encode('utf-8')


def read_lease(p):
    """{'record': dict or None} (None when it does not parse as an object), or None when p is absent."""
    try:
        text = read_text(p)
    except FileNotFoundError:
        return None
    try:
        r = json.loads(text)
    except ValueError:
        return {'record': None}
    if isinstance(r, dict):
        return {'record': r}
    if isinstance(r, list):
        return {'record': {}}  # an object without the fields, as JSON.parse gives in JavaScript
    return {'record': None}


def to_number(v):
    """JavaScript's Number(v) for the values a record holds (NaN for what it cannot read)."""
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if v is None:
        return 0.0
    if isinstance(v, str):
        s = v.strip()
        if s == '':
            return 0.0
        try:
            return float(s)
        except ValueError:
            return float('nan')
    return float('nan')


def expires_at(record):
    """Number(record.expiresAt): NaN when the field is missing."""
    if 'expiresAt' not in record:
        return float('nan')
    return to_number(record['expiresAt'])


def lease_taker(method):
    def prepare(req, ctx):
        lease = string_param(req, 'lease', None)
        held = string_param(req, 'held', None)
        if lease is None or held is None:
            raise Unsupported('a lease taker needs params.lease and params.held')
        stale_ms = positive_param(req, 'stale_ms', 86400000)
        ttl_ms = positive_param(req, 'ttl_ms', 86400000)
        record = lease_record(req, ttl_ms)
        stall_s = optional_param(req, 'stall_us', 1000000) / 1e6

        def run():
            c = {'acquired': 0, 'fresh': 0, 'unreadable': 0, 'restore_failed': 0}
            # dir-mtime's first mkdir is its check: no wait before it
            st_ = {'step': 'check', 'first': method == 'dir-mtime'}

            def set_step(s):
                # a slow taker (params.stall_us): it waits before each step after its check,
                # as one descheduled between its steps would
                if stall_s > 0 and s not in ('check', 'held'):
                    time.sleep(stall_s)
                st_['step'] = s

            def mark_held():
                if c['acquired'] == 1:
                    return
                set_step('held')
                write_file(held, req.data, 'xb')
                c['acquired'] = 1

            def done(acquired):
                if acquired:
                    mark_held()
                return ok_result(c)

            def create():
                if st_['first']:
                    st_['first'] = False
                    st_['step'] = 'create'
                else:
                    set_step('create')
                try:
                    if method == 'dir-mtime':
                        os.mkdir(lease)
                        set_step('record')
                        write_file(os.path.join(lease, 'owner'), record)
                    else:
                        write_file(lease, record, 'xb')
                    return True
                except FileExistsError:
                    if st_['step'] == 'create':
                        return False
                    raise

            try:
                if method in ('mtime', 'dir-mtime'):
                    if method == 'dir-mtime':
                        if create():
                            return done(True)
                        set_step('check')
                    st = None
                    try:
                        st = os.stat(lease)
                    except FileNotFoundError:
                        pass
                    if st is not None and wall_ms() - st.st_mtime_ns / 1e6 < stale_ms:
                        c['fresh'] = 1
                        return done(False)
                    set_step('delete')
                    if method == 'dir-mtime':
                        unlink_quiet(os.path.join(lease, 'owner'))
                        try:
                            os.rmdir(lease)
                        except FileNotFoundError:
                            pass
                        except OSError as e:
                            if e.errno in (errno.ENOTEMPTY, errno.EEXIST):
                                return done(False)
                            raise
                    elif st is not None:
                        unlink_quiet(lease)
                    return done(create())
                seen = read_lease(lease)
                if seen is not None and seen['record'] is None:
                    c['unreadable'] = 1
                    return done(False)
                if seen is not None and not (expires_at(seen['record']) <= wall_ms()):
                    c['fresh'] = 1
                    return done(False)
                if seen is None:
                    return done(create())
                if method == 'expires':
                    set_step('delete')
                    unlink_quiet(lease)
                    return done(create())
                if method == 'rename-aside':
                    aside = '%s.%s.stale' % (lease, req.token)
                    set_step('rename')
                    try:
                        os.rename(lease, aside)
                    except FileNotFoundError:
                        return done(False)
                    set_step('recheck')
                    moved = read_lease(aside)
                    if moved is not None and moved['record'] is not None and \
                            moved['record'].get('ownerId') == seen['record'].get('ownerId'):
                        set_step('delete')
                        unlink_quiet(aside)
                        return done(create())
                    set_step('restore')
                    try:
                        os.link(aside, lease)
                    except FileExistsError:
                        c['restore_failed'] = 1
                    unlink_quiet(aside)
                    return done(False)
                # breaker
                breaker = lease + '.takeover'
                set_step('breaker')
                try:
                    open(breaker, 'xb').close()
                except FileExistsError:
                    return done(False)
                took = False
                failed = None
                try:
                    set_step('recheck')
                    again = read_lease(lease)
                    if again is None or (again['record'] is not None and
                                         again['record'].get('ownerId') == seen['record'].get('ownerId')):
                        set_step('delete')
                        if again is not None:
                            unlink_quiet(lease)
                        took = create()
                        if took:
                            mark_held()
                except Exception as e:
                    failed = (e, st_['step'])
                try:
                    unlink_quiet(breaker)
                except Exception as e:
                    if failed is None:
                        failed = (e, 'unbreak')
                if failed is not None:
                    return fail_result(failed[0], failed[1], c)
                return done(took)
            except Exception as e:
                return fail_result(e, st_['step'], c)
        return run
    return prepare


# ---- holder ----------------------------------------------------------------------------------

def holder_worker(method):
    def prepare(req, ctx):
        lease = string_param(req, 'lease', None)
        effect = string_param(req, 'effect', None)
        if lease is None or effect is None:
            raise Unsupported('a lease holder needs params.lease and params.effect')
        ttl_ms = positive_param(req, 'ttl_ms', 86400000)
        work_ms = positive_param(req, 'work_ms', 86400000)

        def run():
            c = {'effect': 0, 'renewed': 0, 'released': 0, 'lost': 0}
            st_ = {'step': 'work'}

            def mine():
                st_['step'] = 'check'
                seen = read_lease(lease)
                ok = seen is not None and seen['record'] is not None and seen['record'].get('ownerId') == req.token
                if not ok:
                    c['lost'] = 1
                return ok
            try:
                sleep_ms(work_ms)
                if method == 'check-owner' and not mine():
                    return ok_result(c)
                if method != 'no-check':
                    st_['step'] = 'renew'
                    write_file(lease, lease_record(req, ttl_ms))
                    c['renewed'] = 1
                if method == 'check-owner' and not mine():
                    return ok_result(c)
                st_['step'] = 'effect'
                write_file(effect, req.data, 'xb')
                c['effect'] = 1
                if method == 'renew-blind':
                    return ok_result(c)
                if method == 'check-owner' and not mine():
                    return ok_result(c)
                st_['step'] = 'release'
                unlink_quiet(lease)
                c['released'] = 1
                return ok_result(c)
            except Exception as e:
                return fail_result(e, st_['step'], c)
        return run
    return prepare


# ---- ledger ----------------------------------------------------------------------------------

def ledger_worker(method):
    def prepare(req, ctx):
        key = string_param(req, 'key', None)
        effect = string_param(req, 'effect', None)
        ledger = string_param(req, 'ledger', None)
        lst = string_param(req, 'list', None)
        if key is None or effect is None or ledger is None or lst is None:
            raise Unsupported('a ledger worker needs params.key, params.effect, params.ledger and params.list')
        key_file = os.path.join(ledger, key)

        def run():
            c = {'processed': 0, 'skipped': 0, 'record_refused': 0}
            st_ = {'step': 'check'}

            def effect_now():
                st_['step'] = 'effect'
                write_file(effect, req.data, 'xb')
                c['processed'] = 1
            try:
                if method == 'key-first':
                    st_['step'] = 'record'
                    try:
                        write_file(key_file, req.data, 'xb')
                    except FileExistsError:
                        c['skipped'] = 1
                        return ok_result(c)
                    effect_now()
                elif method == 'check-process-append':
                    text = ''
                    try:
                        text = read_text(lst)
                    except FileNotFoundError:
                        pass
                    if key in text.split('\n'):
                        c['skipped'] = 1
                        return ok_result(c)
                    effect_now()
                    st_['step'] = 'record'
                    write_file(lst, (key + '\n').encode('utf-8'), 'ab')
                else:
                    if os.path.exists(key_file):
                        c['skipped'] = 1
                        return ok_result(c)
                    effect_now()
                    st_['step'] = 'record'
                    try:
                        write_file(key_file, req.data, 'xb')
                    except FileExistsError:
                        c['record_refused'] = 1
                return ok_result(c)
            except Exception as e:
                return fail_result(e, st_['step'], c)
        return run
    return prepare


# ---- update ----------------------------------------------------------------------------------

_WHOLE_NUMBER = re.compile(r'[0-9]+')


def update_worker(method):
    def prepare(req, ctx):
        counter = string_param(req, 'counter', None)
        lock = string_param(req, 'lock', None)
        temp = string_param(req, 'temp', None)
        increments = req.params.get('increments')
        if counter is None or lock is None or temp is None or not is_int(increments) or increments < 0:
            raise Unsupported('an update worker needs params.counter, params.lock, params.temp and params.increments')
        locked = method.startswith('locked-')
        via_temp = method.endswith('temp-rename')

        def run():
            c = {'increments': 0, 'unreadable_reads': 0, 'lock_waits': 0}
            st_ = {'step': 'read'}

            def read_value():
                tries = 0
                while True:
                    st_['step'] = 'read'
                    text = read_text(counter).strip()
                    if _WHOLE_NUMBER.fullmatch(text):
                        return int(text)
                    c['unreadable_reads'] += 1
                    if tries >= UPDATE_READ_TRIES:
                        raise Exception('the counter held no whole number %d times in a row' % UPDATE_READ_TRIES)
                    tries += 1
            try:
                for _ in range(increments):
                    if method == 'append-line':
                        st_['step'] = 'append'
                        with open(counter, 'a', encoding='utf-8') as f:
                            f.write('1\n')
                        c['increments'] += 1
                        continue
                    if locked:
                        st_['step'] = 'lock'
                        until = now_ms() + UPDATE_LOCK_WAIT_MS
                        while True:
                            try:
                                open(lock, 'xb').close()
                                break
                            except FileExistsError:
                                pass
                            c['lock_waits'] += 1
                            if now_ms() > until:
                                raise Exception('the lock stayed taken for %d ms' % UPDATE_LOCK_WAIT_MS)
                            sleep_ms(0.1)
                    nxt = '%d\n' % (read_value() + 1)
                    if via_temp:
                        st_['step'] = 'write'
                        with open(temp, 'x', encoding='utf-8') as f:
                            f.write(nxt)
                        st_['step'] = 'rename'
                        os.replace(temp, counter)
                    else:
                        st_['step'] = 'write'
                        with open(counter, 'w', encoding='utf-8') as f:
                            f.write(nxt)
                    c['increments'] += 1
                    if locked:
                        st_['step'] = 'unlock'
                        os.unlink(lock)
                return ok_result(c)
            except Exception as e:
                return fail_result(e, st_['step'], c)
        return run
    return prepare


# ---- os-lock ---------------------------------------------------------------------------------

class _Held:
    def __init__(self, f, unlock):
        self.f = f
        self.unlock = unlock

    def release(self):
        try:
            if self.unlock:
                fcntl.flock(self.f.fileno(), fcntl.LOCK_UN)
        finally:
            self.f.close()


def _none_take(p):
    return _Held(open(p, 'r+b'), False)


def _none_try_take(p, wait_ms):
    return _none_take(p)


def _flock_take(p):
    f = open(p, 'r+b')
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
    except BaseException:
        f.close()
        raise
    return _Held(f, True)


def _flock_try_take(p, wait_ms):
    """flock(LOCK_EX | LOCK_NB) again about every millisecond for wait_ms at most: the lock
    (held) or None when it did not come; another error is raised."""
    f = open(p, 'r+b')
    until = now_ms() + wait_ms
    try:
        while True:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                return _Held(f, True)
            except BlockingIOError:
                pass
            if now_ms() >= until:
                f.close()
                return None
            sleep_ms(1)
    except BaseException:
        f.close()
        raise


OS_LOCKS = {'os-lock.none': (_none_take, _none_try_take)}
if fcntl is not None and hasattr(fcntl, 'flock'):
    OS_LOCKS['os-lock.flock'] = (_flock_take, _flock_try_take)


def os_lock_holder(id_):
    def prepare(req, ctx):
        files = req.params.get('files')
        locked = string_param(req, 'locked', None)
        if not isinstance(files, dict) or locked is None:
            raise Unsupported('an OS-lock holder needs params.files and params.locked')
        if id_ not in OS_LOCKS:
            raise Unsupported('no %s here' % id_)
        take = OS_LOCKS[id_][0]
        why = ctx.reader.poll_reason()
        if why is not None:
            raise Unsupported(why)

        def run():
            c = {'locked': 0, 'released': 0}
            held = []
            step = 'lock'
            failed = None
            try:
                for p in files.values():
                    held.append(take(p))
                    c['locked'] += 1
                step = 'mark'
                open(locked, 'xb').close()
                step = 'hold'
                while not ctx.stop_requested():
                    sleep_ms(1)
            except Exception as e:
                failed = (e, step)
            for h in held:
                try:
                    h.release()
                    c['released'] += 1
                except Exception as e:
                    if failed is None:
                        failed = (e, 'release')
            if failed is not None:
                return fail_result(failed[0], failed[1], c)
            return ok_result(c)
        return run
    return prepare


def r_os_lock_intrude(req, ctx):
    files = req.params.get('files')
    locked = string_param(req, 'locked', None)
    relocked = string_param(req, 'relocked', None)
    moved = string_param(req, 'moved', None)
    lock = string_param(req, 'lock', None)
    if not isinstance(files, dict) or locked is None or relocked is None or moved is None or lock is None:
        raise Unsupported('an OS-lock intruder needs params.files, params.locked, params.relocked, params.moved and params.lock')
    for name in ('write', 'append', 'rename', 'delete', 'relock'):
        if not isinstance(files.get(name), str):
            raise Unsupported('an OS-lock intruder needs params.files.%s' % name)
    if lock not in OS_LOCKS:
        raise Unsupported('no %s here' % lock)
    try_take = OS_LOCKS[lock][1]
    wait_ms = positive_param(req, 'wait_ms', 600000)
    relock_ms = positive_param(req, 'relock_ms', 600000)

    def run():
        c = {'write': 0, 'append': 0, 'rename': 0, 'delete': 0, 'mmap_tried': 0, 'relock': 0}
        sample = []

        def refused(e):
            if len(sample) < ERRORS_SAMPLE_MAX:
                sample.append(raw_error(e))

        def attempt(name, fn):
            try:
                fn()
                c[name] = 1
            except Exception as e:
                refused(e)
        until = now_ms() + wait_ms
        while not os.path.exists(locked):
            if now_ms() > until:
                return fail_result(Exception('the holder had not locked its files after %d ms' % wait_ms), 'wait', c)
            sleep_ms(1)
        attempt('write', lambda: write_file(files['write'], req.data, 'wb'))
        attempt('append', lambda: write_file(files['append'], req.data, 'ab'))
        attempt('rename', lambda: os.rename(files['rename'], moved))
        attempt('delete', lambda: os.unlink(files['delete']))
        # a mapped write: mmap.mmap(fileno, 0) (read and write), the token's bytes at offset 0
        # as far as the file reaches, flush; mmap_tried is 1 once the mapping call returned or
        # failed (the harness reads what got through from the file)
        if mmap is not None and isinstance(files.get('mmap'), str):
            try:
                with open(files['mmap'], 'r+b') as f:
                    c['mmap_tried'] = 1
                    m = mmap.mmap(f.fileno(), 0)
                    try:
                        n = min(len(req.data), len(m))
                        m[0:n] = req.data[:n]
                        m.flush()
                    finally:
                        m.close()
            except Exception as e:
                refused(e)
        try:
            h = try_take(files['relock'], relock_ms)
            if h is not None:
                try:
                    write_file(relocked, req.data, 'xb')
                    c['relock'] = 1
                finally:
                    h.release()
        except Exception as e:
            refused(e)
        return ok_result(c, sample)
    return run


# ---- watch -----------------------------------------------------------------------------------

# watch.poll only: the standard library has no change notifications (no inotify binding), so
# watch.events-only and watch.events-and-rescan are not offered.
def r_watch_poll(req, ctx):
    d = string_param(req, 'dir', None)
    record = string_param(req, 'record', None)
    watching = string_param(req, 'watching', None)
    if d is None or record is None or watching is None:
        raise Unsupported('a watch consumer needs params.dir, params.record and params.watching')
    rescan_ms = positive_param(req, 'rescan_ms', 600000)
    why = ctx.reader.poll_reason()
    if why is not None:
        raise Unsupported(why)

    def run():
        c = {'events': 0, 'listings': 0, 'recorded': 0}
        seen = set()
        step = 'record'
        f = None
        failed = None
        try:
            f = open(record, 'ab', buffering=0)
            step = 'mark'
            open(watching, 'xb').close()
            next_list = now_ms() + rescan_ms
            while not ctx.stop_requested():
                if now_ms() >= next_list:
                    step = 'list'
                    for name in os.listdir(d):
                        if name in seen:
                            continue
                        seen.add(name)
                        step = 'record'
                        write_all(f, (name + '\n').encode('utf-8', 'surrogateescape'))
                        c['recorded'] += 1
                    c['listings'] += 1
                    next_list = now_ms() + rescan_ms
                sleep_ms(1)
        except Exception as e:
            failed = (e, step)
        finally:
            if f is not None:
                f.close()
        if failed is not None:
            return fail_result(failed[0], failed[1], c)
        return ok_result(c)
    return run


# ---- mutex -----------------------------------------------------------------------------------

def _ctc_acquire(p, owner):
    if os.path.exists(p):
        return False
    with open(p, 'w', encoding='utf-8') as f:
        f.write(owner)
    return True


def _ctc_release(p, owner):
    unlink_quiet(p)


def _excl_acquire(p, owner):
    try:
        with open(p, 'x', encoding='utf-8') as f:
            f.write(owner)
        return True
    except FileExistsError:
        return False


def _excl_release(p, owner):
    try:
        seen = read_text(p)
    except FileNotFoundError:
        return
    if seen == owner:
        os.unlink(p)


LOCKS = {
    'mutex.check-then-create': (_ctc_acquire, _ctc_release),
    'mutex.exclusive-create': (_excl_acquire, _excl_release),
}


def _log_has(log, prefix):
    try:
        text = read_text(log)
    except FileNotFoundError:
        return False
    return any(l.startswith(prefix) for l in text.split('\n'))


def _wait_until(ready, ms, what):
    until = now_ms() + ms
    while not ready():
        if now_ms() > until:
            raise Exception('%s did not come within %d ms' % (what, ms))
        sleep_ms(1)


def mutex_worker(id_):
    def prepare(req, ctx):
        lock_path = string_param(req, 'lock', None)
        log = string_param(req, 'log', None)
        if lock_path is None or log is None:
            raise Unsupported('a mutex contender needs params.lock and params.log')
        if id_ not in LOCKS:
            raise Unsupported('no %s here' % id_)
        role = req.role
        if role not in ('contender', 'holder', 'releaser'):
            raise Unsupported('no mutex role %s' % role)
        wait_ms = req.params.get('wait_ms')
        if wait_ms is None:
            wait_ms = 0
        if not is_int(wait_ms) or wait_ms < 0 or wait_ms > 3600000:
            raise Unsupported('params.wait_ms must be an integer from 0 to 3600000')
        retry_ms = positive_param(req, 'retry_ms', 10000)
        hold_ms = positive_param(req, 'hold_ms', 600000)
        go_wait_ms = positive_param(req, 'go_wait_ms', 3600000)
        go = string_param(req, 'go', None)
        holder_token = string_param(req, 'holder', None)
        released = string_param(req, 'released', None)
        if role == 'releaser' and (holder_token is None or released is None):
            raise Unsupported('a releaser needs params.holder and params.released')
        if role == 'holder':
            why = ctx.reader.poll_reason()
            if why is not None:
                raise Unsupported(why)
        acquire, release = LOCKS[id_]

        def run():
            c = {'acquired': 0, 'released': 0, 'tries': 0, 'foreign_release': 0, 'foreign_refused': 0}

            def line(what):
                with open(log, 'a', encoding='utf-8') as f:
                    f.write('%s %s %d\n' % (what, req.token, wall_ms()))
            step = 'load'
            failed = None
            try:
                if go is not None:
                    step = 'wait'
                    _wait_until(lambda: os.path.exists(go), go_wait_ms, 'the go marker %s' % go)
                if role == 'releaser':
                    step = 'wait'
                    _wait_until(lambda: _log_has(log, 'enter %s ' % holder_token), go_wait_ms, "the holder's enter line")
                    step = 'release-other'
                    try:
                        release(lock_path, req.token)
                        c['foreign_release'] = 1
                    except Exception:
                        c['foreign_refused'] = 1
                    write_file(released, req.data, 'xb')
                step = 'acquire'
                until = now_ms() + wait_ms
                while True:
                    c['tries'] += 1
                    if acquire(lock_path, req.token):
                        c['acquired'] = 1
                        break
                    if now_ms() >= until:
                        break
                    sleep_ms(retry_ms)
                if c['acquired'] == 1:
                    step = 'enter'
                    line('enter')
                    step = 'hold'
                    if role == 'holder':
                        while not ctx.stop_requested():
                            sleep_ms(2)
                    else:
                        sleep_ms(hold_ms)
                    step = 'leave'
                    line('leave')
                    step = 'release'
                    release(lock_path, req.token)
                    c['released'] = 1
            except Exception as e:
                failed = (e, step)
            try:
                line('done')
            except Exception as e:
                if failed is None:
                    failed = (e, 'done')
            if failed is not None:
                return fail_result(failed[0], failed[1], c)
            return ok_result(c)
        return run
    return prepare


RECIPES = {
    'publish.direct': r_publish_direct,
    'publish.temp-rename': r_publish_temp_rename,
    'publish.temp-rename-cross-volume': r_publish_temp_rename,
    'claim.rename': r_claim_rename,
    'read.poll': r_read_poll,
    'claim.rename-claim': claim_worker('rename'),
    'claim.list-then-open': claim_worker('list-then-open'),
    'claim.exclusive-marker': claim_worker('marker'),
    'done.marker-after-data': done_writer('marker-after-data'),
    'done.marker-before-data': done_writer('marker-before-data'),
    'done.size-stable': done_writer('size-stable'),
    'done.mtime-stable': done_writer('mtime-stable'),
    'consume.poll': r_consume_poll,
    'lease.mtime-delete-create': lease_taker('mtime'),
    'lease.expires-delete-create': lease_taker('expires'),
    'lease.rename-aside': lease_taker('rename-aside'),
    'lease.breaker': lease_taker('breaker'),
    'lease.dir-mtime': lease_taker('dir-mtime'),
    'holder.no-check': holder_worker('no-check'),
    'holder.renew-blind': holder_worker('renew-blind'),
    'holder.check-owner': holder_worker('check-owner'),
    'ledger.key-first': ledger_worker('key-first'),
    'ledger.check-process-append': ledger_worker('check-process-append'),
    'ledger.check-process-create': ledger_worker('check-process-create'),
    'update.read-modify-write': update_worker('read-modify-write'),
    'update.locked-read-modify-write': update_worker('locked-read-modify-write'),
    'update.temp-rename': update_worker('temp-rename'),
    'update.locked-temp-rename': update_worker('locked-temp-rename'),
    'update.append-line': update_worker('append-line'),
    'os-lock.none': os_lock_holder('os-lock.none'),
    'os-lock.intrude': r_os_lock_intrude,
    'watch.poll': r_watch_poll,
    'mutex.check-then-create': mutex_worker('mutex.check-then-create'),
    'mutex.exclusive-create': mutex_worker('mutex.exclusive-create'),
}
if 'os-lock.flock' in OS_LOCKS:
    RECIPES['os-lock.flock'] = os_lock_holder('os-lock.flock')


# ---- the session -----------------------------------------------------------------------------

def runtime_name():
    impl = platform.python_implementation()
    return 'python' if impl == 'CPython' else impl.lower()


class Ctx:
    def __init__(self, reader):
        self.reader = reader
        self.running = None

    def stop_requested(self):
        """True when the harness asked the running loop to end: `stop` (for this attempt, or
        without id), `quit` or end of input (both left for the main loop)."""
        while True:
            line = self.reader.poll()
            if line is False:
                return False
            if line is None:
                return True
            if line.strip() == '':
                continue
            msg = parse(line)
            t = msg.get('type')
            if t == 'stop':
                mid = msg.get('id')
                if mid is None or mid == self.running:
                    return True
                continue
            if t == 'quit':
                self.reader.unread(line)
                return True
            raise ProtocolError('%s while attempt %s runs (only stop or quit may come)' % (t, self.running))


def parse(line):
    try:
        msg = json.loads(line)
    except ValueError:
        raise ProtocolError('not JSON: %s' % line)
    if not isinstance(msg, dict):
        raise ProtocolError('not a JSON object: %s' % line)
    return msg


def resolve_variant(msg):
    """A variant message ({variant, target, source, token, mark}) resolved ahead of its call:
    (attempt, None), or (None, reason) when the probe cannot make it here."""
    variant = msg.get('variant')
    make = VARIANTS.get(variant) if isinstance(variant, str) else None
    if make is None:
        return None, 'unknown variant %s' % variant
    args = Args(msg)
    try:
        if not isinstance(args.target, str) or args.target == '':
            raise Unsupported('%s needs a target' % variant)
        if variant in NEEDS_SOURCE and (not isinstance(args.source, str) or args.source == ''):
            raise Unsupported('%s needs a source' % variant)
        call = make(args)
    except Unsupported as e:
        return None, str(e)
    return {'call': call, 'mark': msg.get('mark'), 'token': args.token}, None


def call_variant(attempt):
    """Makes a prepared variant's call between two stamps and writes the mark on success: the
    result's fields (ok, t0_us, t1_us, error, and delivery on failure)."""
    call = attempt['call']
    ok = True
    error = None
    t0 = now_us()
    try:
        call()
    except Exception as e:
        ok = False
        error = raw_error(e)
    t1 = now_us()
    if ok and attempt['mark']:
        try:
            write_mark(attempt['mark'], attempt['token'])
        except Exception as e:
            ok = False
            error = dict(raw_error(e), type='MarkError')
    result = {'ok': ok, 't0_us': t0, 't1_us': t1, 'error': error}
    if not ok:
        result['delivery'] = 'throw'
    return result


class ThreadRace:
    """A thread race (../PROTOCOL.md, "Threads"): one threading.Thread per contender, started at
    prepare-threads, each blocked on one threading.Event; go stamps the release, sets the event,
    and every thread waits its delay_us after that stamp (time.sleep(0) between looks, which lets
    the others have the GIL), then makes its call between two stamps."""

    def __init__(self, attempts, delays):
        self.attempts = attempts
        self.delays = delays
        self.gate = threading.Event()
        self.abandoned = False
        self.release_us = 0.0
        self.results = [None] * len(attempts)
        self.waiting = threading.Semaphore(0)
        self.threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(len(attempts))]
        for th in self.threads:
            th.start()
        for _ in self.threads:
            self.waiting.acquire()

    @staticmethod
    def prepare(msg):
        contenders = msg.get('contenders')
        if not isinstance(contenders, list) or not contenders:
            return None, 'prepare-threads without contenders'
        attempts = []
        delays = []
        for c in contenders:
            if not isinstance(c, dict):
                return None, 'a contender is not an object'
            attempt, reason = resolve_variant(c)
            if reason is not None:
                return None, reason
            d = c.get('delay_us')
            attempts.append(attempt)
            delays.append(float(d) if isinstance(d, (int, float)) and not isinstance(d, bool) else 0.0)
        return ThreadRace(attempts, delays), None

    def _run(self, i):
        self.waiting.release()
        self.gate.wait()
        if self.abandoned:
            return
        at = self.release_us + self.delays[i]
        if self.delays[i] > 0:
            while now_us() < at:
                time.sleep(0)
        try:
            self.results[i] = call_variant(self.attempts[i])
        except BaseException as e:  # never: call_variant catches the call's errors
            self.results[i] = {'ok': False, 't0_us': None, 't1_us': None, 'error': raw_error(e)}

    def abandon(self):
        """Lets the threads of a race that gets no go end without calling."""
        self.abandoned = True
        self.gate.set()
        for th in self.threads:
            th.join()

    def go(self):
        self.release_us = now_us()
        self.gate.set()
        for th in self.threads:
            th.join()
        return self.results


def drop(prepared):
    if prepared is not None and 'threads' in prepared:
        prepared['threads'].abandon()


def session():
    reader = LineReader(0)
    ctx = Ctx(reader)
    send({
        'protocol': PROTOCOL,
        'type': 'hello',
        'probe': 'python',
        'families': ['python'],
        'runtime': runtime_name(),
        'version': platform.python_version(),
        'pid': os.getpid(),
        'clock': CLOCK_KIND,
        'variants': list(VARIANTS.keys()),
        'recipes': list(RECIPES.keys()),
        'capabilities': ['threads'],
    })
    prepared = None
    while True:
        line = reader.next()
        if line is None:
            break
        if line.strip() == '':
            continue
        msg = parse(line)
        t = msg.get('type')
        if t == 'quit':
            break
        if t == 'stop':
            continue  # nothing runs: the result was sent already
        if t == 'prepare':
            drop(prepared)
            prepared = None
            mid = msg.get('id')
            name = msg.get('recipe')
            if name is not None:
                recipe = RECIPES.get(name) if isinstance(name, str) else None
                if recipe is None:
                    send({'type': 'ready', 'id': mid, 'supported': False, 'reason': 'unknown recipe %s' % name})
                    continue
                req = Req(msg)
                try:
                    run = recipe(req, ctx)
                except Unsupported as e:
                    send({'type': 'ready', 'id': mid, 'supported': False, 'reason': str(e)})
                    continue
                prepared = {'id': mid, 'recipe': run, 'mark': msg.get('mark'), 'token': req.token}
                send({'type': 'ready', 'id': mid, 'supported': True})
                continue
            attempt, reason = resolve_variant(msg)
            if reason is not None:
                send({'type': 'ready', 'id': mid, 'supported': False, 'reason': reason})
                continue
            attempt['id'] = mid
            prepared = attempt
            send({'type': 'ready', 'id': mid, 'supported': True})
            continue
        if t == 'go':
            mid = msg.get('id')
            if prepared is None or prepared['id'] != mid:
                raise ProtocolError('go %s without prepare' % mid)
            attempt = prepared
            prepared = None
            if 'recipe' in attempt:
                ctx.running = mid
                t0 = now_us()
                try:
                    out = attempt['recipe']()
                except ProtocolError:
                    raise
                except Exception as e:
                    out = fail_result(e, 'recipe')
                t1 = now_us()
                ctx.running = None
                ok, error = out['ok'], out['error']
                if ok and attempt['mark']:
                    try:
                        write_mark(attempt['mark'], attempt['token'])
                    except Exception as e:
                        ok = False
                        error = dict(raw_error(e), type='MarkError')
                result = {'type': 'result', 'id': mid, 'ok': ok, 't0_us': t0, 't1_us': t1, 'error': error,
                          'step': out.get('step')}
                if 'counters' in out:
                    result['counters'] = out['counters']
                if 'errors_sample' in out:
                    result['errors_sample'] = out['errors_sample']
                send(result)
                continue
            if 'threads' in attempt:
                send({'type': 'results', 'id': mid, 'results': attempt['threads'].go()})
                continue
            result = {'type': 'result', 'id': mid}
            result.update(call_variant(attempt))
            send(result)
            continue
        if t == 'prepare-threads':
            drop(prepared)
            prepared = None
            mid = msg.get('id')
            race, reason = ThreadRace.prepare(msg)
            if reason is not None:
                send({'type': 'ready', 'id': mid, 'supported': False, 'reason': reason})
                continue
            prepared = {'id': mid, 'threads': race}
            send({'type': 'ready', 'id': mid, 'supported': True})
            continue
        raise ProtocolError('unknown message type %s' % t)


def main():
    try:
        session()
    except ProtocolError as e:
        diag(str(e))
        os._exit(3)
    except BaseException as e:  # an internal failure
        import traceback
        diag('fatal: %s' % ''.join(traceback.format_exception(type(e), e, e.__traceback__)))
        os._exit(4)
    os._exit(0)


if __name__ == '__main__':
    main()
