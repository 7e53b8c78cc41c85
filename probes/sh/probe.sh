# conformance probe for POSIX shells (family `sh`; protocol 1, LOOP mode or ONE-SHOT mode, see
# ../PROTOCOL.md and README.md). Run as `dash probes/sh/probe.sh` or `bash probes/sh/probe.sh`:
# one process per contender answering requests on stdin (CONFORMANCE_LOOP=1, at the end of this
# file), or one process per attempt; working directory the scratch root. A hand-off recipe (protocol 2,
# CONFORMANCE_RECIPE set) runs the steps of recipes.sh, beside this file.
#
# Data arrives only in the environment (or a loop's request lines) and is only ever used
# quoted ("$T"), never evaluated:
#   CONFORMANCE_VARIANT CONFORMANCE_TARGET CONFORMANCE_SOURCE CONFORMANCE_TOKEN
#   CONFORMANCE_MARK (empty: none)
# Every tool gets `--` before its operands, so a path starting with '-' is an operand.
# Stdout carries exactly two protocol lines (ready, result). The command's own stdout and
# stderr go to a file in $TMPDIR (the scratch's temp folder); its first line becomes the
# error's message, and the whole file is copied to this process's stderr.
#
# POSIX sh only: the same file runs on dash 0.5.12 and bash 5.2. The one thing taken from
# the shell when it offers it is bash's EPOCHREALTIME (wall clock, microseconds, no process):
# t0_us/t1_us are sent only when that variable changes between the start and the call, so a
# shell without it (dash) sends no stamps rather than paying a `date` process per stamp.

# json_escape TEXT: sets J to TEXT as the inside of a JSON string: \ and " escaped, tab as
# \t, any other control character as \u00XX. Pure shell: no process unless a control
# character other than a tab occurs.
json_escape() {
  _r=$1
  J=
  while :; do
    _p=${_r%%[\\\"[:cntrl:]]*}
    J=$J$_p
    [ "$_p" = "$_r" ] && break
    _r=${_r#"$_p"}
    _c=${_r%"${_r#?}"}
    _r=${_r#?}
    case $_c in
      \\) J=$J'\\' ;;
      \") J=$J'\"' ;;
      "	") J=$J'\t' ;;
      *) J=$J$(printf '\\u%04x' "'$_c") ;;
    esac
  done
}

# unsupported REASON: the ready line with supported:false, then exit 0 without reading stdin.
PROTO=1
unsupported() {
  printf 'probe: unsupported: %s\n' "$1" >&2
  json_escape "$1"
  printf '{"protocol":%s,"type":"ready","supported":false,"reason":"%s"}\n' "$PROTO" "$J"
  exit 0
}

# first_line_of FILE: sets L to the file's first line and LL to its last (empty when none) and
# copies the whole file to stderr, with builtins only.
first_line_of() {
  L=
  LL=
  _n=0
  [ -f "$1" ] || return 0
  while IFS= read -r _l || [ -n "$_l" ]; do
    [ "$_n" = 0 ] && L=$_l
    _n=1
    LL=$_l
    printf '%s\n' "$_l" >&2
  done < "$1"
}

# errno_of_output: sets CODE from the first line of the output (L), or else from its last
# line (LL): a shell prints a path raw, so a name holding a line break puts the strerror text
# on a later line (dash: "cannot create a<LF>b: File exists").
errno_of_output() {
  errno_name "$L"
  [ -n "$CODE" ] || [ "$LL" = "$L" ] || errno_name "$LL"
}

# errno_name LINE: sets CODE to the errno name whose strerror text (LC_ALL=C, glibc) ends
# LINE after ": ", or to the empty string. Bash's own noclobber refusal ("cannot overwrite
# existing file") is its NOCLOBBER_REDIRECT, which bash's redir.c returns for a regular file
# found by stat(2) or an O_EXCL open that failed with EEXIST: named EEXIST. dash's "No such
# file" (a redirection that cannot open its file) is ENOENT.
errno_name() {
  case $1 in
    *": File exists") CODE=EEXIST ;;
    *": No such file or directory") CODE=ENOENT ;;
    *": No such file") CODE=ENOENT ;;
    *": Directory not empty") CODE=ENOTEMPTY ;;
    *": Is a directory") CODE=EISDIR ;;
    *": Not a directory") CODE=ENOTDIR ;;
    *": Permission denied") CODE=EACCES ;;
    *": Operation not permitted") CODE=EPERM ;;
    *": Device or resource busy") CODE=EBUSY ;;
    *": Invalid cross-device link") CODE=EXDEV ;;
    *": No space left on device") CODE=ENOSPC ;;
    *": Disk quota exceeded") CODE=EDQUOT ;;
    *": Read-only file system") CODE=EROFS ;;
    *": Input/output error") CODE=EIO ;;
    *": File name too long") CODE=ENAMETOOLONG ;;
    *": cannot overwrite existing file") CODE=EEXIST ;;
    *) CODE= ;;
  esac
}


# ready_then_release PROTOCOL WHAT: the ready line, then the release: exactly one line from
# stdin. End of input or an empty line: exit 3, WHAT (the call, the recipe) not made.
ready_then_release() {
  printf '{"protocol":%s,"type":"ready","supported":true}\n' "$1"
  REL=
  IFS= read -r REL
  if [ -z "$REL" ]; then
    printf '%s\n' "probe: no release line, end of input or empty line; $2" >&2
    rm -f -- "$E" 2>/dev/null
    exit 3
  fi
}

# attempt: one attempt, from the CONFORMANCE_* variables to the result line, then `exit`:
# the whole of one-shot mode, and what a loop runs in a subshell per request.
attempt() {
V=${CONFORMANCE_VARIANT-}
T=${CONFORMANCE_TARGET-}
S=${CONFORMANCE_SOURCE-}
TOK=${CONFORMANCE_TOKEN-}
M=${CONFORMANCE_MARK-}
E0=${EPOCHREALTIME-}
PROTO=1
# The command's output file, inside the scratch ($TMPDIR is the scratch's temp folder).
E=${TMPDIR:-.}/.conformance-sh-$$.err

# A recipe (protocol 2): the steps of recipes.sh, beside this file (README.md, "Recipes").
if [ -n "${CONFORMANCE_RECIPE-}" ]; then
  PROTO=2
  RS=${CONFORMANCE_RECIPES-}
  [ -n "$RS" ] || unsupported "this probe was started without recipes.sh (CONFORMANCE_RECIPES is empty)"
  [ -f "$RS" ] || unsupported "recipes.sh is missing beside probe.sh"
  # `.` searches PATH for a name without a slash
  case $RS in */*) ;; *) RS=./$RS ;; esac
  . "$RS"
  recipe_main
fi

# Variant table: the tool it runs (sh: the shell itself, a redirection), whether it needs a
# source, whether it writes the token.
TOOL=
NEEDS=
NEEDTOK=
case $V in
  sh.noclobber-redirect) TOOL=sh NEEDTOK=1 ;;
  sh.redirect) TOOL=sh NEEDTOK=1 ;;
  sh.redirect-append) TOOL=sh NEEDTOK=1 ;;
  sh.test-e+redirect) TOOL=sh NEEDTOK=1 ;;
  sh.mkdir) TOOL=mkdir ;;
  sh.mkdir.p) TOOL=mkdir ;;
  sh.ln) TOOL=ln NEEDS=1 ;;
  sh.ln.T) TOOL=ln NEEDS=1 ;;
  sh.ln.s) TOOL=ln NEEDS=1 ;;
  sh.ln.sT) TOOL=ln NEEDS=1 ;;
  sh.mv) TOOL=mv NEEDS=1 ;;
  sh.mv.n) TOOL=mv NEEDS=1 ;;
  sh.mv.T) TOOL=mv NEEDS=1 ;;
  sh.test-e+mv) TOOL=mv NEEDS=1 ;;
  sh.cp) TOOL=cp NEEDS=1 ;;
  sh.cp.n) TOOL=cp NEEDS=1 ;;
  sh.cp.R) TOOL=cp NEEDS=1 ;;
  sh.install.D) TOOL=install NEEDS=1 ;;
  *)
    printf 'probe: unknown variant [%s]\n' "$V" >&2
    unsupported "unknown variant"
    ;;
esac
[ -n "$M" ] && NEEDTOK=1
[ -n "$T" ] || unsupported "CONFORMANCE_TARGET is empty"
[ -z "$NEEDS" ] || [ -n "$S" ] || unsupported "CONFORMANCE_SOURCE is empty"
[ -z "$NEEDTOK" ] || [ -n "$TOK" ] || unsupported "CONFORMANCE_TOKEN is empty"
if [ "$TOOL" != sh ]; then
  command -v "$TOOL" >/dev/null 2>&1 || unsupported "$TOOL is not on PATH"
fi

{ : >|"$E"; } 2>/dev/null || unsupported "cannot write the output file in TMPDIR"

# Shell state the call needs is set before the release (it touches no file).
[ "$V" = sh.noclobber-redirect ] && set -C

ready_then_release 1 "call not made"

CHK=
T0=${EPOCHREALTIME-}
case $V in
  sh.noclobber-redirect) { printf %s "$TOK" > "$T"; } 2>|"$E"; ST=$? ;;
  sh.redirect) { printf %s "$TOK" > "$T"; } 2>|"$E"; ST=$? ;;
  sh.redirect-append) { printf %s "$TOK" >> "$T"; } 2>|"$E"; ST=$? ;;
  sh.test-e+redirect)
    if [ -e "$T" ]; then CHK=1 ST=1; else { printf %s "$TOK" > "$T"; } 2>|"$E"; ST=$?; fi ;;
  sh.mkdir) mkdir -- "$T" 2>|"$E" 1>&2; ST=$? ;;
  sh.mkdir.p) mkdir -p -- "$T" 2>|"$E" 1>&2; ST=$? ;;
  sh.ln) ln -- "$S" "$T" 2>|"$E" 1>&2; ST=$? ;;
  sh.ln.T) ln -T -- "$S" "$T" 2>|"$E" 1>&2; ST=$? ;;
  sh.ln.s) ln -s -- "$S" "$T" 2>|"$E" 1>&2; ST=$? ;;
  sh.ln.sT) ln -s -T -- "$S" "$T" 2>|"$E" 1>&2; ST=$? ;;
  sh.mv) mv -- "$S" "$T" 2>|"$E" 1>&2; ST=$? ;;
  sh.mv.n) mv -n -- "$S" "$T" 2>|"$E" 1>&2; ST=$? ;;
  sh.mv.T) mv -T -- "$S" "$T" 2>|"$E" 1>&2; ST=$? ;;
  sh.test-e+mv)
    if [ ! -e "$T" ]; then mv -- "$S" "$T" 2>|"$E" 1>&2; ST=$?; else CHK=1 ST=1; fi ;;
  sh.cp) cp -- "$S" "$T" 2>|"$E" 1>&2; ST=$? ;;
  sh.cp.n) cp -n -- "$S" "$T" 2>|"$E" 1>&2; ST=$? ;;
  sh.cp.R) cp -R -- "$S" "$T" 2>|"$E" 1>&2; ST=$? ;;
  sh.install.D) install -D -- "$S" "$T" 2>|"$E" 1>&2; ST=$? ;;
esac
T1=${EPOCHREALTIME-}
set +C

OK=true
ERR=
if [ "$ST" != 0 ]; then
  OK=false
  if [ -n "$CHK" ]; then
    printf '%s\n' "probe: target exists, checked with [ -e ]" >&2
    ERR='{"type":"test","code":"CHECK_EXISTS","errno":null,"hresult":null,"message":"target exists (checked with [ -e ])"}'
  else
    first_line_of "$E"
    errno_of_output
    json_escape "$L"
    if [ -n "$CODE" ]; then CJ="\"$CODE\""; else CJ=null; fi
    ERR="{\"type\":\"$TOOL\",\"code\":$CJ,\"errno\":null,\"hresult\":null,\"message\":\"$J\"}"
  fi
else
  first_line_of "$E"
  # After a successful call: the token into a new file at the mark path (create/truncate).
  if [ -n "$M" ]; then
    { printf %s "$TOK" > "$M"; } 2>|"$E"
    MST=$?
    if [ "$MST" != 0 ]; then
      OK=false
      first_line_of "$E"
      errno_of_output
      json_escape "$L"
      if [ -n "$CODE" ]; then CJ="\"$CODE\""; else CJ=null; fi
      ERR="{\"type\":\"MarkError\",\"code\":$CJ,\"errno\":null,\"hresult\":null,\"errorlevel\":$MST,\"message\":\"$J\"}"
    fi
  fi
fi

# Stamps: bash's EPOCHREALTIME ("seconds.micros") when the shell keeps it (it changed since
# the start); none otherwise.
STAMPS=
case $E0:$T0:$T1 in
  *[!0-9.:]*) ;;
  *)
    case $T0 in
      [0-9]*.[0-9][0-9][0-9][0-9][0-9][0-9])
        case $T1 in
          [0-9]*.[0-9][0-9][0-9][0-9][0-9][0-9])
            [ "$T0" != "$E0" ] && STAMPS=",\"t0_us\":${T0%.*}${T0#*.},\"t1_us\":${T1%.*}${T1#*.}" ;;
        esac ;;
    esac ;;
esac

if [ -n "$ERR" ]; then
  printf '{"type":"result","ok":%s,"errorlevel":%s%s,"error":%s}\n' "$OK" "$ST" "$STAMPS" "$ERR"
else
  printf '{"type":"result","ok":%s,"errorlevel":%s%s,"error":null}\n' "$OK" "$ST" "$STAMPS"
fi
# a loop keeps its output file for the next attempt (`rm` is a process: measured here, it
# made each request of a dash loop 6 ms instead of 1) and removes it when it ends
[ -n "${LOOPING-}" ] || rm -f -- "$E" 2>/dev/null
exit 0
}

# The request variables of one attempt (one-shot mode: the environment; loop mode: the
# request's lines). A loop clears them before each request.
clear_request() {
  CONFORMANCE_VARIANT= CONFORMANCE_TARGET= CONFORMANCE_SOURCE= CONFORMANCE_TOKEN=
  CONFORMANCE_MARK= CONFORMANCE_RECIPE= CONFORMANCE_RECIPE_DIR= CONFORMANCE_RECIPES=
  CONFORMANCE_TEMP= CONFORMANCE_INCOMING= CONFORMANCE_PROCESSING= CONFORMANCE_OUTPUT=
  CONFORMANCE_COUNTER= CONFORMANCE_LOCK= CONFORMANCE_INCREMENTS= CONFORMANCE_LEDGER=
  CONFORMANCE_KEY= CONFORMANCE_EFFECT= CONFORMANCE_LIST=
}

# Loop mode (CONFORMANCE_LOOP=1; ../PROTOCOL.md, "Loop mode (POSIX shells)"): one shell per
# contender answers request after request. A request is the line `prepare`, then one line
# `NAME=value` per request variable (a value never holds a line break: the harness makes such
# an attempt in one-shot mode), then `end`; each attempt runs in a subshell, so that its
# `exit`, `set -C` and variables end with it, and reads its own release line. The name is
# matched against the fixed list below: a value is assigned, never evaluated.
if [ "${CONFORMANCE_LOOP-}" = 1 ]; then
  LOOPING=1
  # the output file of every attempt (attempt() names it the same way in its subshell)
  trap 'rm -f -- "${TMPDIR:-.}/.conformance-sh-$$.err" 2>/dev/null' EXIT
  printf '{"protocol":2,"type":"hello","probe":"sh","families":["sh"],"mode":"loop"}\n'
  while IFS= read -r RQ; do
    case $RQ in
      quit) exit 0 ;;
      prepare) ;;
      *) printf 'probe: expected prepare or quit, got [%s]\n' "$RQ" >&2; exit 3 ;;
    esac
    clear_request
    RQ=
    while IFS= read -r RQ; do
      case $RQ in
        end) break ;;
        CONFORMANCE_VARIANT=*) CONFORMANCE_VARIANT=${RQ#*=} ;;
        CONFORMANCE_TARGET=*) CONFORMANCE_TARGET=${RQ#*=} ;;
        CONFORMANCE_SOURCE=*) CONFORMANCE_SOURCE=${RQ#*=} ;;
        CONFORMANCE_TOKEN=*) CONFORMANCE_TOKEN=${RQ#*=} ;;
        CONFORMANCE_MARK=*) CONFORMANCE_MARK=${RQ#*=} ;;
        CONFORMANCE_RECIPE=*) CONFORMANCE_RECIPE=${RQ#*=} ;;
        CONFORMANCE_RECIPE_DIR=*) CONFORMANCE_RECIPE_DIR=${RQ#*=} ;;
        CONFORMANCE_RECIPES=*) CONFORMANCE_RECIPES=${RQ#*=} ;;
        CONFORMANCE_TEMP=*) CONFORMANCE_TEMP=${RQ#*=} ;;
        CONFORMANCE_INCOMING=*) CONFORMANCE_INCOMING=${RQ#*=} ;;
        CONFORMANCE_PROCESSING=*) CONFORMANCE_PROCESSING=${RQ#*=} ;;
        CONFORMANCE_OUTPUT=*) CONFORMANCE_OUTPUT=${RQ#*=} ;;
        CONFORMANCE_COUNTER=*) CONFORMANCE_COUNTER=${RQ#*=} ;;
        CONFORMANCE_LOCK=*) CONFORMANCE_LOCK=${RQ#*=} ;;
        CONFORMANCE_INCREMENTS=*) CONFORMANCE_INCREMENTS=${RQ#*=} ;;
        CONFORMANCE_LEDGER=*) CONFORMANCE_LEDGER=${RQ#*=} ;;
        CONFORMANCE_KEY=*) CONFORMANCE_KEY=${RQ#*=} ;;
        CONFORMANCE_EFFECT=*) CONFORMANCE_EFFECT=${RQ#*=} ;;
        CONFORMANCE_LIST=*) CONFORMANCE_LIST=${RQ#*=} ;;
        *) printf 'probe: unknown request line [%s]\n' "$RQ" >&2; exit 3 ;;
      esac
    done
    [ "$RQ" = end ] || { printf '%s\n' "probe: end of input inside a request" >&2; exit 3; }
    ( attempt )
  done
  exit 0
fi

attempt
