# conformance: the hand-off recipes of the POSIX shell (protocol 2, ../PROTOCOL.md, "Recipes
# in one-shot mode"; README.md, "Recipes"). Sourced by probe.sh when CONFORMANCE_RECIPE is
# set, one shell process per recipe run; everything it uses comes from probe.sh (T, TOK, E,
# json_escape, unsupported, first_line_of, errno_name, errno_of_output) and the environment:
#   CONFORMANCE_RECIPE      the recipe's id
#   CONFORMANCE_RECIPE_DIR  the harness's folder for this driver: `content` (the bytes a
#                           publish writer writes), `reads/` (a reader's copies), `stop`
#   CONFORMANCE_TEMP CONFORMANCE_INCOMING CONFORMANCE_PROCESSING CONFORMANCE_OUTPUT
#   CONFORMANCE_COUNTER CONFORMANCE_LOCK CONFORMANCE_INCREMENTS CONFORMANCE_LEDGER
#   CONFORMANCE_KEY CONFORMANCE_EFFECT CONFORMANCE_LIST   the recipe's parameters (empty: none)
# Every value is data: quoted, never evaluated; `--` before every operand.
#
# What a shell script has, and so what each recipe uses: `cat` to write given bytes and to
# copy a file, `read` to read a line (a builtin: no process to start), `set -C` (noclobber:
# the shell opens with O_EXCL) for an exclusive create of a file, `mv -f` to rename, `>>`
# (O_APPEND) to append, `rm` to delete, a glob to list a folder.
# A step's exit status and its tool's first line on stderr are the step's error.

RCP=${CONFORMANCE_RECIPE-}
Q=${CONFORMANCE_RECIPE_DIR-}
RTMP=${CONFORMANCE_TEMP-}
RIN=${CONFORMANCE_INCOMING-}
RPROC=${CONFORMANCE_PROCESSING-}
ROUT=${CONFORMANCE_OUTPUT-}
RCNT=${CONFORMANCE_COUNTER-}
RLOCK=${CONFORMANCE_LOCK-}
RINC=${CONFORMANCE_INCREMENTS-}
RLEDGER=${CONFORMANCE_LEDGER-}
RKEY=${CONFORMANCE_KEY-}
REFF=${CONFORMANCE_EFFECT-}
RLIST=${CONFORMANCE_LIST-}

# The same limits as the session probes (probes/shared/session.mjs, probes/python/probe.py):
# rounds of a claim worker without progress, reads of an update counter that holds no whole
# number, lock tries of a locked update (each a `sleep 0.001`, so at least 10 s).
CLAIM_STUCK_ROUNDS=100000
UPDATE_READ_TRIES=1000
UPDATE_LOCK_TRIES=10000

# The result of a step: STEP (the failed step, empty on success), ST (its exit status), STOOL
# (the tool that failed), SMSG (its first line on stderr), CJ (the counters, JSON members).
STEP=
ST=0
STOOL=
SMSG=
CJ=

# fail_step STEP TOOL STATUS: the recipe stops at STEP; the message is $E's first line.
fail_step() {
  STEP=$1
  STOOL=$2
  ST=$3
  first_line_of "$E"
  SMSG=$L
  SLAST=$LL
}

# give_up STEP MESSAGE: the recipe stops at STEP with MESSAGE as its error (a limit reached,
# not a tool's failure).
give_up() {
  printf '%s\n' "$2" >|"$E"
  fail_step "$1" sh 1
}

# taken_or_fail STEP STATUS: after a `set -C` create failed with STATUS: status 0 when the name
# was taken (EEXIST, read from the message in $E), else the recipe stops at STEP (status 1).
taken_or_fail() {
  first_line_of "$E" 2>/dev/null
  errno_of_output
  [ "$CODE" = EEXIST ] && return 0
  fail_step "$1" sh "$2"
  return 1
}

# excl_create FILE TEXT: writes TEXT into FILE, created by the shell with O_EXCL (`set -C`);
# the status is the redirection's (non-zero when FILE exists), its message in $E.
excl_create() {
  set -C
  { printf %s "$2" > "$1"; } 2>|"$E"
  _st=$?
  set +C
  return $_st
}

# ---- publish: publish.direct, publish.temp-rename, publish.temp-rename-cross-volume --------

# `cat content > target`: the shell opens the target (create or truncate), cat writes the bytes
# (in one write up to its 128 KiB buffer), the shell closes it.
r_pub_direct() {
  { cat -- "$Q/content" > "$T"; } 2>|"$E" || fail_step write cat $?
}

# `set -C; : > temp` (O_EXCL), `cat content >> temp`, `mv -f -- temp target`; after a failed
# write or rename the temp is removed, as the session probes remove theirs.
r_pub_temp() {
  excl_create "$RTMP" "" || { fail_step open sh $?; return; }
  { cat -- "$Q/content" >> "$RTMP"; } 2>|"$E" || { fail_step write cat $?; rm -f -- "$RTMP"; return; }
  mv -f -- "$RTMP" "$T" 2>|"$E" 1>&2 || { fail_step rename mv $?; rm -f -- "$RTMP"; return; }
}

# ---- read.poll -------------------------------------------------------------------------------

# Until `stop` exists, then once more: `cat target > reads/K` when `[ -e target ]`, else an
# absent read; a cat that finds no file is absent too, any other failure an error (its copy
# removed). The harness compares the copies with params.expect (complete, empty, torn,
# changes), as for cmd.
r_read_poll() {
  _rd=0 _ab=0 _er=0 _last=
  while :; do
    [ -e "$Q/stop" ] && _last=1
    _rd=$((_rd + 1))
    if [ -e "$T" ]; then
      if ! { cat -- "$T" > "$Q/reads/$_rd"; } 2>|"$E"; then
        rm -f -- "$Q/reads/$_rd"
        first_line_of "$E" 2>/dev/null
        errno_of_output
        if [ "$CODE" = ENOENT ]; then _ab=$((_ab + 1)); else _er=$((_er + 1)); fi
      fi
    else
      _ab=$((_ab + 1))
    fi
    [ -n "$_last" ] && break
  done
  CJ="\"reads\":$_rd,\"absent\":$_ab,\"errors\":$_er"
}

# ---- claim: claim.list-then-open, claim.rename-claim, claim.exclusive-marker ----------------

# Rounds of `for f in incoming/*` (`.claim` names skipped) until a listing is empty; per item:
# claim it (nothing / `mv -f -- item processing/name` / `set -C; : > item.claim`), read it
# (`read -r data < item`), append its content and a line end to the output in one write
# (`printf '%s\n' >> output`), `rm -- item`.
r_claim() {
  _rounds=0 _listed=0 _claimed=0 _cfail=0 _dfail=0 _done=0 _idle=0
  while :; do
    _rounds=$((_rounds + 1))
    if [ ! -d "$RIN" ]; then
      give_up list "cannot list $RIN: No such file or directory"
      break
    fi
    _any= _progress=
    for _f in "$RIN"/*; do
      case $_f in *.claim) continue ;; esac
      # an empty folder leaves the pattern itself
      [ "$_f" = "$RIN/*" ] && ! [ -e "$_f" ] && continue
      _any=1
      _listed=$((_listed + 1))
      _at=$_f
      case $CM in
        rename)
          _at=$RPROC/${_f##*/}
          mv -f -- "$_f" "$_at" 2>|"$E" 1>&2 || { _cfail=$((_cfail + 1)); continue; }
          ;;
        marker)
          excl_create "$_f.claim" "" || { _cfail=$((_cfail + 1)); continue; }
          ;;
      esac
      # read by the shell itself (`read`: no process to start); an item is one line without a
      # line end, at whose end `read` says 1 with the line read
      _data=
      { IFS= read -r _data < "$_at"; } 2>|"$E" || [ -n "$_data" ] || { _cfail=$((_cfail + 1)); continue; }
      _claimed=$((_claimed + 1))
      if ! { printf '%s\n' "$_data" >> "$ROUT"; } 2>|"$E"; then
        fail_step output sh $?
        break 2
      fi
      _done=$((_done + 1))
      _progress=1
      rm -- "$_at" 2>|"$E" 1>&2 || _dfail=$((_dfail + 1))
    done
    [ -z "$_any" ] && break
    if [ -n "$_progress" ]; then _idle=0; else _idle=$((_idle + 1)); fi
    if [ "$_idle" -ge "$CLAIM_STUCK_ROUNDS" ]; then
      give_up stuck "no progress in $CLAIM_STUCK_ROUNDS rounds"
      break
    fi
  done
  CJ="\"rounds\":$_rounds,\"listed\":$_listed,\"claimed\":$_claimed,\"claim_failed\":$_cfail,\"delete_failed\":$_dfail,\"processed\":$_done"
}

# ---- update: update.read-modify-write, update.temp-rename, update.append-line and the locked
# forms ----------------------------------------------------------------------------------------

# update_read: sets _v to the counter's whole number, read by `$(cat -- counter)` where rivals
# rewrite it in place (read-modify-write), else by `read -r` (one line, trailing empty lines
# allowed), and read again while it holds none (an empty or half-written file), at
# most UPDATE_READ_TRIES times; status 1 (the step failed) otherwise.
update_read() {
  _tries=0
  while :; do
    if [ "$UM" = read-modify-write ]; then
      # rewritten in place by rivals while it is read: one read(2) of the whole file by cat, as
      # every other runtime reads it (dash's `read` takes a byte per read(2), and could splice
      # two counters' digits into a third number)
      _v=$(cat -- "$RCNT" 2>|"$E") || { fail_step read cat $?; return 1; }
    else
      # nobody writes it while it is read (a lock holds it, or a rename replaces it): read by
      # the shell itself (`read`, no process), two lines, a second one making the text no whole
      # number as `$(cat -- counter)` would keep it; `read` says 1 at the end of the file, so
      # only a message on stderr (the file could not be opened) is a failure
      _v= _more=
      { { IFS= read -r _v; IFS= read -r _more; } < "$RCNT"; } 2>|"$E"
      _rst=$?
      [ "$_rst" -eq 0 ] || ! [ -s "$E" ] || { fail_step read sh "$_rst"; return 1; }
      [ -z "$_more" ] || _v=-
    fi
    case $_v in
      '' | *[!0-9]*) ;;
      *)
        # no leading zeros: the shell's arithmetic reads 010 as octal
        _v=${_v#"${_v%%[!0]*}"}
        _v=${_v:-0}
        return 0
        ;;
    esac
    _unread=$((_unread + 1))
    [ "$_tries" -lt "$UPDATE_READ_TRIES" ] ||
      { give_up read "the counter held no whole number $UPDATE_READ_TRIES times in a row"; return 1; }
    _tries=$((_tries + 1))
  done
}

# update_lock: takes the lock by `set -C; : > lock`, retrying after `sleep 0.001` while it
# exists (lock_waits), at most UPDATE_LOCK_TRIES times.
update_lock() {
  _tries=0
  while :; do
    excl_create "$RLOCK" "$TOK" && break
    taken_or_fail lock $? || return 1
    _waits=$((_waits + 1))
    [ "$_tries" -lt "$UPDATE_LOCK_TRIES" ] ||
      { give_up lock "the lock stayed taken for $UPDATE_LOCK_TRIES tries of sleep 0.001"; return 1; }
    _tries=$((_tries + 1))
    sleep 0.001
  done
}

r_update() {
  _n=0 _unread=0 _waits=0 _i=0
  while [ "$_i" -lt "$RINC" ]; do
    _i=$((_i + 1))
    if [ "$UM" = append-line ]; then
      { printf '1\n' >> "$RCNT"; } 2>|"$E" || { fail_step append sh $?; break; }
      _n=$((_n + 1))
      continue
    fi
    case $UM in locked-*) update_lock || break ;; esac
    update_read || break
    _v=$((_v + 1))
    case $UM in
      *temp-rename)
        excl_create "$RTMP" "$_v
" || { fail_step write sh $?; break; }
        mv -f -- "$RTMP" "$RCNT" 2>|"$E" 1>&2 || { fail_step rename mv $?; break; }
        ;;
      *)
        { printf '%s\n' "$_v" > "$RCNT"; } 2>|"$E" || { fail_step write sh $?; break; }
        ;;
    esac
    _n=$((_n + 1))
    case $UM in locked-*) rm -- "$RLOCK" 2>|"$E" 1>&2 || { fail_step unlock rm $?; break; } ;; esac
  done
  CJ="\"increments\":$_n,\"unreadable_reads\":$_unread,\"lock_waits\":$_waits"
}

# ---- ledger: ledger.key-first, ledger.check-process-append, ledger.check-process-create ------

# The effect: the token into params.effect, created with `set -C` (O_EXCL).
ledger_effect() {
  excl_create "$REFF" "$TOK" || { fail_step effect sh $?; return 1; }
  _processed=1
}

r_ledger() {
  _processed=0 _skipped=0 _refused=0
  _kf=$RLEDGER/$RKEY
  case $LM in
    key-first)
      # the key first, created with set -C: EEXIST means another worker has it
      if excl_create "$_kf" "$TOK"; then
        ledger_effect
      else
        taken_or_fail record $? && _skipped=1
      fi
      ;;
    check-process-append)
      # the key on a line of the list (read with `read`): skip; else the effect, then append
      _found=
      if [ -e "$RLIST" ]; then
        while IFS= read -r _l || [ -n "$_l" ]; do
          [ "$_l" = "$RKEY" ] && _found=1
        done < "$RLIST"
      fi
      if [ -n "$_found" ]; then
        _skipped=1
      elif ledger_effect; then
        { printf '%s\n' "$RKEY" >> "$RLIST"; } 2>|"$E" || fail_step record sh $?
      fi
      ;;
    check-process-create)
      # `[ -e key ]`: skip; else the effect, then the key with set -C (EEXIST: refused)
      if [ -e "$_kf" ]; then
        _skipped=1
      elif ledger_effect; then
        excl_create "$_kf" "$TOK" || { taken_or_fail record $? && _refused=1; }
      fi
      ;;
  esac
  CJ="\"processed\":$_processed,\"skipped\":$_skipped,\"record_refused\":$_refused"
}

# ---- the recipe's run ------------------------------------------------------------------------

# What needs a clock or timed writes has no faithful form here: dash reads no clock without
# starting a process (`date`), which would move every step it times.
NOCLOCK="a POSIX shell reads no clock finer than a second without starting a process (date +%s%N), and a sleep is a process too"

recipe_main() {
  RL= CM= UM= LM=
  case $RCP in
    publish.direct) RL=r_pub_direct ;;
    publish.temp-rename | publish.temp-rename-cross-volume) RL=r_pub_temp ;;
    read.poll) RL=r_read_poll ;;
    claim.list-then-open) RL=r_claim CM=list ;;
    claim.rename-claim) RL=r_claim CM=rename ;;
    claim.exclusive-marker) RL=r_claim CM=marker ;;
    update.read-modify-write | update.temp-rename | update.append-line | update.locked-read-modify-write | update.locked-temp-rename)
      RL=r_update UM=${RCP#update.} ;;
    ledger.key-first | ledger.check-process-append | ledger.check-process-create)
      RL=r_ledger LM=${RCP#ledger.} ;;
    done.* | consume.poll)
      unsupported "the done-marker recipes write in timed 4 KiB writes and their consumers time the file's stability in ms: $NOCLOCK" ;;
    lease.* | holder.*)
      unsupported "a lease records and compares times in ms: $NOCLOCK" ;;
    mutex.*)
      unsupported "a mutex contender logs its enter and leave times in ms and holds the lock for given ms: $NOCLOCK" ;;
    *) unsupported "unknown recipe" ;;
  esac
  [ -n "$T" ] || unsupported "CONFORMANCE_TARGET is empty"
  [ -n "$Q" ] || unsupported "this probe was started without a recipe folder (CONFORMANCE_RECIPE_DIR is empty)"
  case $RL in
    r_pub_direct | r_pub_temp) [ -f "$Q/content" ] || unsupported "the harness gave no content file" ;;
    r_read_poll) [ -d "$Q/reads" ] || unsupported "the harness made no reads folder" ;;
    r_claim)
      { [ -n "$RIN" ] && [ -n "$ROUT" ]; } || unsupported "claim workers need params.incoming and params.output"
      [ "$CM" != rename ] || [ -n "$RPROC" ] || unsupported "claim.rename-claim needs params.processing" ;;
    r_update)
      case $RINC in '' | *[!0-9]*) unsupported "an update worker needs params.increments, a whole number" ;; esac
      { [ -n "$RCNT" ] && [ -n "$RLOCK" ] && [ -n "$RTMP" ]; } ||
        unsupported "an update worker needs params.counter, params.lock and params.temp" ;;
    r_ledger)
      { [ -n "$RKEY" ] && [ -n "$REFF" ] && [ -n "$RLEDGER" ] && [ -n "$RLIST" ]; } ||
        unsupported "a ledger worker needs params.key, params.effect, params.ledger and params.list" ;;
  esac
  [ "$RL" != r_pub_temp ] || [ -n "$RTMP" ] || unsupported "publish.temp-rename needs params.temp"
  case $RL in r_pub_direct | r_ledger) [ -n "$TOK" ] || unsupported "CONFORMANCE_TOKEN is empty" ;; esac
  for _tool in cat mv rm; do
    command -v "$_tool" >/dev/null 2>&1 || unsupported "$_tool is not on PATH"
  done
  { : >|"$E"; } 2>/dev/null || unsupported "cannot write the output file in TMPDIR"

  ready_then_release 2 "recipe not run"

  $RL

  if [ -n "$STEP" ]; then
    errno_name "$SMSG"
    [ -n "$CODE" ] || errno_name "${SLAST-}"
    json_escape "$SMSG"
    if [ -n "$CODE" ]; then _cj="\"$CODE\""; else _cj=null; fi
    json_escape "$SMSG"
    printf '{"type":"result","ok":false,"errorlevel":%s,"error":{"type":"%s","code":%s,"errno":null,"hresult":null,"message":"%s"},"step":"%s","counters":{%s}}\n' \
      "$ST" "$STOOL" "$_cj" "$J" "$STEP" "$CJ"
  else
    printf '{"type":"result","ok":true,"errorlevel":0,"error":null,"step":null,"counters":{%s}}\n' "$CJ"
  fi
  rm -f -- "$E" 2>/dev/null
  exit 0
}
