// conformance probe for the Java file-system API family "java" (protocol 2, session mode; see
// ../PROTOCOL.md). It performs exactly the call a variant names, or the steps a recipe names,
// and reports the raw result; it never judges the outcome. The recipes are those of
// ../shared/session.mjs (and ../dotnet/Probe.cs), step for step, with the calls a Java
// integrator would use: java.nio.file.Files, FileChannel, WatchService.
//
// One source file, JDK 17 standard library only: `javac -encoding UTF-8 -d DIR Probe.java`,
// then `java -cp DIR Probe` with the scratch root as working directory. JSON is read and written
// by hand (the JDK has no JSON). Output is pure ASCII: every non-ASCII character is written as a
// \\uXXXX escape, so the output encoding does not matter.
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileNotFoundException;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

public final class Probe {
    static final int PROTOCOL = 2;

    // ---- JSON ------------------------------------------------------------------------------

    /** A JSON number kept as its source text, so an attempt id is echoed exactly as received. */
    static final class JsonNumber {
        final String raw;
        JsonNumber(String raw) { this.raw = raw; }
        double toDouble() { return Double.parseDouble(raw); }
    }

    /** Pre-formatted JSON text (timestamps). */
    static final class RawJson {
        final String text;
        RawJson(String text) { this.text = text; }
    }

    /** An ordered JSON object, so replies read in the protocol's documented field order. */
    static final class Obj extends LinkedHashMap<String, Object> {
        private static final long serialVersionUID = 1L;
        Obj set(String k, Object v) { put(k, v); return this; }
    }

    static final class JsonError extends Exception {
        private static final long serialVersionUID = 1L;
        JsonError(String m) { super(m); }
    }

    static final class Json {
        final String s;
        int i;
        Json(String s) { this.s = s; }

        /** Parses one JSON text: objects LinkedHashMap, arrays ArrayList, numbers JsonNumber,
         * strings String, true/false Boolean, null null. */
        static Object parse(String s) throws JsonError {
            Json p = new Json(s);
            p.ws();
            Object v = p.value(0);
            p.ws();
            if (p.i != s.length()) throw p.fail("trailing characters");
            return v;
        }

        JsonError fail(String what) { return new JsonError("JSON: " + what + " at offset " + i); }

        void ws() {
            while (i < s.length()) {
                char c = s.charAt(i);
                if (c == ' ' || c == '\t' || c == '\n' || c == '\r') i++; else break;
            }
        }

        Object value(int depth) throws JsonError {
            if (depth > 64) throw fail("nesting too deep");
            if (i >= s.length()) throw fail("unexpected end");
            char c = s.charAt(i);
            if (c == '{') return object(depth);
            if (c == '[') return array(depth);
            if (c == '"') return string();
            if (c == '-' || (c >= '0' && c <= '9')) return number();
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            throw fail("unexpected character");
        }

        Map<String, Object> object(int depth) throws JsonError {
            Map<String, Object> m = new LinkedHashMap<>();
            i++;
            ws();
            if (i < s.length() && s.charAt(i) == '}') { i++; return m; }
            for (;;) {
                ws();
                if (i >= s.length() || s.charAt(i) != '"') throw fail("expected a member name");
                String k = string();
                ws();
                if (i >= s.length() || s.charAt(i) != ':') throw fail("expected ':'");
                i++;
                ws();
                m.put(k, value(depth + 1));
                ws();
                if (i >= s.length()) throw fail("unexpected end in object");
                char c = s.charAt(i++);
                if (c == ',') continue;
                if (c == '}') return m;
                i--;
                throw fail("expected ',' or '}'");
            }
        }

        List<Object> array(int depth) throws JsonError {
            List<Object> l = new ArrayList<>();
            i++;
            ws();
            if (i < s.length() && s.charAt(i) == ']') { i++; return l; }
            for (;;) {
                ws();
                l.add(value(depth + 1));
                ws();
                if (i >= s.length()) throw fail("unexpected end in array");
                char c = s.charAt(i++);
                if (c == ',') continue;
                if (c == ']') return l;
                i--;
                throw fail("expected ',' or ']'");
            }
        }

        String string() throws JsonError {
            i++;
            StringBuilder sb = new StringBuilder();
            for (;;) {
                if (i >= s.length()) throw fail("unterminated string");
                char c = s.charAt(i++);
                if (c == '"') return sb.toString();
                if (c < 0x20) { i--; throw fail("control character in string"); }
                if (c != '\\') { sb.append(c); continue; }
                if (i >= s.length()) throw fail("unterminated escape");
                char e = s.charAt(i++);
                switch (e) {
                    case '"': sb.append('"'); break;
                    case '\\': sb.append('\\'); break;
                    case '/': sb.append('/'); break;
                    case 'b': sb.append('\b'); break;
                    case 'f': sb.append('\f'); break;
                    case 'n': sb.append('\n'); break;
                    case 'r': sb.append('\r'); break;
                    case 't': sb.append('\t'); break;
                    case 'u': {
                        // UTF-16 code units: an escaped surrogate pair becomes the two halves in a
                        // row, which is how a Java string holds that character
                        if (i + 4 > s.length()) throw fail("short \\u escape");
                        int code = 0;
                        for (int k = 0; k < 4; k++) {
                            int h = Character.digit(s.charAt(i + k), 16);
                            if (h < 0) throw fail("bad hex digit");
                            code = code * 16 + h;
                        }
                        i += 4;
                        sb.append((char) code);
                        break;
                    }
                    default: i--; throw fail("bad escape");
                }
            }
        }

        JsonNumber number() throws JsonError {
            int start = i;
            if (s.charAt(i) == '-') i++;
            if (i < s.length() && s.charAt(i) == '0') i++;
            else if (i < s.length() && s.charAt(i) >= '1' && s.charAt(i) <= '9') { while (i < s.length() && digit(s.charAt(i))) i++; }
            else throw fail("bad number");
            if (i < s.length() && s.charAt(i) == '.') {
                i++;
                if (i >= s.length() || !digit(s.charAt(i))) throw fail("bad fraction");
                while (i < s.length() && digit(s.charAt(i))) i++;
            }
            if (i < s.length() && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
                i++;
                if (i < s.length() && (s.charAt(i) == '+' || s.charAt(i) == '-')) i++;
                if (i >= s.length() || !digit(s.charAt(i))) throw fail("bad exponent");
                while (i < s.length() && digit(s.charAt(i))) i++;
            }
            return new JsonNumber(s.substring(start, i));
        }

        static boolean digit(char c) { return c >= '0' && c <= '9'; }

        /** A JSON string literal, ASCII only; a lone surrogate becomes U+FFFD. */
        static void writeString(StringBuilder sb, String s) {
            sb.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"': sb.append("\\\""); continue;
                    case '\\': sb.append("\\\\"); continue;
                    case '\n': sb.append("\\n"); continue;
                    case '\r': sb.append("\\r"); continue;
                    case '\t': sb.append("\\t"); continue;
                    case '\b': sb.append("\\b"); continue;
                    case '\f': sb.append("\\f"); continue;
                    default: break;
                }
                if (c >= 0x20 && c < 0x7f) { sb.append(c); continue; }
                if (Character.isHighSurrogate(c)) {
                    if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                        u(sb, c);
                        u(sb, s.charAt(++i));
                    } else u(sb, '\uFFFD');
                    continue;
                }
                if (Character.isLowSurrogate(c)) { u(sb, '\uFFFD'); continue; }
                u(sb, c);
            }
            sb.append('"');
        }

        static void u(StringBuilder sb, char c) {
            sb.append(String.format("\\u%04x", (int) c));
        }

        @SuppressWarnings("unchecked")
        static void write(StringBuilder sb, Object v) {
            if (v == null) sb.append("null");
            else if (v instanceof Boolean) sb.append(((Boolean) v) ? "true" : "false");
            else if (v instanceof JsonNumber) sb.append(((JsonNumber) v).raw);
            else if (v instanceof String) writeString(sb, (String) v);
            else if (v instanceof Integer || v instanceof Long) sb.append(v.toString());
            else if (v instanceof RawJson) sb.append(((RawJson) v).text);
            else if (v instanceof List) {
                sb.append('[');
                boolean first = true;
                for (Object x : (List<Object>) v) {
                    if (!first) sb.append(',');
                    first = false;
                    write(sb, x);
                }
                sb.append(']');
            } else if (v instanceof Map) {
                sb.append('{');
                boolean first = true;
                for (Map.Entry<String, Object> e : ((Map<String, Object>) v).entrySet()) {
                    if (!first) sb.append(',');
                    first = false;
                    writeString(sb, e.getKey());
                    sb.append(':');
                    write(sb, e.getValue());
                }
                sb.append('}');
            } else throw new IllegalArgumentException("cannot write " + v.getClass().getName() + " as JSON");
        }

        static String text(Object v) {
            StringBuilder sb = new StringBuilder();
            write(sb, v);
            return sb.toString();
        }

        /** A string as JSON.stringify writes it (for the lease record and the manifest). */
        static void stringify(StringBuilder sb, String s) {
            sb.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"': sb.append("\\\""); continue;
                    case '\\': sb.append("\\\\"); continue;
                    case '\b': sb.append("\\b"); continue;
                    case '\f': sb.append("\\f"); continue;
                    case '\n': sb.append("\\n"); continue;
                    case '\r': sb.append("\\r"); continue;
                    case '\t': sb.append("\\t"); continue;
                    default: break;
                }
                boolean lone = (Character.isHighSurrogate(c) && !(i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))))
                        || (Character.isLowSurrogate(c) && !(i > 0 && Character.isHighSurrogate(s.charAt(i - 1))));
                if (c < 0x20 || lone) u(sb, c);
                else sb.append(c);
            }
            sb.append('"');
        }
    }

    // ---- stdin -----------------------------------------------------------------------------

    /** The lines of stdin, read as bytes and decoded as UTF-8. The main loop reads them on its
     * own thread, blocking (the release path is one read). While a loop recipe runs, poll() hands
     * the reading to a helper thread one line at a time and returns at once; the recipe asks
     * again about once a millisecond. The helper reads only when asked, so the reader has one
     * user at a time (the scheme of ../dotnet/Probe.cs). */
    static final class StdinLines {
        final InputStream in = new FileInputStream(FileDescriptor.in);
        byte[] buf = new byte[1 << 16];
        int start, end;
        boolean rawEof;
        final Object gate = new Object();
        final List<String> back = new ArrayList<>();
        Thread helper;
        boolean asked, delivered;
        String line;
        IOException error;
        boolean eof;

        /** One line from the stream, blocking; null at end of input. */
        String readRaw() throws IOException {
            int scanFrom = start;
            for (;;) {
                for (int k = scanFrom; k < end; k++) {
                    if (buf[k] == '\n') {
                        int len = k - start;
                        if (len > 0 && buf[k - 1] == '\r') len--;
                        String l = new String(buf, start, len, StandardCharsets.UTF_8);
                        start = k + 1;
                        return l;
                    }
                }
                if (rawEof) {
                    if (start == end) return null;
                    String l = new String(buf, start, end - start, StandardCharsets.UTF_8);
                    start = end;
                    return l;
                }
                scanFrom = end;
                if (start > 0) {
                    System.arraycopy(buf, start, buf, 0, end - start);
                    scanFrom -= start;
                    end -= start;
                    start = 0;
                }
                if (end == buf.length) buf = Arrays.copyOf(buf, buf.length * 2);
                int n = in.read(buf, end, buf.length - end);
                if (n < 0) rawEof = true; else end += n;
            }
        }

        void unread(String l) { back.add(l); }

        String next() throws IOException {
            if (!back.isEmpty()) return back.remove(0);
            if (eof) return null;
            synchronized (gate) {
                if (asked) {
                    while (!delivered) {
                        try { gate.wait(); } catch (InterruptedException e) { throw new IOException(e); }
                    }
                    return takeLocked();
                }
            }
            String l = readRaw();
            if (l == null) eof = true;
            return l;
        }

        /** [true, line] when a line (null: end of input) is there without waiting; else false. */
        boolean poll(String[] out) throws IOException {
            out[0] = null;
            if (!back.isEmpty()) { out[0] = back.remove(0); return true; }
            if (eof) return true;
            synchronized (gate) {
                if (delivered) { out[0] = takeLocked(); return true; }
                if (!asked) {
                    asked = true;
                    if (helper == null) {
                        helper = new Thread(this::help, "stdin");
                        helper.setDaemon(true);
                        helper.start();
                    }
                    gate.notifyAll();
                }
                return false;
            }
        }

        String takeLocked() throws IOException {
            asked = false;
            delivered = false;
            String l = line;
            IOException e = error;
            line = null;
            error = null;
            if (e != null) throw new IOException("reading stdin: " + e.getMessage(), e);
            if (l == null) eof = true;
            return l;
        }

        void help() {
            for (;;) {
                synchronized (gate) {
                    while (!asked || delivered) {
                        try { gate.wait(); } catch (InterruptedException e) { return; }
                    }
                }
                String l = null;
                IOException e = null;
                try { l = readRaw(); } catch (IOException x) { e = x; }
                synchronized (gate) {
                    line = l;
                    error = e;
                    delivered = true;
                    gate.notifyAll();
                }
            }
        }
    }

    // ---- clock, output, errors --------------------------------------------------------------

    // System.nanoTime() reads clock_gettime(CLOCK_MONOTONIC) on Linux (OpenJDK's
    // os::javaTimeNanos), one clock for every process: "monotonic". Elsewhere the wall clock.
    static final boolean MONOTONIC = System.getProperty("os.name", "").toLowerCase().startsWith("linux");

    static RawJson nowUs() {
        if (MONOTONIC) {
            long t = System.nanoTime();
            return new RawJson(Long.toString(t / 1000) + "." + String.format("%03d", t % 1000));
        }
        java.time.Instant n = java.time.Instant.now();
        long us = n.getEpochSecond() * 1000000L + n.getNano() / 1000;
        return new RawJson(Long.toString(us) + "." + (n.getNano() % 1000) / 100);
    }

    static double nowMs() { return System.nanoTime() / 1e6; }

    static OutputStream stdout;

    static synchronized void send(Obj msg) {
        try {
            byte[] b = (Json.text(msg) + "\n").getBytes(StandardCharsets.UTF_8);
            stdout.write(b);
            stdout.flush();
        } catch (IOException e) {
            diag("stdout: " + e);
            System.exit(4);
        }
    }

    static final PrintStream stderr = new PrintStream(new FileOutputStream(FileDescriptor.err), true);

    static void diag(String text) {
        try { stderr.println("probe: " + text); } catch (Exception e) { /* nothing to do */ }
    }

    static long pid() { return ProcessHandle.current().pid(); }

    // The OS's strerror text (FileSystemException.getReason(), or the "(...)" java.io appends to
    // a FileNotFoundException's message) of a fixed list, as its errno name; null otherwise.
    static final Map<String, String> STRERROR = new LinkedHashMap<>();
    static {
        STRERROR.put("File exists", "EEXIST");
        STRERROR.put("No such file or directory", "ENOENT");
        STRERROR.put("Directory not empty", "ENOTEMPTY");
        STRERROR.put("Is a directory", "EISDIR");
        STRERROR.put("Not a directory", "ENOTDIR");
        STRERROR.put("Operation not permitted", "EPERM");
        STRERROR.put("Permission denied", "EACCES");
        STRERROR.put("Device or resource busy", "EBUSY");
        STRERROR.put("Invalid cross-device link", "EXDEV");
    }

    static String errnoName(Throwable e) {
        String reason = null;
        if (e instanceof FileSystemException) reason = ((FileSystemException) e).getReason();
        else if (e instanceof FileNotFoundException && e.getMessage() != null) {
            String m = e.getMessage();
            int open = m.lastIndexOf(" (");
            if (m.endsWith(")") && open >= 0) reason = m.substring(open + 2, m.length() - 1);
        }
        return reason == null ? null : STRERROR.get(reason);
    }

    static Obj rawError(Throwable e, String typeOverride) {
        return new Obj()
                .set("type", typeOverride != null ? typeOverride : e instanceof CheckExists ? "CheckExists" : e.getClass().getName())
                .set("code", errnoName(e))
                .set("errno", null)
                .set("hresult", null)
                .set("message", e.toString());
    }

    /** What a File method returned instead of throwing: ReturnedFalse / ReturnedNull. */
    static Obj returnedError(String type, String message) {
        return new Obj().set("type", type).set("code", null).set("errno", null).set("hresult", null).set("message", message);
    }

    // ---- variants --------------------------------------------------------------------------

    /** A call: returns null, a Returned (a File method's boolean), or a Closeable handle the
     * probe keeps open for hold_ms. */
    interface Call { Object run() throws Exception; }

    /** What a call returned (a Boolean, null, or an object described by its class), with the
     * call's name for the message, and the handle to keep for hold_ms, if any. */
    static final class Returned {
        final String call;
        final Object value;
        final Closeable handle;
        Returned(String call, Object value, Closeable handle) { this.call = call; this.value = value; this.handle = handle; }
    }

    /** Thrown by the check-then-act anti-patterns when the check sees the target. */
    static final class CheckExists extends Exception {
        private static final long serialVersionUID = 1L;
        CheckExists(String m) { super(m); }
    }

    static final String[] VARIANT_IDS = {
        "java.Files.createFile",
        "java.Files.write.CREATE_NEW",
        "java.Files.write",
        "java.Files.writeString.CREATE_NEW",
        "java.Files.newOutputStream.CREATE_NEW",
        "java.Files.newOutputStream",
        "java.Files.newBufferedWriter.CREATE_NEW",
        "java.Files.newByteChannel.CREATE_NEW",
        "java.FileChannel.open.CREATE_NEW",
        "java.FileChannel.open.CREATE",
        "java.FileChannel.tryLock",
        "java.FileOutputStream",
        "java.FileOutputStream.append",
        "java.RandomAccessFile.rw",
        "java.File.createNewFile",
        "java.Files.createDirectory",
        "java.Files.createDirectories",
        "java.File.mkdir",
        "java.File.mkdirs",
        "java.Files.move",
        "java.Files.move.ATOMIC_MOVE",
        "java.Files.move.REPLACE_EXISTING",
        "java.File.renameTo",
        "java.Files.copy",
        "java.Files.copy.REPLACE_EXISTING",
        "java.Files.createLink",
        "java.Files.createSymbolicLink",
        "java.Files.exists+write",
        "java.Files.exists+createFile",
        "java.File.exists+FileOutputStream",
        "java.Files.notExists+move",
    };

    static Call prepareVariant(String variant, String target, String source, byte[] data, String[] reason) {
        final Path p = target == null ? null : Paths.get(target);
        final Path src = source == null ? null : Paths.get(source);
        final File f = target == null ? null : new File(target);
        if (p == null) { reason[0] = "no target"; return null; }
        boolean needsSource = variant.startsWith("java.Files.move") || variant.equals("java.File.renameTo")
                || variant.startsWith("java.Files.copy") || variant.equals("java.Files.createLink")
                || variant.equals("java.Files.createSymbolicLink") || variant.equals("java.Files.notExists+move");
        if (needsSource && src == null) { reason[0] = variant + " needs a source"; return null; }
        switch (variant) {
            case "java.Files.createFile":
                // createFile makes an empty file; the winner then writes its token into it
                return () -> { Files.createFile(p); Files.write(p, data); return null; };
            case "java.Files.write.CREATE_NEW":
                return () -> { Files.write(p, data, StandardOpenOption.CREATE_NEW); return null; };
            case "java.Files.write":
                return () -> { Files.write(p, data); return null; };
            case "java.Files.writeString.CREATE_NEW": {
                final String text = new String(data, StandardCharsets.UTF_8);
                return () -> { Files.writeString(p, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW); return null; };
            }
            case "java.Files.newOutputStream.CREATE_NEW":
                return () -> {
                    try (OutputStream o = Files.newOutputStream(p, StandardOpenOption.CREATE_NEW)) { o.write(data); }
                    return null;
                };
            case "java.Files.newOutputStream":
                return () -> {
                    try (OutputStream o = Files.newOutputStream(p)) { o.write(data); }
                    return null;
                };
            case "java.Files.newBufferedWriter.CREATE_NEW": {
                final String text = new String(data, StandardCharsets.UTF_8);
                return () -> {
                    try (Writer w = Files.newBufferedWriter(p, StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW)) { w.write(text); }
                    return null;
                };
            }
            case "java.Files.newByteChannel.CREATE_NEW":
                return () -> {
                    try (java.nio.channels.SeekableByteChannel c = Files.newByteChannel(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                        writeFully(c, data);
                    }
                    return null;
                };
            case "java.FileChannel.open.CREATE_NEW":
                return () -> {
                    try (FileChannel c = FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) { writeFully(c, data); }
                    return null;
                };
            case "java.FileChannel.open.CREATE":
                // no truncation: the token overwrites the start of an existing file
                return () -> {
                    try (FileChannel c = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) { writeFully(c, data); }
                    return null;
                };
            case "java.FileChannel.tryLock":
                // the lock-file idiom: open (create, no truncation), tryLock; null means another
                // process holds it. The lock and the channel are kept for hold_ms, then closed.
                return () -> {
                    FileChannel c = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                    FileLock lock;
                    try {
                        lock = c.tryLock();
                        if (lock == null) { c.close(); return new Returned("FileChannel.tryLock", null, null); }
                        c.truncate(0);
                        writeFully(c, data);
                        c.force(false);
                    } catch (Exception e) {
                        c.close();
                        throw e;
                    }
                    return new Returned("FileChannel.tryLock", lock, c); // closing the channel releases the lock
                };
            case "java.FileOutputStream":
                return () -> {
                    try (FileOutputStream o = new FileOutputStream(target)) { o.write(data); }
                    return null;
                };
            case "java.FileOutputStream.append":
                return () -> {
                    try (FileOutputStream o = new FileOutputStream(target, true)) { o.write(data); }
                    return null;
                };
            case "java.RandomAccessFile.rw":
                // "rw": open for reading and writing, creating the file if absent; no truncation
                return () -> {
                    try (RandomAccessFile r = new RandomAccessFile(target, "rw")) { r.write(data); }
                    return null;
                };
            case "java.File.createNewFile":
                return () -> {
                    boolean b = f.createNewFile();
                    if (b) Files.write(p, data);
                    return new Returned("File.createNewFile", b, null);
                };
            case "java.Files.createDirectory":
                return () -> { Files.createDirectory(p); return null; };
            case "java.Files.createDirectories":
                return () -> { Files.createDirectories(p); return null; };
            case "java.File.mkdir":
                return () -> new Returned("File.mkdir", f.mkdir(), null);
            case "java.File.mkdirs":
                return () -> new Returned("File.mkdirs", f.mkdirs(), null);
            case "java.Files.move":
                return () -> { Files.move(src, p); return null; };
            case "java.Files.move.ATOMIC_MOVE":
                return () -> { Files.move(src, p, StandardCopyOption.ATOMIC_MOVE); return null; };
            case "java.Files.move.REPLACE_EXISTING":
                return () -> { Files.move(src, p, StandardCopyOption.REPLACE_EXISTING); return null; };
            case "java.File.renameTo": {
                final File from = new File(source);
                return () -> new Returned("File.renameTo", from.renameTo(f), null);
            }
            case "java.Files.copy":
                return () -> { Files.copy(src, p); return null; };
            case "java.Files.copy.REPLACE_EXISTING":
                return () -> { Files.copy(src, p, StandardCopyOption.REPLACE_EXISTING); return null; };
            case "java.Files.createLink":
                return () -> { Files.createLink(p, src); return null; };
            case "java.Files.createSymbolicLink":
                return () -> { Files.createSymbolicLink(p, src); return null; };
            case "java.Files.exists+write":
                return () -> {
                    if (Files.exists(p)) throw new CheckExists("target exists (checked with Files.exists): " + target);
                    Files.write(p, data);
                    return null;
                };
            case "java.Files.exists+createFile":
                return () -> {
                    if (Files.exists(p)) throw new CheckExists("target exists (checked with Files.exists): " + target);
                    Files.createFile(p);
                    Files.write(p, data);
                    return null;
                };
            case "java.File.exists+FileOutputStream":
                return () -> {
                    if (f.exists()) throw new CheckExists("target exists (checked with File.exists): " + target);
                    try (FileOutputStream o = new FileOutputStream(f)) { o.write(data); }
                    return null;
                };
            case "java.Files.notExists+move":
                return () -> {
                    if (!Files.notExists(p)) throw new CheckExists("target not absent (checked with Files.notExists): " + target);
                    Files.move(src, p);
                    return null;
                };
            default:
                reason[0] = "unknown variant " + variant;
                return null;
        }
    }

    static void writeFully(java.nio.channels.WritableByteChannel c, byte[] data) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(data);
        while (b.hasRemaining()) c.write(b);
    }

    static final class Attempt {
        Object id;
        String idKey;
        Call call;
        String mark;
        byte[] data;
        int holdMs;
        RecipeRun recipe;
    }

    static String idKey(Object id) { return Json.text(id); }

    /** The call between two stamps, the mark and the hold: ok, t0_us, t1_us, error, returned. */
    static Obj makeCall(Attempt a) {
        boolean ok = true;
        Obj error = null;
        Obj returned = null;
        Closeable handle = null;
        RawJson t0 = nowUs();
        Object r = null;
        try {
            r = a.call.run();
        } catch (Throwable e) {
            ok = false;
            error = rawError(e, null);
        }
        RawJson t1 = nowUs();
        if (r instanceof Returned) {
            Returned rv = (Returned) r;
            if (rv.value == null) {
                returned = new Obj().set("type", "null").set("value", null);
                ok = false;
                error = returnedError("ReturnedNull", rv.call + " returned null");
            } else if (!(rv.value instanceof Boolean)) {
                returned = new Obj().set("type", "object").set("class", rv.value.getClass().getName());
            } else {
                returned = new Obj().set("type", "boolean").set("value", rv.value);
                if (!((Boolean) rv.value)) {
                    ok = false;
                    error = returnedError("ReturnedFalse", rv.call + " returned false");
                }
            }
            handle = rv.handle;
        } else if (r instanceof Closeable) handle = (Closeable) r;
        if (ok && a.mark != null) {
            try {
                Files.write(Paths.get(a.mark), a.data);
            } catch (Throwable e) {
                ok = false;
                error = rawError(e, "MarkError");
                diag("mark write failed: " + e);
            }
        }
        if (handle != null) {
            try {
                if (ok && a.holdMs > 0) Thread.sleep(a.holdMs);
                handle.close();
            } catch (Throwable e) {
                if (ok) {
                    ok = false;
                    error = rawError(e, "MarkError");
                }
                diag("closing the held handle failed: " + e);
            }
        }
        Obj o = new Obj().set("ok", ok).set("t0_us", t0).set("t1_us", t1).set("error", error);
        if (returned != null) o.set("returned", returned);
        return o;
    }

    // ---- threads (../PROTOCOL.md, "Threads") ----------------------------------------------------

    static final class ThreadRace {
        String idKey;
        Object id;
        Thread[] threads;
        Obj[] results;
        final CountDownLatch gate = new CountDownLatch(1);
        volatile long releasedAt;

        static ThreadRace prepare(Object id, Map<String, Object> msg, String[] reason) throws JsonError {
            Object v = msg.get("contenders");
            if (!(v instanceof List) || ((List<?>) v).isEmpty()) throw new JsonError("field 'contenders' is not a non-empty list");
            List<?> list = (List<?>) v;
            Attempt[] attempts = new Attempt[list.size()];
            long[] delays = new long[list.size()];
            for (int i = 0; i < list.size(); i++) {
                if (!(list.get(i) instanceof Map)) throw new JsonError("a contender is not an object");
                @SuppressWarnings("unchecked")
                Map<String, Object> c = (Map<String, Object>) list.get(i);
                String token = str(c, "token");
                if (token == null) token = "";
                byte[] data = token.getBytes(StandardCharsets.UTF_8);
                Call call;
                try {
                    call = prepareVariant(nz(str(c, "variant")), str(c, "target"), str(c, "source"), data, reason);
                } catch (Exception e) {
                    reason[0] = "lookup failed: " + e;
                    call = null;
                }
                if (call == null) return null;
                Attempt a = new Attempt();
                a.id = id;
                a.idKey = idKey(id);
                a.call = call;
                a.mark = str(c, "mark");
                a.data = data;
                a.holdMs = intField(c, "hold_ms");
                attempts[i] = a;
                delays[i] = intField(c, "delay_us") * 1000L;
            }
            ThreadRace t = new ThreadRace();
            t.idKey = idKey(id);
            t.id = id;
            t.threads = new Thread[list.size()];
            t.results = new Obj[list.size()];
            for (int i = 0; i < list.size(); i++) {
                final int slot = i;
                t.threads[i] = new Thread(() -> {
                    try { t.gate.await(); } catch (InterruptedException e) { return; }
                    long at = t.releasedAt + delays[slot];
                    while (delays[slot] > 0 && System.nanoTime() < at) { Thread.onSpinWait(); }
                    t.results[slot] = makeCall(attempts[slot]);
                }, "contender-" + i);
                t.threads[i].setDaemon(true);
                t.threads[i].start();
            }
            return t;
        }

        Obj go() {
            releasedAt = System.nanoTime();
            gate.countDown();
            for (Thread th : threads) {
                try { th.join(); } catch (InterruptedException e) { /* go on */ }
            }
            List<Object> all = new ArrayList<>(Arrays.asList((Object[]) results));
            return new Obj().set("type", "results").set("id", id).set("results", all);
        }
    }

    // ---- message fields -------------------------------------------------------------------------

    static String str(Map<String, Object> m, String k) throws JsonError {
        Object v = m.get(k);
        if (v == null) return null;
        if (!(v instanceof String)) throw new JsonError("field '" + k + "' is not a string");
        return (String) v;
    }

    static int intField(Map<String, Object> m, String k) throws JsonError {
        Object v = m.get(k);
        if (v == null) return 0;
        if (!(v instanceof JsonNumber)) throw new JsonError("field '" + k + "' is not a number");
        double d = ((JsonNumber) v).toDouble();
        if (d <= 0) return 0;
        if (d >= Integer.MAX_VALUE) return Integer.MAX_VALUE;
        return (int) d;
    }

    static String nz(String s) { return s == null ? "" : s; }

    // ---- main loop -----------------------------------------------------------------------------

    static StdinLines lines;
    /** The id (as JSON text) of the loop recipe that runs, or null. */
    static String running;

    public static void main(String[] args) {
        stdout = new FileOutputStream(FileDescriptor.out);
        // only protocol lines may reach stdout: System.out goes to stderr
        System.setOut(stderr);
        lines = new StdinLines();
        String jnu = System.getProperty("sun.jnu.encoding");
        if (jnu != null && !jnu.equalsIgnoreCase("UTF-8")) diag("sun.jnu.encoding is " + jnu + ": paths beyond ASCII may not round-trip");
        int rc;
        try {
            rc = loop();
        } catch (Throwable e) {
            diag("fatal: " + e);
            rc = 4;
        }
        System.exit(rc);
    }

    static int loop() throws IOException {
        List<Object> families = new ArrayList<>();
        families.add("java");
        Obj hello = new Obj()
                .set("protocol", PROTOCOL)
                .set("type", "hello")
                .set("probe", "java")
                .set("families", families)
                .set("runtime", "java")
                .set("version", System.getProperty("java.version"))
                .set("pid", pid())
                .set("clock", MONOTONIC ? "monotonic" : "wall")
                .set("variants", new ArrayList<Object>(Arrays.asList((Object[]) VARIANT_IDS)))
                .set("recipes", new ArrayList<Object>(Arrays.asList((Object[]) Recipes.IDS)))
                .set("capabilities", new ArrayList<Object>(Arrays.asList("threads")));
        send(hello);

        Attempt prepared = null;
        ThreadRace threads = null;
        for (;;) {
            String line = lines.next();
            if (line == null) break;
            if (line.trim().isEmpty()) continue;
            Map<String, Object> msg;
            String type;
            try {
                Object v = Json.parse(line);
                if (!(v instanceof Map)) throw new JsonError("not a JSON object");
                @SuppressWarnings("unchecked")
                Map<String, Object> m = (Map<String, Object>) v;
                msg = m;
                type = str(msg, "type");
            } catch (JsonError e) {
                diag("not a protocol line (" + e.getMessage() + "): " + line);
                return 3;
            }
            if ("quit".equals(type)) break;
            if ("stop".equals(type)) continue; // nothing runs: the result was sent already
            Object id = msg.get("id");
            if ("prepare".equals(type)) {
                prepared = null;
                threads = null;
                String variant, recipe, target, source, token, mark;
                int holdMs;
                try {
                    variant = str(msg, "variant");
                    recipe = str(msg, "recipe");
                    target = str(msg, "target");
                    source = str(msg, "source");
                    token = str(msg, "token");
                    mark = str(msg, "mark");
                    holdMs = intField(msg, "hold_ms");
                } catch (JsonError e) {
                    diag("bad prepare: " + e.getMessage() + ": " + line);
                    return 3;
                }
                if (token == null) token = "";
                byte[] data = token.getBytes(StandardCharsets.UTF_8);
                if (recipe != null) {
                    RecipeRequest req = new RecipeRequest();
                    req.idText = id instanceof JsonNumber ? ((JsonNumber) id).raw : id instanceof String ? (String) id : idKey(id);
                    req.target = target;
                    req.source = source;
                    req.token = token;
                    req.data = data;
                    Object ps = msg.get("params");
                    @SuppressWarnings("unchecked")
                    Map<String, Object> pm = ps instanceof Map ? (Map<String, Object>) ps : new LinkedHashMap<>();
                    req.params = pm;
                    Object role = msg.get("role");
                    req.role = role instanceof String ? (String) role : null;
                    RecipeRun run;
                    try {
                        run = Recipes.prepare(recipe, req);
                    } catch (Unsupported e) {
                        send(new Obj().set("type", "ready").set("id", id).set("supported", false).set("reason", e.getMessage()));
                        continue;
                    } catch (Exception e) {
                        send(new Obj().set("type", "ready").set("id", id).set("supported", false).set("reason", "prepare failed: " + e));
                        continue;
                    }
                    Attempt a = new Attempt();
                    a.id = id;
                    a.idKey = idKey(id);
                    a.recipe = run;
                    a.mark = mark;
                    a.data = data;
                    prepared = a;
                    send(new Obj().set("type", "ready").set("id", id).set("supported", true));
                    continue;
                }
                String[] reason = new String[1];
                Call call;
                try {
                    call = prepareVariant(nz(variant), target, source, data, reason);
                } catch (Exception e) {
                    reason[0] = "lookup failed: " + e;
                    call = null;
                }
                if (call == null) {
                    send(new Obj().set("type", "ready").set("id", id).set("supported", false).set("reason", reason[0]));
                    continue;
                }
                Attempt a = new Attempt();
                a.id = id;
                a.idKey = idKey(id);
                a.call = call;
                a.mark = mark;
                a.data = data;
                a.holdMs = holdMs;
                prepared = a;
                send(new Obj().set("type", "ready").set("id", id).set("supported", true));
                continue;
            }
            if ("prepare-threads".equals(type)) {
                prepared = null;
                threads = null;
                String[] reason = new String[1];
                try {
                    threads = ThreadRace.prepare(id, msg, reason);
                } catch (JsonError e) {
                    diag("bad prepare-threads: " + e.getMessage() + ": " + line);
                    return 3;
                }
                Obj ready = new Obj().set("type", "ready").set("id", id).set("supported", threads != null);
                if (threads == null) ready.set("reason", reason[0]);
                send(ready);
                continue;
            }
            if ("go".equals(type) && threads != null) {
                if (!threads.idKey.equals(idKey(id))) {
                    diag("go " + idKey(id) + " without prepare-threads");
                    return 3;
                }
                ThreadRace t = threads;
                threads = null;
                send(t.go());
                continue;
            }
            if ("go".equals(type)) {
                if (prepared == null || !prepared.idKey.equals(idKey(id))) {
                    diag("go " + idKey(id) + " without prepare");
                    return 3;
                }
                Attempt a = prepared;
                prepared = null;
                if (a.recipe != null) send(goRecipe(a));
                else {
                    Obj r = new Obj().set("type", "result").set("id", a.id);
                    r.putAll(makeCall(a));
                    send(r);
                }
                continue;
            }
            diag("unknown message type " + type + ": " + line);
            return 3;
        }
        return 0;
    }

    /** True when the harness asked the running loop recipe to end: `stop` for this attempt (or
     * without id), `quit` or end of input (both left for the main loop). Never waits. */
    static boolean stopRequested() {
        String[] out = new String[1];
        for (;;) {
            try {
                if (!lines.poll(out)) return false;
            } catch (IOException e) {
                diag("stdin: " + e);
                return true;
            }
            String line = out[0];
            if (line == null) return true;
            if (line.trim().isEmpty()) continue;
            Map<String, Object> msg = null;
            String type = null;
            try {
                Object v = Json.parse(line);
                if (v instanceof Map) {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> m = (Map<String, Object>) v;
                    msg = m;
                    type = str(msg, "type");
                }
            } catch (JsonError e) {
                msg = null;
            }
            if (msg == null) fatal("not a protocol line: " + line);
            if ("stop".equals(type)) {
                Object id = msg.get("id");
                if (id == null || idKey(id).equals(running)) return true;
                continue;
            }
            if ("quit".equals(type)) {
                lines.unread(line);
                return true;
            }
            fatal(type + " while attempt " + running + " runs (only stop or quit may come)");
        }
    }

    static void fatal(String why) {
        diag(why);
        System.exit(3);
    }

    static Obj goRecipe(Attempt a) {
        running = a.idKey;
        RawJson t0 = nowUs();
        RecipeOutcome o;
        try {
            o = a.recipe.run();
        } catch (Throwable e) {
            o = RecipeOutcome.failure("recipe", rawError(e, null));
        }
        RawJson t1 = nowUs();
        running = null;
        boolean ok = o.ok;
        Obj error = ok ? null : o.error;
        if (ok && a.mark != null) {
            try {
                Files.write(Paths.get(a.mark), a.data);
            } catch (Throwable e) {
                ok = false;
                error = rawError(e, "MarkError");
            }
        }
        Obj r = new Obj().set("type", "result").set("id", a.id).set("ok", ok).set("t0_us", t0).set("t1_us", t1)
                .set("error", error).set("step", o.step);
        if (o.counters != null) r.set("counters", o.counters);
        if (o.sample != null) r.set("errors_sample", o.sample);
        return r;
    }

    // ---- recipes -----------------------------------------------------------------------------

    static final class Unsupported extends Exception {
        private static final long serialVersionUID = 1L;
        Unsupported(String reason) { super(reason); }
    }

    static final class RecipeRequest {
        String idText;
        String target, source, token, role;
        byte[] data;
        Map<String, Object> params;
    }

    static final class RecipeOutcome {
        boolean ok;
        Obj error;
        String step;
        Obj counters;
        List<Object> sample;

        static RecipeOutcome success() { RecipeOutcome o = new RecipeOutcome(); o.ok = true; return o; }
        static RecipeOutcome failure(String step, Obj error) {
            RecipeOutcome o = new RecipeOutcome();
            o.step = step;
            o.error = error;
            return o;
        }
        static RecipeOutcome of(boolean ok, String step, Obj error, Obj counters, List<Object> sample) {
            RecipeOutcome o = new RecipeOutcome();
            o.ok = ok;
            o.step = step;
            o.error = error;
            o.counters = counters;
            o.sample = sample;
            return o;
        }
    }

    interface RecipeRun { RecipeOutcome run() throws Exception; }

    /** A step's failure carrying the step's name. */
    static final class StepFailed extends Exception {
        private static final long serialVersionUID = 1L;
        final String step;
        final Throwable inner;
        StepFailed(String step, Throwable inner) { super(inner); this.step = step; this.inner = inner; }
    }

    static final class Recipes {
        static final String[] IDS = {
            "publish.temp-rename-cross-volume",
            "done.marker-after-data",
            "done.marker-before-data",
            "done.size-stable",
            "done.mtime-stable",
            "consume.poll",
            "publish.direct",
            "publish.temp-rename",
            "claim.rename",
            "read.poll",
            "claim.rename-claim",
            "claim.list-then-open",
            "claim.exclusive-marker",
            "lease.mtime-delete-create",
            "lease.expires-delete-create",
            "lease.rename-aside",
            "lease.breaker",
            "lease.dir-mtime",
            "holder.no-check",
            "holder.renew-blind",
            "holder.check-owner",
            "ledger.key-first",
            "ledger.check-process-append",
            "ledger.check-process-create",
            "update.read-modify-write",
            "update.locked-read-modify-write",
            "update.temp-rename",
            "update.locked-temp-rename",
            "update.append-line",
            "os-lock.none",
            "os-lock.filechannel-lock",
            "os-lock.intrude",
            "watch.events-only",
            "watch.events-and-rescan",
            "watch.poll",
            "mutex.check-then-create",
            "mutex.exclusive-create",
        };

        static final int ERRORS_SAMPLE_MAX = 8;
        static final int CHUNK = 4096;
        static final int CLAIM_STUCK_ROUNDS = 100000;

        static RecipeRun prepare(String name, RecipeRequest req) throws Unsupported {
            switch (name) {
                case "done.marker-after-data": return doneWriter("marker-after-data", req);
                case "done.marker-before-data": return doneWriter("marker-before-data", req);
                case "done.size-stable": return doneWriter("size-stable", req);
                case "done.mtime-stable": return doneWriter("mtime-stable", req);
                case "consume.poll": return consumePoll(req);
                case "publish.direct": return publishDirect(req);
                case "publish.temp-rename":
                case "publish.temp-rename-cross-volume":
                    return publishTempRename(req);
                case "claim.rename": return claimRename(req);
                case "read.poll": return readPoll(req);
                case "claim.rename-claim": return claimWorker("rename", req);
                case "claim.list-then-open": return claimWorker("list-then-open", req);
                case "claim.exclusive-marker": return claimWorker("marker", req);
                case "lease.mtime-delete-create": return leaseTaker("mtime", req);
                case "lease.expires-delete-create": return leaseTaker("expires", req);
                case "lease.rename-aside": return leaseTaker("rename-aside", req);
                case "lease.breaker": return leaseTaker("breaker", req);
                case "lease.dir-mtime": return leaseTaker("dir-mtime", req);
                case "holder.no-check": return holderWorker("no-check", req);
                case "holder.renew-blind": return holderWorker("renew-blind", req);
                case "holder.check-owner": return holderWorker("check-owner", req);
                case "ledger.key-first": return ledgerWorker("key-first", req);
                case "ledger.check-process-append": return ledgerWorker("check-process-append", req);
                case "ledger.check-process-create": return ledgerWorker("check-process-create", req);
                case "update.read-modify-write": return updateWorker("read-modify-write", req);
                case "update.locked-read-modify-write": return updateWorker("locked-read-modify-write", req);
                case "update.temp-rename": return updateWorker("temp-rename", req);
                case "update.locked-temp-rename": return updateWorker("locked-temp-rename", req);
                case "update.append-line": return updateWorker("append-line", req);
                case "os-lock.none":
                case "os-lock.filechannel-lock":
                    return osLockHolder(name, req);
                case "os-lock.intrude": return osLockIntruder(req);
                case "watch.events-only": return watchConsumer("events", req);
                case "watch.events-and-rescan": return watchConsumer("events-and-rescan", req);
                case "watch.poll": return watchConsumer("poll", req);
                case "mutex.check-then-create":
                case "mutex.exclusive-create":
                    return mutexWorker(name, req);
                default: throw new Unsupported("unknown recipe " + name);
            }
        }

        // ---- parameters ----

        static Object param(RecipeRequest req, String name) { return req.params.get(name); }

        static String stringParam(RecipeRequest req, String name, String fallback) throws Unsupported {
            Object v = param(req, name);
            if (v == null) return fallback;
            if (!(v instanceof String) || ((String) v).isEmpty()) throw new Unsupported("params." + name + " must be a non-empty string");
            return (String) v;
        }

        static boolean boolParam(RecipeRequest req, String name) throws Unsupported {
            Object v = param(req, name);
            if (v == null) return false;
            if (!(v instanceof Boolean)) throw new Unsupported("params." + name + " must be true or false");
            return (Boolean) v;
        }

        static long intParam(RecipeRequest req, String name, long fallback, long min, long max, String why) throws Unsupported {
            Object v = param(req, name);
            if (v == null) return fallback;
            if (!(v instanceof JsonNumber)) throw new Unsupported(why);
            double d;
            try { d = ((JsonNumber) v).toDouble(); } catch (NumberFormatException e) { throw new Unsupported(why); }
            if (Math.floor(d) != d || d < min || d > max) throw new Unsupported(why);
            return (long) d;
        }

        // ---- helpers ----

        static byte[] utf8(String s) { return s.getBytes(StandardCharsets.UTF_8); }

        static Obj raw(Throwable e) { return rawError(e, null); }

        static boolean isAbsent(Throwable e) { return e instanceof NoSuchFileException || e instanceof FileNotFoundException; }

        static boolean isExists(Throwable e) { return e instanceof FileAlreadyExistsException; }

        static byte[] publishContent(RecipeRequest req) throws Unsupported {
            if (param(req, "size") == null) return req.data;
            long size = intParam(req, "size", 0, 1, 16 * 1024 * 1024, "params.size must be an integer from 1 to 16777216");
            byte[] head = utf8("conformance-publish " + req.token + " " + size + "\n");
            byte[] line = utf8(req.token + "\n");
            byte[] tail = utf8("end " + req.token + "\n");
            byte[] all = new byte[(int) (head.length + size + tail.length)];
            System.arraycopy(head, 0, all, 0, head.length);
            for (long off = 0; off < size; off += line.length)
                System.arraycopy(line, 0, all, (int) (head.length + off), (int) Math.min(line.length, size - off));
            System.arraycopy(tail, 0, all, (int) (head.length + size), tail.length);
            return all;
        }

        /** Writes `data` in writes of at most CHUNK bytes (each one write(2) through the
         * channel-backed stream of Files.newOutputStream), `pauseMs` apart. */
        static void writeChunks(OutputStream o, byte[] data, int pauseMs) throws IOException, InterruptedException {
            for (int off = 0; off < data.length; off += CHUNK) {
                if (off > 0 && pauseMs > 0) Thread.sleep(pauseMs);
                o.write(data, off, Math.min(CHUNK, data.length - off));
            }
        }

        /** 'w': Files.newOutputStream(p) (CREATE, TRUNCATE_EXISTING, WRITE). */
        static OutputStream openW(String p) throws IOException { return Files.newOutputStream(Paths.get(p)); }

        /** 'wx': Files.newOutputStream(p, CREATE_NEW) (O_CREAT|O_EXCL). */
        static OutputStream openWx(String p) throws IOException {
            return Files.newOutputStream(Paths.get(p), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        }

        static void writeNew(String p, byte[] data) throws IOException {
            try (OutputStream o = openWx(p)) { o.write(data); }
        }

        /** renameSync: Files.move(from, to, ATOMIC_MOVE) — rename(2), which replaces `to`. */
        static void renameOnto(String from, String to) throws IOException {
            Files.move(Paths.get(from), Paths.get(to), StandardCopyOption.ATOMIC_MOVE);
        }

        static boolean oneOf(byte[] b, List<byte[]> cands) {
            for (byte[] c : cands) if (Arrays.equals(b, c)) return true;
            return false;
        }

        static void sleepMs(long ms) {
            try { Thread.sleep(ms); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
        }

        // ---- publish ----

        static RecipeRun publishDirect(RecipeRequest req) throws Unsupported {
            byte[] data = publishContent(req);
            String target = req.target;
            return () -> {
                OutputStream o;
                try { o = openW(target); } catch (Exception e) { return RecipeOutcome.failure("open", raw(e)); }
                try { writeChunks(o, data, 0); } catch (Exception e) {
                    try { o.close(); } catch (Exception x) { /* best effort */ }
                    return RecipeOutcome.failure("write", raw(e));
                }
                try { o.close(); } catch (Exception e) { return RecipeOutcome.failure("close", raw(e)); }
                return RecipeOutcome.success();
            };
        }

        static RecipeRun publishTempRename(RecipeRequest req) throws Unsupported {
            Path t = Paths.get(req.target);
            Path dir = t.getParent();
            String name = "." + t.getFileName() + "." + pid() + "." + req.idText + ".tmp";
            String fallback = dir == null ? name : dir.resolve(name).toString();
            String temp = stringParam(req, "temp", fallback);
            boolean fsync = boolParam(req, "fsync");
            byte[] data = publishContent(req);
            String target = req.target;
            return () -> {
                String step = "open";
                boolean created = false;
                try {
                    FileChannel c = FileChannel.open(Paths.get(temp), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                    created = true;
                    boolean open = true;
                    try {
                        step = "write";
                        for (int off = 0; off < data.length; off += CHUNK) {
                            ByteBuffer b = ByteBuffer.wrap(data, off, Math.min(CHUNK, data.length - off));
                            while (b.hasRemaining()) c.write(b);
                        }
                        if (fsync) {
                            step = "fsync";
                            c.force(true);
                        }
                        step = "close";
                        open = false;
                        c.close();
                    } finally {
                        if (open) { try { c.close(); } catch (Exception x) { /* best effort */ } }
                    }
                    step = "rename";
                    renameOnto(temp, target);
                    return RecipeOutcome.success();
                } catch (Exception e) {
                    if (created) { try { Files.deleteIfExists(Paths.get(temp)); } catch (Exception x) { /* best effort */ } }
                    return RecipeOutcome.failure(step, raw(e));
                }
            };
        }

        static RecipeRun claimRename(RecipeRequest req) throws Unsupported {
            if (req.source == null || req.source.isEmpty()) throw new Unsupported("claim.rename needs a source");
            String source = req.source, target = req.target;
            return () -> {
                try {
                    renameOnto(source, target);
                    return RecipeOutcome.success();
                } catch (Exception e) {
                    return RecipeOutcome.failure("rename", raw(e));
                }
            };
        }

        // ---- read.poll ----

        static RecipeRun readPoll(RecipeRequest req) throws Unsupported {
            Object ex = param(req, "expect");
            if (!(ex instanceof List)) throw new Unsupported("read.poll needs params.expect: the list of complete contents (strings)");
            List<byte[]> whole = new ArrayList<>();
            for (Object x : (List<?>) ex) {
                if (!(x instanceof String)) throw new Unsupported("read.poll needs params.expect: the list of complete contents (strings)");
                whole.add(utf8((String) x));
            }
            Path target = Paths.get(req.target);
            return () -> {
                long reads = 0, complete = 0, empty = 0, torn = 0, absent = 0, errors = 0, changes = 0;
                List<Object> sample = new ArrayList<>();
                boolean first = true;
                char lastClass = ' ';
                byte[] lastBytes = null;
                String lastError = null;
                double nextPoll = 0;
                boolean stopping = false;
                for (;;) {
                    char cls;
                    byte[] bytes;
                    String err = null;
                    reads++;
                    try {
                        bytes = Files.readAllBytes(target);
                        if (bytes.length == 0) { empty++; cls = 'E'; }
                        else if (oneOf(bytes, whole)) { complete++; cls = 'C'; }
                        else { torn++; cls = 'T'; }
                    } catch (Exception e) {
                        bytes = null;
                        if (isAbsent(e)) { absent++; cls = 'A'; }
                        else {
                            errors++;
                            cls = 'X';
                            err = e.getClass().getName() + " " + errnoName(e);
                            if (sample.size() < ERRORS_SAMPLE_MAX) sample.add(raw(e));
                        }
                    }
                    if (cls == 'E') bytes = null;
                    if (!first && (cls != lastClass || !java.util.Objects.equals(err, lastError) || !Arrays.equals(bytes, lastBytes))) changes++;
                    first = false;
                    lastClass = cls;
                    lastBytes = bytes;
                    lastError = err;
                    if (stopping) break;
                    double now = nowMs();
                    if (now >= nextPoll) {
                        stopping = stopRequested();
                        nextPoll = now + 1;
                    }
                }
                Obj c = new Obj().set("reads", reads).set("complete", complete).set("empty", empty).set("torn", torn)
                        .set("absent", absent).set("errors", errors).set("changes", changes);
                return RecipeOutcome.of(true, null, null, c, sample);
            };
        }

        // ---- claim workers ----

        /** One worker: list params.incoming (Files.newDirectoryStream, `.claim` markers skipped)
         * until it is empty; per item claim it — nothing / Files.move into params.processing /
         * create `<item>.claim` CREATE_NEW — then read it (Files.readAllBytes), append its content
         * and "\n" to params.output (one write, APPEND), delete it (Files.delete: a missing item
         * counts delete_failed, as unlinkSync's ENOENT does). */
        static RecipeRun claimWorker(String method, RecipeRequest req) throws Unsupported {
            String incoming = stringParam(req, "incoming", null);
            String output = stringParam(req, "output", null);
            String processing = method.equals("rename") ? stringParam(req, "processing", null) : null;
            if (incoming == null || output == null || (method.equals("rename") && processing == null))
                throw new Unsupported("claim workers need params.incoming, params.output (and params.processing to rename into)");
            return () -> {
                long rounds = 0, listed = 0, claimed = 0, claimFailed = 0, deleteFailed = 0, processed = 0;
                List<Object> sample = new ArrayList<>();
                String failStep = null;
                Throwable failE = null;
                OutputStream out = null;
                try {
                    out = Files.newOutputStream(Paths.get(output), StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
                } catch (Exception e) {
                    failStep = "output";
                    failE = e;
                }
                if (out != null) {
                    try {
                        int idle = 0;
                        Path in = Paths.get(incoming);
                        outer:
                        for (;;) {
                            rounds++;
                            List<String> names = new ArrayList<>();
                            try (DirectoryStream<Path> ds = Files.newDirectoryStream(in)) {
                                for (Path x : ds) {
                                    String n = x.getFileName().toString();
                                    if (!n.endsWith(".claim")) names.add(n);
                                }
                            } catch (Exception e) {
                                failStep = "list";
                                failE = e;
                                break;
                            }
                            if (names.isEmpty()) break;
                            boolean progress = false;
                            for (String name : names) {
                                listed++;
                                Path item = in.resolve(name);
                                Path at = item;
                                byte[] data;
                                try {
                                    if (method.equals("rename")) {
                                        at = Paths.get(processing).resolve(name);
                                        Files.move(item, at);
                                    } else if (method.equals("marker")) {
                                        openWx(item.toString() + ".claim").close();
                                    }
                                    data = Files.readAllBytes(at);
                                    claimed++;
                                } catch (Exception e) {
                                    claimFailed++;
                                    if (sample.size() < ERRORS_SAMPLE_MAX) sample.add(raw(e));
                                    continue;
                                }
                                byte[] line = Arrays.copyOf(data, data.length + 1);
                                line[data.length] = '\n';
                                out.write(line);
                                processed++;
                                progress = true;
                                try { Files.delete(at); } catch (Exception e) {
                                    deleteFailed++;
                                    if (sample.size() < ERRORS_SAMPLE_MAX) sample.add(raw(e));
                                }
                            }
                            idle = progress ? 0 : idle + 1;
                            if (idle >= CLAIM_STUCK_ROUNDS) { failStep = "stuck"; break outer; }
                        }
                    } finally {
                        try { out.close(); } catch (Exception e) { /* nothing to do */ }
                    }
                }
                Obj c = new Obj().set("rounds", rounds).set("listed", listed).set("claimed", claimed)
                        .set("claim_failed", claimFailed).set("delete_failed", deleteFailed).set("processed", processed);
                return RecipeOutcome.of(failStep == null, failStep, failE == null ? null : raw(failE), c, sample);
            };
        }

        // ---- lease ----

        /** The lease record at `p`: null when absent; a Map, or an empty Optional-like marker
         * (UNREADABLE) when it does not parse as an object. */
        static final Object UNREADABLE = new Object();

        static Object readLease(Path p) throws IOException {
            String text;
            try { text = Files.readString(p, StandardCharsets.UTF_8); }
            catch (NoSuchFileException e) { return null; }
            catch (java.nio.charset.MalformedInputException e) { return UNREADABLE; }
            try {
                Object v = Json.parse(text);
                return v instanceof Map ? v : UNREADABLE;
            } catch (JsonError e) {
                return UNREADABLE;
            }
        }

        static String ownerOf(Object record) {
            if (!(record instanceof Map)) return null;
            Object v = ((Map<?, ?>) record).get("ownerId");
            return v instanceof String ? (String) v : null;
        }

        static boolean expired(Object record) {
            Object v = ((Map<?, ?>) record).get("expiresAt");
            if (!(v instanceof JsonNumber)) return false;
            try { return ((JsonNumber) v).toDouble() <= System.currentTimeMillis(); }
            catch (NumberFormatException e) { return false; }
        }

        static byte[] leaseRecord(RecipeRequest req, long ttlMs) {
            long now = System.currentTimeMillis();
            StringBuilder sb = new StringBuilder("{\"ownerId\":");
            Json.stringify(sb, req.token);
            sb.append(",\"host\":");
            String host = System.getenv("HOSTNAME");
            Json.stringify(sb, host == null ? "" : host);
            sb.append(",\"pid\":").append(pid());
            sb.append(",\"acquiredAt\":").append(now);
            sb.append(",\"expiresAt\":").append(now + ttlMs);
            sb.append(",\"heartbeatAt\":").append(now).append('}');
            return utf8(sb.toString());
        }

        static final class LeaseState {
            long acquired, fresh, unreadable, restoreFailed;
            String step = "check";
            /** A slow taker's wait before each step after its check, µs (params.stall_us). */
            long stallUs;
            /** dir-mtime's first mkdir is its check: no wait before it. */
            boolean first;
            /** Enters step `next`, after the slow taker's wait (as one descheduled between its steps). */
            void to(String next) throws IOException {
                if (stallUs > 0) {
                    try { Thread.sleep(stallUs / 1000, (int) (stallUs % 1000) * 1000); }
                    catch (InterruptedException e) { Thread.currentThread().interrupt(); throw new IOException("interrupted", e); }
                }
                step = next;
            }
            Obj counters() {
                return new Obj().set("acquired", acquired).set("fresh", fresh).set("unreadable", unreadable).set("restore_failed", restoreFailed);
            }
        }

        /** The lease takers of session.mjs (leaseTaker) with java.nio.file calls:
         * Files.getLastModifiedTime, Files.readString, Files.delete(IfExists), CREATE_NEW,
         * Files.move (no options) to rename aside, Files.createLink to link back,
         * Files.createDirectory (refuses an existing directory) for dir-mtime. */
        static RecipeRun leaseTaker(String method, RecipeRequest req) throws Unsupported {
            String leaseS = stringParam(req, "lease", null);
            String heldS = stringParam(req, "held", null);
            if (leaseS == null || heldS == null) throw new Unsupported("a lease taker needs params.lease and params.held");
            if (param(req, "stale_ms") == null || param(req, "ttl_ms") == null)
                throw new Unsupported("a lease taker needs params.stale_ms and params.ttl_ms");
            long staleMs = intParam(req, "stale_ms", 0, 1, 86400000, "params.stale_ms must be an integer from 1 to 86400000");
            long ttlMs = intParam(req, "ttl_ms", 0, 1, 86400000, "params.ttl_ms must be an integer from 1 to 86400000");
            long stallUs = intParam(req, "stall_us", 0, 0, 1000000, "params.stall_us must be an integer from 0 to 1000000");
            Path lease = Paths.get(leaseS);
            return () -> {
                LeaseState s = new LeaseState();
                s.stallUs = stallUs;
                s.first = method.equals("dir-mtime");
                try {
                    return leaseTake(method, req, lease, heldS, staleMs, ttlMs, s);
                } catch (StepFailed e) {
                    return RecipeOutcome.of(false, e.step, raw(e.inner), s.counters(), null);
                } catch (Exception e) {
                    return RecipeOutcome.of(false, s.step, raw(e), s.counters(), null);
                }
            };
        }

        static void markHeld(LeaseState s, String held, RecipeRequest req) throws IOException {
            if (s.acquired == 1) return;
            s.step = "held";
            writeNew(held, req.data);
            s.acquired = 1;
        }

        static RecipeOutcome leaseDone(LeaseState s, boolean took, String held, RecipeRequest req) throws IOException {
            if (took) markHeld(s, held, req);
            return RecipeOutcome.of(true, null, null, s.counters(), null);
        }

        static boolean leaseCreate(String method, Path lease, RecipeRequest req, long ttlMs, LeaseState s) throws IOException {
            if (s.first) s.step = "create";
            else s.to("create");
            s.first = false;
            byte[] record = leaseRecord(req, ttlMs);
            try {
                if (method.equals("dir-mtime")) {
                    Files.createDirectory(lease);
                    s.to("record");
                    Files.write(lease.resolve("owner"), record);
                } else {
                    writeNew(lease.toString(), record);
                }
                return true;
            } catch (IOException e) {
                if (s.step.equals("create") && isExists(e)) return false;
                throw e;
            }
        }

        static RecipeOutcome leaseTake(String method, RecipeRequest req, Path lease, String held, long staleMs, long ttlMs, LeaseState s) throws Exception {
            if (method.equals("mtime") || method.equals("dir-mtime")) {
                if (method.equals("dir-mtime")) {
                    if (leaseCreate(method, lease, req, ttlMs, s)) return leaseDone(s, true, held, req);
                    s.step = "check";
                }
                Long mtime = null;
                try { mtime = Files.getLastModifiedTime(lease).toMillis(); } catch (NoSuchFileException e) { /* absent */ }
                if (mtime != null && System.currentTimeMillis() - mtime < staleMs) { s.fresh = 1; return leaseDone(s, false, held, req); }
                s.to("delete");
                if (method.equals("dir-mtime")) {
                    Files.deleteIfExists(lease.resolve("owner"));
                    try { Files.delete(lease); }
                    catch (NoSuchFileException e) { /* gone: fine */ }
                    catch (java.nio.file.DirectoryNotEmptyException e) { return leaseDone(s, false, held, req); }
                } else if (mtime != null) {
                    Files.deleteIfExists(lease);
                }
                return leaseDone(s, leaseCreate(method, lease, req, ttlMs, s), held, req);
            }
            Object seen = readLease(lease);
            if (seen == UNREADABLE) { s.unreadable = 1; return leaseDone(s, false, held, req); }
            if (seen != null && !expired(seen)) { s.fresh = 1; return leaseDone(s, false, held, req); }
            if (seen == null) return leaseDone(s, leaseCreate(method, lease, req, ttlMs, s), held, req);
            if (method.equals("expires")) {
                s.to("delete");
                Files.deleteIfExists(lease);
                return leaseDone(s, leaseCreate(method, lease, req, ttlMs, s), held, req);
            }
            if (method.equals("rename-aside")) {
                Path aside = Paths.get(lease.toString() + "." + req.token + ".stale");
                s.to("rename");
                try { Files.move(lease, aside); } catch (NoSuchFileException e) { return leaseDone(s, false, held, req); }
                s.to("recheck");
                Object moved = readLease(aside);
                if (moved instanceof Map && java.util.Objects.equals(ownerOf(moved), ownerOf(seen))) {
                    s.to("delete");
                    Files.deleteIfExists(aside);
                    return leaseDone(s, leaseCreate(method, lease, req, ttlMs, s), held, req);
                }
                s.to("restore");
                try { Files.createLink(lease, aside); } catch (FileAlreadyExistsException e) { s.restoreFailed = 1; }
                Files.deleteIfExists(aside);
                return leaseDone(s, false, held, req);
            }
            // breaker
            Path breaker = Paths.get(lease.toString() + ".takeover");
            s.to("breaker");
            try { openWx(breaker.toString()).close(); } catch (FileAlreadyExistsException e) { return leaseDone(s, false, held, req); }
            boolean took = false;
            Exception failed = null;
            String failedStep = null;
            try {
                s.to("recheck");
                Object again = readLease(lease);
                if (again == null || (again instanceof Map && java.util.Objects.equals(ownerOf(again), ownerOf(seen)))) {
                    s.to("delete");
                    if (again != null) Files.deleteIfExists(lease);
                    took = leaseCreate(method, lease, req, ttlMs, s);
                    if (took) markHeld(s, held, req);
                }
            } catch (Exception e) {
                failed = e;
                failedStep = s.step;
            }
            try { Files.deleteIfExists(breaker); } catch (Exception e) {
                if (failed == null) { failed = e; failedStep = "unbreak"; }
            }
            if (failed != null) throw new StepFailed(failedStep, failed);
            return leaseDone(s, took, held, req);
        }

        // ---- holder ----

        static RecipeRun holderWorker(String method, RecipeRequest req) throws Unsupported {
            String leaseS = stringParam(req, "lease", null);
            String effect = stringParam(req, "effect", null);
            if (leaseS == null || effect == null) throw new Unsupported("a lease holder needs params.lease and params.effect");
            long ttlMs = intParam(req, "ttl_ms", 0, 1, 86400000, "params.ttl_ms must be an integer from 1 to 86400000");
            long workMs = intParam(req, "work_ms", 0, 1, 86400000, "params.work_ms must be an integer from 1 to 86400000");
            if (ttlMs == 0 || workMs == 0) throw new Unsupported("a lease holder needs params.ttl_ms and params.work_ms");
            Path lease = Paths.get(leaseS);
            return () -> {
                long[] c = new long[4]; // effect, renewed, released, lost
                String[] step = { "work" };
                java.util.function.Supplier<Obj> counters = () -> new Obj().set("effect", c[0]).set("renewed", c[1]).set("released", c[2]).set("lost", c[3]);
                try {
                    sleepMs(workMs);
                    if (method.equals("check-owner") && !holderMine(lease, req, step, c)) return RecipeOutcome.of(true, null, null, counters.get(), null);
                    if (!method.equals("no-check")) {
                        step[0] = "renew";
                        Files.write(lease, leaseRecord(req, ttlMs));
                        c[1] = 1;
                    }
                    if (method.equals("check-owner") && !holderMine(lease, req, step, c)) return RecipeOutcome.of(true, null, null, counters.get(), null);
                    step[0] = "effect";
                    writeNew(effect, req.data);
                    c[0] = 1;
                    if (method.equals("renew-blind")) return RecipeOutcome.of(true, null, null, counters.get(), null);
                    if (method.equals("check-owner") && !holderMine(lease, req, step, c)) return RecipeOutcome.of(true, null, null, counters.get(), null);
                    step[0] = "release";
                    Files.deleteIfExists(lease);
                    c[2] = 1;
                    return RecipeOutcome.of(true, null, null, counters.get(), null);
                } catch (Exception e) {
                    return RecipeOutcome.of(false, step[0], raw(e), counters.get(), null);
                }
            };
        }

        static boolean holderMine(Path lease, RecipeRequest req, String[] step, long[] c) throws IOException {
            step[0] = "check";
            Object seen = readLease(lease);
            boolean own = seen instanceof Map && req.token.equals(ownerOf(seen));
            if (!own) c[3] = 1;
            return own;
        }

        // ---- ledger ----

        static RecipeRun ledgerWorker(String method, RecipeRequest req) throws Unsupported {
            String key = stringParam(req, "key", null);
            String effect = stringParam(req, "effect", null);
            String ledger = stringParam(req, "ledger", null);
            String list = stringParam(req, "list", null);
            if (key == null || effect == null || ledger == null || list == null)
                throw new Unsupported("a ledger worker needs params.key, params.effect, params.ledger and params.list");
            Path keyFile = Paths.get(ledger).resolve(key);
            return () -> {
                long[] c = new long[3]; // processed, skipped, record_refused
                String step = "check";
                java.util.function.Supplier<Obj> counters = () -> new Obj().set("processed", c[0]).set("skipped", c[1]).set("record_refused", c[2]);
                try {
                    if (method.equals("key-first")) {
                        step = "record";
                        try { writeNew(keyFile.toString(), req.data); }
                        catch (FileAlreadyExistsException e) { c[1] = 1; return RecipeOutcome.of(true, null, null, counters.get(), null); }
                        step = "effect";
                        writeNew(effect, req.data);
                        c[0] = 1;
                    } else if (method.equals("check-process-append")) {
                        String text = "";
                        try { text = Files.readString(Paths.get(list), StandardCharsets.UTF_8); } catch (NoSuchFileException e) { /* empty */ }
                        if (Arrays.asList(text.split("\n", -1)).contains(key)) { c[1] = 1; return RecipeOutcome.of(true, null, null, counters.get(), null); }
                        step = "effect";
                        writeNew(effect, req.data);
                        c[0] = 1;
                        step = "record";
                        Files.writeString(Paths.get(list), key + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
                    } else {
                        if (Files.exists(keyFile)) { c[1] = 1; return RecipeOutcome.of(true, null, null, counters.get(), null); }
                        step = "effect";
                        writeNew(effect, req.data);
                        c[0] = 1;
                        step = "record";
                        try { writeNew(keyFile.toString(), req.data); } catch (FileAlreadyExistsException e) { c[2] = 1; }
                    }
                    return RecipeOutcome.of(true, null, null, counters.get(), null);
                } catch (Exception e) {
                    return RecipeOutcome.of(false, step, raw(e), counters.get(), null);
                }
            };
        }

        // ---- update ----

        static final int UPDATE_LOCK_WAIT_MS = 10000;
        static final int UPDATE_READ_TRIES = 1000;

        /** The update workers: Files.readString, Files.writeString (truncate, write), CREATE_NEW
         * for the lock (retried: Thread.onSpinWait, then Thread.yield) and the temp file,
         * Files.move ATOMIC_MOVE for the rename, Files.delete to unlock, Files.writeString with
         * APPEND (O_APPEND) for a line. */
        static RecipeRun updateWorker(String method, RecipeRequest req) throws Unsupported {
            String counter = stringParam(req, "counter", null);
            String lockPath = stringParam(req, "lock", null);
            String temp = stringParam(req, "temp", null);
            long increments = intParam(req, "increments", -1, 0, 1000000, "an update worker needs params.increments, a whole number from 0 to 1000000");
            if (counter == null || lockPath == null || temp == null || increments < 0)
                throw new Unsupported("an update worker needs params.counter, params.lock, params.temp and params.increments");
            boolean locked = method.startsWith("locked-");
            boolean viaTemp = method.endsWith("temp-rename");
            Path cp = Paths.get(counter);
            return () -> {
                long made = 0, unreadable = 0, lockWaits = 0;
                String step = "read";
                try {
                    for (long i = 0; i < increments; i++) {
                        if (method.equals("append-line")) {
                            step = "append";
                            Files.writeString(cp, "1\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
                            made++;
                            continue;
                        }
                        if (locked) {
                            step = "lock";
                            double until = nowMs() + UPDATE_LOCK_WAIT_MS;
                            int spins = 0;
                            for (;;) {
                                try { openWx(lockPath).close(); break; } catch (FileAlreadyExistsException e) { /* taken */ }
                                lockWaits++;
                                if (nowMs() > until) throw new IOException("the lock stayed taken for " + UPDATE_LOCK_WAIT_MS + " ms");
                                if (++spins < 20) Thread.onSpinWait(); else Thread.yield();
                            }
                        }
                        long value = -1;
                        for (int tries = 0; ; tries++) {
                            step = "read";
                            String text = Files.readString(cp, StandardCharsets.UTF_8).trim();
                            boolean digits = !text.isEmpty() && text.length() < 19;
                            for (int k = 0; k < text.length(); k++) digits &= text.charAt(k) >= '0' && text.charAt(k) <= '9';
                            if (digits) { value = Long.parseLong(text); break; }
                            unreadable++;
                            if (tries >= UPDATE_READ_TRIES) throw new IOException("the counter held no whole number " + UPDATE_READ_TRIES + " times in a row");
                        }
                        String next = (value + 1) + "\n";
                        if (viaTemp) {
                            step = "write";
                            writeNew(temp, utf8(next));
                            step = "rename";
                            renameOnto(temp, counter);
                        } else {
                            step = "write";
                            Files.writeString(cp, next, StandardCharsets.UTF_8);
                        }
                        made++;
                        if (locked) {
                            step = "unlock";
                            Files.delete(Paths.get(lockPath));
                        }
                    }
                    return RecipeOutcome.of(true, null, null, new Obj().set("increments", made).set("unreadable_reads", unreadable).set("lock_waits", lockWaits), null);
                } catch (Exception e) {
                    return RecipeOutcome.of(false, step, raw(e), new Obj().set("increments", made).set("unreadable_reads", unreadable).set("lock_waits", lockWaits), null);
                }
            };
        }

        // ---- os-lock ----

        static final String[] OS_LOCK_IDS = { "os-lock.none", "os-lock.filechannel-lock" };
        static final String[] OS_LOCK_INTRUSIONS = { "write", "append", "rename", "delete", "mmap", "relock" };

        /** Opens `p` and takes the lock of recipe `id`; returns its release. os-lock.none:
         * FileChannel.open(READ, WRITE), no lock (the control); release: close.
         * os-lock.filechannel-lock: the same open, then tryLock() (exclusive, the whole file:
         * fcntl F_SETLK on Linux); null (another process holds it) is refused with an
         * IOException; release: FileLock.release, then close. */
        static Closeable takeOsLock(String id, String p) throws IOException {
            FileChannel c = FileChannel.open(Paths.get(p), StandardOpenOption.READ, StandardOpenOption.WRITE);
            if (id.equals("os-lock.none")) return c;
            if (!id.equals("os-lock.filechannel-lock")) { c.close(); throw new IllegalArgumentException("no OS lock " + id); }
            FileLock lock;
            try {
                lock = c.tryLock();
            } catch (IOException | RuntimeException e) {
                c.close();
                throw e;
            }
            if (lock == null) {
                c.close();
                throw new IOException("FileChannel.tryLock returned null: another program holds an overlapping lock on " + p);
            }
            return () -> {
                try { lock.release(); } finally { c.close(); }
            };
        }

        static Map<String, String> filesParam(RecipeRequest req) throws Unsupported {
            Object v = param(req, "files");
            if (v == null) return null;
            if (!(v instanceof Map)) throw new Unsupported("params.files must be an object of paths");
            Map<String, String> files = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                Object p = e.getValue();
                if (!(p instanceof String) || ((String) p).isEmpty()) throw new Unsupported("params.files." + e.getKey() + " must be a non-empty string");
                files.put((String) e.getKey(), (String) p);
            }
            return files;
        }

        static RecipeRun osLockHolder(String id, RecipeRequest req) throws Unsupported {
            Map<String, String> files = filesParam(req);
            String locked = stringParam(req, "locked", null);
            if (files == null || locked == null) throw new Unsupported("an OS-lock holder needs params.files and params.locked");
            if (!Arrays.asList(OS_LOCK_IDS).contains(id)) throw new Unsupported("no " + id + " here");
            return () -> {
                long lockedN = 0, released = 0;
                List<Closeable> held = new ArrayList<>();
                String step = "lock";
                Exception failed = null;
                String failedStep = null;
                try {
                    for (String p : files.values()) {
                        held.add(takeOsLock(id, p));
                        lockedN++;
                    }
                    step = "mark";
                    openWx(locked).close();
                    step = "hold";
                    while (!stopRequested()) sleepMs(1);
                } catch (Exception e) {
                    failed = e;
                    failedStep = step;
                }
                for (Closeable h : held) {
                    try {
                        h.close();
                        released++;
                    } catch (Exception e) {
                        if (failed == null) { failed = e; failedStep = "release"; }
                    }
                }
                Obj c = new Obj().set("locked", lockedN).set("released", released);
                return RecipeOutcome.of(failed == null, failedStep, failed == null ? null : raw(failed), c, null);
            };
        }

        interface Intrusion { void run() throws Exception; }

        /** The OS-lock intruder: waits for params.locked, then write (Files.writeString),
         * append (Files.writeString APPEND), rename (Files.move to params.moved), delete
         * (Files.delete), a mapped write (FileChannel.map READ_WRITE, the token's bytes at 0 as
         * far as the file reaches, force), then the holder's kind of lock on the relock file and,
         * while it holds it, params.relocked (CREATE_NEW). */
        static RecipeRun osLockIntruder(RecipeRequest req) throws Unsupported {
            Map<String, String> files = filesParam(req);
            String locked = stringParam(req, "locked", null);
            String relocked = stringParam(req, "relocked", null);
            String moved = stringParam(req, "moved", null);
            String lockId = stringParam(req, "lock", null);
            if (files == null || locked == null || relocked == null || moved == null || lockId == null)
                throw new Unsupported("an OS-lock intruder needs params.files, params.locked, params.relocked, params.moved and params.lock");
            for (String n : OS_LOCK_INTRUSIONS) if (!files.containsKey(n)) throw new Unsupported("an OS-lock intruder needs params.files." + n);
            if (!Arrays.asList(OS_LOCK_IDS).contains(lockId)) throw new Unsupported("no " + lockId + " here");
            long waitMs = intParam(req, "wait_ms", 0, 1, 600000, "params.wait_ms must be an integer from 1 to 600000");
            long relockMs = intParam(req, "relock_ms", 0, 1, 600000, "params.relock_ms must be an integer from 1 to 600000");
            if (waitMs == 0 || relockMs == 0) throw new Unsupported("an OS-lock intruder needs params.wait_ms and params.relock_ms");
            return () -> {
                long[] c = new long[6]; // write, append, rename, delete, mmap_tried, relock
                List<Object> sample = new ArrayList<>();
                java.util.function.Supplier<Obj> counters = () -> new Obj().set("write", c[0]).set("append", c[1]).set("rename", c[2])
                        .set("delete", c[3]).set("mmap_tried", c[4]).set("relock", c[5]);
                java.util.function.Function<Intrusion, Long> attempt = f -> {
                    try { f.run(); return 1L; } catch (Exception e) {
                        if (sample.size() < ERRORS_SAMPLE_MAX) sample.add(raw(e));
                        return 0L;
                    }
                };
                double until = nowMs() + waitMs;
                while (!Files.exists(Paths.get(locked))) {
                    if (nowMs() > until) {
                        IOException e = new IOException("the holder had not locked its files after " + waitMs + " ms");
                        return RecipeOutcome.of(false, "wait", raw(e), counters.get(), null);
                    }
                    sleepMs(1);
                }
                c[0] = attempt.apply(() -> Files.writeString(Paths.get(files.get("write")), req.token, StandardCharsets.UTF_8));
                c[1] = attempt.apply(() -> Files.writeString(Paths.get(files.get("append")), req.token, StandardCharsets.UTF_8, StandardOpenOption.WRITE, StandardOpenOption.APPEND));
                c[2] = attempt.apply(() -> Files.move(Paths.get(files.get("rename")), Paths.get(moved)));
                c[3] = attempt.apply(() -> Files.delete(Paths.get(files.get("delete"))));
                try (FileChannel ch = FileChannel.open(Paths.get(files.get("mmap")), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    long size = ch.size();
                    MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
                    c[4] = 1;
                    int n = (int) Math.min(req.data.length, size);
                    map.put(req.data, 0, n);
                    map.force();
                } catch (UnsupportedOperationException e) {
                    if (sample.size() < ERRORS_SAMPLE_MAX) sample.add(raw(e));
                } catch (Exception e) {
                    c[4] = 1;
                    if (sample.size() < ERRORS_SAMPLE_MAX) sample.add(raw(e));
                }
                try (Closeable release = takeOsLock(lockId, files.get("relock"))) {
                    // held while the marker is created; closed (released) after it
                    writeNew(relocked, req.data);
                    c[5] = 1;
                } catch (Exception e) {
                    if (sample.size() < ERRORS_SAMPLE_MAX) sample.add(raw(e));
                }
                return RecipeOutcome.of(true, null, null, counters.get(), sample);
            };
        }

        // ---- watch ----

        /** The folder-watch consumers: `events` (a WatchService only), `events-and-rescan`
         * (it and a listing every params.rescan_ms), `poll` (the listing only). The WatchService
         * is what a Java integrator writes: FileSystems.getDefault().newWatchService(),
         * dir.register(ws, ENTRY_CREATE); each polled key's events: OVERFLOW counts an overflow
         * (an events-only consumer does not rescan on it), ENTRY_CREATE records the name. The
         * listing is Files.newDirectoryStream(dir). Every name not recorded yet is appended as a
         * line to params.record (APPEND, one write per name); params.watching (CREATE_NEW) once
         * it watches; until `stop`, stdin and the key polled about once a millisecond. */
        static RecipeRun watchConsumer(String method, RecipeRequest req) throws Unsupported {
            String dirS = stringParam(req, "dir", null);
            String record = stringParam(req, "record", null);
            String watching = stringParam(req, "watching", null);
            if (dirS == null || record == null || watching == null)
                throw new Unsupported("a watch consumer needs params.dir, params.record and params.watching");
            long rescanMs = intParam(req, "rescan_ms", 0, 1, 600000, "params.rescan_ms must be an integer from 1 to 600000");
            if (rescanMs == 0) throw new Unsupported("params.rescan_ms must be an integer from 1 to 600000");
            Path dir = Paths.get(dirS);
            return () -> {
                long events = 0, listings = 0, recorded = 0, overflows = 0;
                List<Object> sample = new ArrayList<>();
                Set<String> seen = new HashSet<>();
                String step = "record";
                Exception failed = null;
                String failedStep = null;
                OutputStream rec = null;
                WatchService ws = null;
                try {
                    rec = Files.newOutputStream(Paths.get(record), StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
                    if (!method.equals("poll")) {
                        step = "watch";
                        ws = dir.getFileSystem().newWatchService();
                        dir.register(ws, StandardWatchEventKinds.ENTRY_CREATE);
                    }
                    step = "mark";
                    openWx(watching).close();
                    double nextList = method.equals("events") ? Double.POSITIVE_INFINITY : nowMs() + rescanMs;
                    for (;;) {
                        if (stopRequested()) break;
                        if (ws != null) {
                            step = "record";
                            WatchKey key;
                            while ((key = ws.poll()) != null) {
                                for (WatchEvent<?> ev : key.pollEvents()) {
                                    if (ev.kind() == StandardWatchEventKinds.OVERFLOW) { overflows++; continue; }
                                    events++;
                                    Object ctx = ev.context();
                                    if (ctx instanceof Path) {
                                        String n = ((Path) ctx).getFileName().toString();
                                        if (seen.add(n)) { rec.write(utf8(n + "\n")); recorded++; }
                                    }
                                }
                                key.reset();
                            }
                        }
                        if (nowMs() >= nextList) {
                            step = "list";
                            try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
                                for (Path x : ds) {
                                    String n = x.getFileName().toString();
                                    if (seen.add(n)) { rec.write(utf8(n + "\n")); recorded++; }
                                }
                            }
                            listings++;
                            nextList = nowMs() + rescanMs;
                        }
                        sleepMs(1);
                    }
                } catch (Exception e) {
                    failed = e;
                    failedStep = step;
                }
                if (ws != null) {
                    try { ws.close(); } catch (Exception e) { if (failed == null) { failed = e; failedStep = "watch"; } }
                }
                if (rec != null) {
                    try { rec.close(); } catch (Exception e) { if (failed == null) { failed = e; failedStep = "record"; } }
                }
                Obj c = new Obj().set("events", events).set("listings", listings).set("recorded", recorded).set("overflows", overflows);
                return RecipeOutcome.of(failed == null, failedStep, failed == null ? null : raw(failed), c, sample);
            };
        }

        // ---- mutex ----

        interface Acquire { boolean run(Path p, String owner) throws Exception; }
        interface Release { void run(Path p, String owner) throws Exception; }

        /** check-then-create: Files.exists, then Files.writeString (create/truncate); release
         * Files.deleteIfExists. exclusive-create: CREATE_NEW with the owner id,
         * FileAlreadyExistsException -> not acquired; release: delete while it holds the id. */
        static Acquire acquireOf(String id) {
            if (id.equals("mutex.check-then-create"))
                return (p, owner) -> {
                    if (Files.exists(p)) return false;
                    Files.writeString(p, owner, StandardCharsets.UTF_8);
                    return true;
                };
            return (p, owner) -> {
                try { writeNew(p.toString(), utf8(owner)); return true; }
                catch (FileAlreadyExistsException e) { return false; }
            };
        }

        static Release releaseOf(String id) {
            if (id.equals("mutex.check-then-create")) return (p, owner) -> Files.deleteIfExists(p);
            return (p, owner) -> {
                String seen;
                try { seen = Files.readString(p, StandardCharsets.UTF_8); } catch (NoSuchFileException e) { return; }
                if (seen.equals(owner)) Files.deleteIfExists(p);
            };
        }

        /** One line appended with O_APPEND (Files.write CREATE, APPEND: one write(2)). */
        static void appendLine(Path log, String line) throws IOException {
            Files.write(log, utf8(line + "\n"), StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        }

        static boolean logHas(Path log, String prefix) throws IOException {
            String text;
            try { text = Files.readString(log, StandardCharsets.UTF_8); } catch (NoSuchFileException e) { return false; }
            for (String l : text.split("\n", -1)) if (l.startsWith(prefix)) return true;
            return false;
        }

        interface Ready { boolean get() throws Exception; }

        static void waitUntil(Ready ready, long ms, String what) throws Exception {
            double until = nowMs() + ms;
            while (!ready.get()) {
                if (nowMs() > until) throw new java.util.concurrent.TimeoutException(what + " did not come within " + ms + " ms");
                sleepMs(1);
            }
        }

        static RecipeRun mutexWorker(String id, RecipeRequest req) throws Unsupported {
            String lockS = stringParam(req, "lock", null);
            String logS = stringParam(req, "log", null);
            if (lockS == null || logS == null) throw new Unsupported("a mutex contender needs params.lock and params.log");
            String role = req.role;
            if (!"contender".equals(role) && !"holder".equals(role) && !"releaser".equals(role)) throw new Unsupported("no mutex role " + role);
            long waitMs = intParam(req, "wait_ms", 0, 0, 3600000, "params.wait_ms must be an integer from 0 to 3600000");
            long retryMs = intParam(req, "retry_ms", 5, 1, 10000, "params.retry_ms must be an integer from 1 to 10000");
            long holdMs = intParam(req, "hold_ms", 20, 1, 600000, "params.hold_ms must be an integer from 1 to 600000");
            long goWaitMs = intParam(req, "go_wait_ms", 600000, 1, 3600000, "params.go_wait_ms must be an integer from 1 to 3600000");
            String go = stringParam(req, "go", null);
            String holder = stringParam(req, "holder", null);
            String releasedMarker = stringParam(req, "released", null);
            if ("releaser".equals(role) && (holder == null || releasedMarker == null)) throw new Unsupported("a releaser needs params.holder and params.released");
            Path lock = Paths.get(lockS), log = Paths.get(logS);
            Acquire acquire = acquireOf(id);
            Release release = releaseOf(id);
            return () -> {
                long acquired = 0, released = 0, tries = 0, foreign = 0, refused = 0;
                String step = "load";
                Exception failed = null;
                String failedStep = null;
                try {
                    if (go != null) {
                        step = "wait";
                        waitUntil(() -> Files.exists(Paths.get(go)), goWaitMs, "the go marker " + go);
                    }
                    if ("releaser".equals(role)) {
                        step = "wait";
                        waitUntil(() -> logHas(log, "enter " + holder + " "), goWaitMs, "the holder's enter line");
                        step = "release-other";
                        try { release.run(lock, req.token); foreign = 1; } catch (Exception e) { refused = 1; }
                        writeNew(releasedMarker, req.data);
                    }
                    step = "acquire";
                    double until = nowMs() + waitMs;
                    for (;;) {
                        tries++;
                        if (acquire.run(lock, req.token)) { acquired = 1; break; }
                        if (nowMs() >= until) break;
                        sleepMs(retryMs);
                    }
                    if (acquired == 1) {
                        step = "enter";
                        appendLine(log, "enter " + req.token + " " + System.currentTimeMillis());
                        step = "hold";
                        if ("holder".equals(role)) { while (!stopRequested()) sleepMs(2); }
                        else sleepMs(holdMs);
                        step = "leave";
                        appendLine(log, "leave " + req.token + " " + System.currentTimeMillis());
                        step = "release";
                        release.run(lock, req.token);
                        released = 1;
                    }
                } catch (Exception e) {
                    failed = e;
                    failedStep = step;
                }
                try { appendLine(log, "done " + req.token + " " + System.currentTimeMillis()); }
                catch (Exception e) { if (failed == null) { failed = e; failedStep = "done"; } }
                Obj c = new Obj().set("acquired", acquired).set("released", released).set("tries", tries).set("foreign_release", foreign).set("foreign_refused", refused);
                return RecipeOutcome.of(failed == null, failedStep, failed == null ? null : raw(failed), c, null);
            };
        }

        // ---- done-marker ----

        static RecipeRun doneWriter(String method, RecipeRequest req) throws Unsupported {
            byte[] data = publishContent(req);
            String marker = stringParam(req, "marker", null);
            if (marker == null && method.startsWith("marker")) throw new Unsupported("a marker method needs params.marker");
            int chunkMs = (int) intParam(req, "chunk_ms", 0, 0, 1000, "params.chunk_ms must be an integer from 0 to 1000");
            long records = 0;
            for (byte b : data) if (b == '\n') records++;
            StringBuilder sb = new StringBuilder("{\"name\":");
            Path fn = Paths.get(req.target).getFileName();
            Json.stringify(sb, fn == null ? "" : fn.toString());
            sb.append(",\"size\":").append(data.length);
            sb.append(",\"records\":").append(records);
            sb.append(",\"idempotency_key\":");
            Json.stringify(sb, req.token);
            sb.append('}');
            byte[] manifest = utf8(sb.toString());
            String target = req.target;
            return () -> {
                try { if (method.equals("marker-before-data")) Files.write(Paths.get(marker), manifest); }
                catch (Exception e) { return RecipeOutcome.failure("manifest", raw(e)); }
                OutputStream o;
                try { o = openW(target); } catch (Exception e) { return RecipeOutcome.failure("open", raw(e)); }
                try { writeChunks(o, data, chunkMs); } catch (Exception e) {
                    try { o.close(); } catch (Exception x) { /* best effort */ }
                    return RecipeOutcome.failure("write", raw(e));
                }
                try { o.close(); } catch (Exception e) { return RecipeOutcome.failure("close", raw(e)); }
                try { if (method.equals("marker-after-data")) Files.write(Paths.get(marker), manifest); }
                catch (Exception e) { return RecipeOutcome.failure("manifest", raw(e)); }
                return RecipeOutcome.success();
            };
        }

        /** consume.poll: about once a millisecond, whether the target counts as complete by
         * params.rule — marker (Files.exists(marker)), size-stable / mtime-stable
         * (Files.readAttributes(target, BasicFileAttributes): one stat; not empty, size / mtime
         * unchanged for stable_ms) — then read it once (Files.readAllBytes). */
        static RecipeRun consumePoll(RecipeRequest req) throws Unsupported {
            String rule = stringParam(req, "rule", null);
            String marker = stringParam(req, "marker", null);
            Object sm = param(req, "stable_ms");
            double stableMs = 0;
            if (sm != null) {
                if (!(sm instanceof JsonNumber)) throw new Unsupported("params.stable_ms must be a number of milliseconds");
                stableMs = ((JsonNumber) sm).toDouble();
            }
            if (!("marker".equals(rule) || "size-stable".equals(rule) || "mtime-stable".equals(rule)) || ("marker".equals(rule) && marker == null))
                throw new Unsupported("consume.poll needs params.rule (marker, size-stable, mtime-stable) and params.marker for marker");
            Object ex = param(req, "expect");
            if (!(ex instanceof List) || ((List<?>) ex).isEmpty() || !(((List<?>) ex).get(0) instanceof String))
                throw new Unsupported("consume.poll needs params.expect");
            byte[] whole = utf8((String) ((List<?>) ex).get(0));
            Path target = Paths.get(req.target);
            final double stable = stableMs;
            return () -> {
                long consumed = 0, wholeN = 0, partial = 0, checks = 0;
                boolean haveLast = false;
                long last = 0;
                double since = 0;
                double deadline = Double.NaN;
                for (;;) {
                    checks++;
                    double now = nowMs();
                    boolean ready = false;
                    try {
                        if ("marker".equals(rule)) ready = Files.exists(Paths.get(marker));
                        else {
                            java.nio.file.attribute.BasicFileAttributes a = Files.readAttributes(target, java.nio.file.attribute.BasicFileAttributes.class);
                            long size = a.size();
                            long key = "size-stable".equals(rule) ? size : a.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS);
                            if (size > 0 && haveLast && key == last) ready = now - since >= stable;
                            else { last = key; haveLast = true; since = now; }
                        }
                    } catch (Exception e) { /* not there yet */ }
                    if (ready) {
                        consumed = 1;
                        byte[] bytes = null;
                        try { bytes = Files.readAllBytes(target); } catch (Exception e) { /* partial */ }
                        if (bytes != null && Arrays.equals(bytes, whole)) wholeN = 1; else partial = 1;
                        break;
                    }
                    if (Double.isNaN(deadline) && stopRequested()) deadline = now + 2 * stable + 100;
                    if (!Double.isNaN(deadline) && now >= deadline) break;
                    sleepMs(1);
                }
                while (Double.isNaN(deadline) && !stopRequested()) sleepMs(1);
                Obj c = new Obj().set("consumed", consumed).set("whole", wholeN).set("partial", partial).set("checks", checks);
                return RecipeOutcome.of(true, null, null, c, new ArrayList<>());
            };
        }
    }
}
