@echo off
rem conformance probe for cmd.exe, loop mode: described after the subroutine, which
rem comes first because Wine finds a `call` label by reading from the file's start.
goto main
rem ---------------------------------------------------------------------------------
rem Only where delayed expansion re-expands the value it inserted (RESCAN, Wine up to
rem 9.x): sets UNSAFE unless the raw values hold neither '!' nor '%'. Same two tests as
rem probe.cmd's :rescan_checks (with the start-up checks of :main, the only
rem %CONFORMANCE_...% expansions here, to look, never to run anything): 1. "%x%%x%" equals "!x!!x!"; 2. "%x:!=%" equals "%x%" with delayed
rem expansion off, failing closed. Called only for a request the harness marked with a
rem `suspect` file (some value holds '!' or '%'): each line here is a file read for Wine.
:rescan_checks
set "UNSAFE="
if not "%CONFORMANCE_TARGET%%CONFORMANCE_TARGET%"=="!CONFORMANCE_TARGET!!CONFORMANCE_TARGET!" set "UNSAFE=1"
if not "%CONFORMANCE_SOURCE%%CONFORMANCE_SOURCE%"=="!CONFORMANCE_SOURCE!!CONFORMANCE_SOURCE!" set "UNSAFE=1"
if not "%CONFORMANCE_TOKEN%%CONFORMANCE_TOKEN%"=="!CONFORMANCE_TOKEN!!CONFORMANCE_TOKEN!" set "UNSAFE=1"
if not "%CONFORMANCE_MARK%%CONFORMANCE_MARK%"=="!CONFORMANCE_MARK!!CONFORMANCE_MARK!" set "UNSAFE=1"
if defined UNSAFE exit /b 0
setlocal DisableDelayedExpansion
set "_u="
if not defined CONFORMANCE_TARGET goto rescan_s
set "_u=1"
if "%CONFORMANCE_TARGET:!=%"=="%CONFORMANCE_TARGET%" set "_u="
if defined _u goto rescan_end
:rescan_s
if not defined CONFORMANCE_SOURCE goto rescan_tok
set "_u=1"
if "%CONFORMANCE_SOURCE:!=%"=="%CONFORMANCE_SOURCE%" set "_u="
if defined _u goto rescan_end
:rescan_tok
if not defined CONFORMANCE_TOKEN goto rescan_m
set "_u=1"
if "%CONFORMANCE_TOKEN:!=%"=="%CONFORMANCE_TOKEN%" set "_u="
if defined _u goto rescan_end
:rescan_m
if not defined CONFORMANCE_MARK goto rescan_end
set "_u=1"
if "%CONFORMANCE_MARK:!=%"=="%CONFORMANCE_MARK%" set "_u="
:rescan_end
endlocal & set "UNSAFE=%_u%"
exit /b 0

rem ---------------------------------------------------------------------------------
rem A recipe's request (protocol 2): sets WHY when this loop cannot run it. RCP is the
rem recipe, RL the label of recipes.cmd that runs it (empty: none), RM a claim method, RU an
rem update method. The recipes listed in the hello that have no faithful cmd form are
rem answered here with the reason (README.md, Recipes).
:recipe_checks
set "_d=cmd cannot write a file in timed 4 KiB writes (copy and type write it in one go, in 64 KiB buffers under Wine) and has no clock finer than a second for the consumer (TIME has no seconds under Wine), so the done-marker recipes have no faithful cmd form"
if "!RCP!"=="done.marker-after-data" (set "WHY=!_d!")
if "!RCP!"=="done.marker-before-data" (set "WHY=!_d!")
if "!RCP!"=="done.size-stable" (set "WHY=!_d!")
if "!RCP!"=="done.mtime-stable" (set "WHY=!_d!")
if "!RCP!"=="consume.poll" (set "WHY=!_d!")
set "_d=cmd has no exclusive create of a file: copy and a redirection overwrite an existing file (copy /-Y asks first), and if not exist is a check before the create, not one call; its one exclusive create, mkdir, makes a directory, which is another recipe (as lease.dir-mtime is beside the file leases), so a recipe whose shared file (the ledger key, the update lock) is created 'wx' has no faithful cmd form"
if "!RCP!"=="ledger.key-first" (set "WHY=!_d!")
if "!RCP!"=="ledger.check-process-create" (set "WHY=!_d!")
if "!RCP!"=="update.locked-read-modify-write" (set "WHY=!_d!")
if "!RCP!"=="update.locked-temp-rename" (set "WHY=!_d!")
set "_d=a lease holder needs the time in ms, which cmd cannot read (TIME has no seconds under Wine, set /a is 32-bit): its renewal writes expiresAt in ms since the epoch, and the trial's taker, lease.expires-delete-create of the same runtime, compares expiresAt with the time; its work (params.work_ms, milliseconds) needs a sleep below a second, which cmd has not either (Wine 8 has no timeout command; ping -n waits a second per echo), so the holder recipes have no faithful cmd form"
if "!RCP!"=="holder.no-check" (set "WHY=!_d!")
if "!RCP!"=="holder.renew-blind" (set "WHY=!_d!")
if "!RCP!"=="holder.check-owner" (set "WHY=!_d!")
set "_d="
if defined WHY (exit /b 0)
if not defined RL (set "WHY=unknown recipe")
if defined WHY (exit /b 0)
if not defined RCMD (set "WHY=this loop runs without recipes.cmd (CONFORMANCE_RECIPES is empty)")
if defined WHY (exit /b 0)
if not exist "!RCMD!" (set "WHY=recipes.cmd is missing beside loop.cmd")
if defined WHY (exit /b 0)
if "!RL!"=="pub_direct" (if not exist "!Q!\content" (set "WHY=the harness gave no content file"))
if "!RL!"=="pub_temp" (if not exist "!Q!\content" (set "WHY=the harness gave no content file"))
if "!RL!"=="pub_temp" (if not defined RTMP (set "WHY=publish.temp-rename needs params.temp"))
if "!RL!"=="read_poll" (if not exist "!Q!\reads\" (set "WHY=the harness made no reads folder"))
if "!RL!"=="claim" (if not defined RIN (set "WHY=claim workers need params.incoming and params.output"))
if "!RL!"=="claim" (if not defined ROUT (set "WHY=claim workers need params.incoming and params.output"))
if "!RM!"=="rename" (if not defined RPROC (set "WHY=claim.rename-claim needs params.processing"))
if "!RL!"=="update" (if not defined RCNT (set "WHY=an update worker needs params.counter and params.increments"))
if "!RL!"=="update" (if not defined RINC (set "WHY=an update worker needs params.counter and params.increments"))
if "!RU!"=="temp" (if not defined RTMP (set "WHY=update.temp-rename needs params.temp"))
if "!RL!"=="ledger_append" (if not defined RKEY (set "WHY=a ledger worker needs params.key, params.effect and params.list"))
if "!RL!"=="ledger_append" (if not defined REFF (set "WHY=a ledger worker needs params.key, params.effect and params.list"))
if "!RL!"=="ledger_append" (if not defined RLIST (set "WHY=a ledger worker needs params.key, params.effect and params.list"))
exit /b 0

rem conformance probe for cmd.exe, LOOP mode (protocol 1; see ../PROTOCOL.md, "Loop mode"):
rem one cmd process answers many attempts. probe.cmd beside it is the one-shot mode; both
rem make the same calls with the same command lines (a harness test compares them).
rem
rem Per attempt the harness writes the values into files of the loop folder
rem (CONFORMANCE_LOOP_DIR, relative to the working folder), one value per file, and sends
rem `prepare` on stdin; the probe reads each file with set /p into the CONFORMANCE_*
rem variable of the same name (set /p stores what it reads without expanding it), answers
rem ready, waits for `go ID` on stdin, makes the call, answers result. Values are used only
rem through delayed expansion (!VAR!), which does not re-parse & % ^ ( ) ! inside an
rem expanded value on Windows; under Wine :rescan_checks (above) refuses the values it
rem would damage. Stdout carries only protocol lines; the command's own stdout and stderr
rem go to stderr (1>&2).
rem
rem The attempt loop is ONE parenthesised block (a `for /l` body): cmd parses it once and
rem runs it from memory. Wine's cmd reads a batch file one line per read and looks a goto
rem label up by reading line after line, each read a round trip to the wine server:
rem measured here, the same loop written with goto took about 100 ms from prepare to ready
rem and 20 ms from go to result on a busy machine (load 5 on 2 cores), a block about
rem 1 ms each. Inside the
rem block Wine's `goto` and `exit /b` only skip the rest of one pass (measured), so the
rem loop ends with `exit N`, which ends the process; subroutines (`call :name`, a label
rem Wine finds by reading the file from its start) sit at the top, and only the prepare
rem step calls them, and only when needed.
rem ---------------------------------------------------------------------------------
:main
setlocal EnableExtensions DisableDelayedExpansion
set "_w=!_x!"
setlocal EnableDelayedExpansion
rem A preset COPYCMD=/Y or /-Y would change the defaults of move and copy.
set "COPYCMD="

rem Feature checks, as in probe.cmd (behaviour, not "is this Wine"): ORBROKEN (`a || b`
rem runs b even when a succeeded), RESCAN (delayed expansion re-expands !...! found
rem inside an inserted value).
set "ORBROKEN="
(call ) || set "ORBROKEN=1"
set "RESCAN="
set "_x=1"
set "_y=!_w!"
if "!_y!"=="1" set "RESCAN=1"
set "_x=" & set "_y=" & set "_w="

rem The environment, fixed for the process's life:
rem  CONFORMANCE_LOOP_DIR  the loop folder, relative to the working folder (ASCII)
rem  CONFORMANCE_ROOT      the working folder as an absolute path: a path the harness sends
rem                        relative to it comes with a NAME.root file and is joined to it
rem                        here (non-ASCII text reaches cmd only this way: set /p decodes a
rem                        file in the console code page, the environment in full Unicode)
rem  CONFORMANCE_CLOCK     a file to read right before and after the call, or empty: what
rem                        was read goes, unparsed, into t0 and t1 of the loop folder
rem  CONFORMANCE_RECIPES   recipes.cmd (the hand-off recipes, protocol 2), or empty: no
rem                        recipes (each is then unsupported)
set "Q=!CONFORMANCE_LOOP_DIR!"
set "RCMD=!CONFORMANCE_RECIPES!"
set "CLOCK=!CONFORMANCE_CLOCK!"
set "ROOT=!CONFORMANCE_ROOT!"
set "ROOTBAD="
if not defined Q (
  >&2 echo probe: CONFORMANCE_LOOP_DIR is empty
  exit 4
)
if not defined RESCAN goto checked
rem Under RESCAN the loop folder and the clock path must be clean, or the loop does not
rem start (the harness then uses probe.cmd, one process per attempt); a root holding '!'
rem or '%' only makes attempts with paths relative to it unsupported.
if not "%CONFORMANCE_LOOP_DIR%%CONFORMANCE_LOOP_DIR%"=="!CONFORMANCE_LOOP_DIR!!CONFORMANCE_LOOP_DIR!" goto unclean
if not "%CONFORMANCE_CLOCK%%CONFORMANCE_CLOCK%"=="!CONFORMANCE_CLOCK!!CONFORMANCE_CLOCK!" goto unclean
if not "%CONFORMANCE_ROOT%%CONFORMANCE_ROOT%"=="!CONFORMANCE_ROOT!!CONFORMANCE_ROOT!" set "ROOTBAD=1"
setlocal DisableDelayedExpansion
set "_u=2"
if "%CONFORMANCE_LOOP_DIR:!=%"=="%CONFORMANCE_LOOP_DIR%" set "_u="
if defined _u goto checks_end
if not defined CONFORMANCE_CLOCK goto checks_root
set "_u=2"
if "%CONFORMANCE_CLOCK:!=%"=="%CONFORMANCE_CLOCK%" set "_u="
if defined _u goto checks_end
:checks_root
if not defined CONFORMANCE_ROOT goto checks_end
set "_u=1"
if "%CONFORMANCE_ROOT:!=%"=="%CONFORMANCE_ROOT%" set "_u="
:checks_end
endlocal & set "_u=%_u%"
if "!_u!"=="2" goto unclean
if "!_u!"=="1" set "ROOTBAD=1"
set "_u="
goto checked
:unclean
>&2 echo probe: the loop folder or clock path holds an exclamation mark or a percent sign, which this cmd.exe re-expands
exit 4
:checked

rem The hello proves the request channel: it quotes the check file the harness wrote.
set "_h="
set /p "_h=" <"!Q!\check"
echo {"protocol":2,"type":"hello","probe":"cmd","families":["cmd"],"mode":"loop","check":"!_h!","recipes":["publish.direct","publish.temp-rename","publish.temp-rename-cross-volume","read.poll","claim.list-then-open","claim.rename-claim","claim.exclusive-marker","done.marker-after-data","done.marker-before-data","done.size-stable","done.mtime-stable","consume.poll","holder.no-check","holder.renew-blind","holder.check-owner","ledger.key-first","ledger.check-process-append","ledger.check-process-create","update.read-modify-write","update.locked-read-modify-write","update.temp-rename","update.locked-temp-rename","update.append-line"]}
set "_h="

rem One pass per attempt. Stdin lines are signals only (`prepare`, `go ID`, `quit`); the
rem harness writes each after the answer to the one before, because Wine's set /p takes a
rem whole pipe read. End of input or `quit` ends the process (status 0), any other line
rem in the wrong place too (status 3). A pass:
rem  1. reads the request files (id, variant, target, source, token, mark, and for ren
rem     `name`, the target's last path component, as ren wants a bare new name); a path
rem     with a NAME.root marker is joined to the root (not with ROOTBAD: Wine would damage
rem     it, and the attempt is refused as in step 3);
rem  2. the variant table, as in probe.cmd: label, whether it needs a source, whether it
rem     writes the token;
rem  3. unsupported attempts, in probe.cmd's order: the reason (WHY) goes into the ready
rem     line and the loop waits for the next prepare. The re-expansion checks run only
rem     under RESCAN, for a request with a `suspect` file;
rem  4. ready, then the release: one line, `go ID` (later input, an answer to a
rem     confirmation prompt, is left for the command itself);
rem  5. the call, per variant as in probe.cmd: T0 and a read of the clock file, the call
rem     with `|| set "F=!errorlevel!"` (F = errorlevel at a failure), the errorlevel, the
rem     clock again, T1. The anti-pattern checks with `if not exist`, then creates
rem     (nothing holds the name between the two); when the check finds the name: failure,
rem     errorlevel 1, nothing written;
rem  6. ok and errorlevel as probe.cmd's :judge, the mark file as its :mark;
rem  7. the clock readings, unparsed, into t0 and t1 of the loop folder, the end of this
rem     attempt's stderr marked for the harness (`probe: end of attempt ID`), the result.
rem Inside the block, for Wine 8's parser (each measured; each broke the block, ending
rem the pass early or running its tail once after the loop): no `rem` line; every `if`
rem brackets its command, `if COND (cmd)` (an unbracketed `if` followed by a line that
rem opens an `if ... (` block broke it); input redirections come first
rem (`<"file" set /p "V="`, a trailing `<"file"` after an `if` broke it).
for /l %%n in (1,1,2147483647) do (
  set "REL="
  set /p "REL="
  if not defined REL (exit 0)
  if "!REL!"=="quit" (exit 0)
  if not "!REL!"=="prepare" (
    >&2 echo probe: expected prepare or quit, got another line; stopping
    exit 3
  )
  for %%v in (ID CONFORMANCE_VARIANT CONFORMANCE_TARGET CONFORMANCE_SOURCE CONFORMANCE_TOKEN CONFORMANCE_MARK TNAME RCP RL RM RU RTMP RIN RPROC ROUT RCNT REFF RLIST RKEY RINC CJ STEP) do set "%%v="
  <"!Q!\id" set /p "ID="
  <"!Q!\variant" set /p "CONFORMANCE_VARIANT="
  <"!Q!\target" set /p "CONFORMANCE_TARGET="
  if exist "!Q!\source" (<"!Q!\source" set /p "CONFORMANCE_SOURCE=")
  if exist "!Q!\token" (<"!Q!\token" set /p "CONFORMANCE_TOKEN=")
  if exist "!Q!\mark" (<"!Q!\mark" set /p "CONFORMANCE_MARK=")
  if exist "!Q!\recipe" (<"!Q!\recipe" set /p "RCP=")
  if exist "!Q!\temp" (<"!Q!\temp" set /p "RTMP=")
  if exist "!Q!\incoming" (<"!Q!\incoming" set /p "RIN=")
  if exist "!Q!\processing" (<"!Q!\processing" set /p "RPROC=")
  if exist "!Q!\output" (<"!Q!\output" set /p "ROUT=")
  if exist "!Q!\counter" (<"!Q!\counter" set /p "RCNT=")
  if exist "!Q!\effect" (<"!Q!\effect" set /p "REFF=")
  if exist "!Q!\list" (<"!Q!\list" set /p "RLIST=")
  if exist "!Q!\key" (<"!Q!\key" set /p "RKEY=")
  if exist "!Q!\increments" (<"!Q!\increments" set /p "RINC=")
  set "_r="
  if exist "!Q!\target.root" (set "_r=1")
  if exist "!Q!\source.root" (set "_r=1")
  if exist "!Q!\mark.root" (set "_r=1")
  for %%v in (temp incoming processing output counter effect list) do (if exist "!Q!\%%v.root" (set "_r=1"))
  if not defined ROOTBAD (
    if exist "!Q!\target.root" (set "CONFORMANCE_TARGET=!ROOT!!CONFORMANCE_TARGET!")
    if exist "!Q!\source.root" (set "CONFORMANCE_SOURCE=!ROOT!!CONFORMANCE_SOURCE!")
    if exist "!Q!\mark.root" (set "CONFORMANCE_MARK=!ROOT!!CONFORMANCE_MARK!")
    if exist "!Q!\temp.root" (set "RTMP=!ROOT!!RTMP!")
    if exist "!Q!\incoming.root" (set "RIN=!ROOT!!RIN!")
    if exist "!Q!\processing.root" (set "RPROC=!ROOT!!RPROC!")
    if exist "!Q!\output.root" (set "ROUT=!ROOT!!ROUT!")
    if exist "!Q!\counter.root" (set "RCNT=!ROOT!!RCNT!")
    if exist "!Q!\effect.root" (set "REFF=!ROOT!!REFF!")
    if exist "!Q!\list.root" (set "RLIST=!ROOT!!RLIST!")
  )
  set "V=!CONFORMANCE_VARIANT!"
  set "T=!CONFORMANCE_TARGET!"
  set "S=!CONFORMANCE_SOURCE!"
  set "TOK=!CONFORMANCE_TOKEN!"
  set "M=!CONFORMANCE_MARK!"
  set "L="
  set "NEEDS="
  set "NEEDTOK="
  if "!V!"=="cmd.mkdir" (set "L=mkdir")
  if "!V!"=="cmd.ren" (set "L=ren")
  if "!V!"=="cmd.move" (set "L=move")
  if "!V!"=="cmd.move.Y" (set "L=moveY")
  if "!V!"=="cmd.move.-Y" (set "L=moveNY")
  if "!V!"=="cmd.copy" (set "L=copy")
  if "!V!"=="cmd.copy.-Y" (set "L=copyNY")
  if "!V!"=="cmd.redirect" (set "L=redirect")
  if "!V!"=="cmd.if-not-exist+redirect" (set "L=ifnotexist")
  if "!V!"=="cmd.if-not-exist+move" (set "L=ifnotexistmove")
  if defined RCP (set "L=recipe")
  if "!RCP!"=="publish.direct" (set "RL=pub_direct")
  if "!RCP!"=="publish.temp-rename" (set "RL=pub_temp")
  if "!RCP!"=="publish.temp-rename-cross-volume" (set "RL=pub_temp")
  if "!RCP!"=="read.poll" (set "RL=read_poll")
  if "!RCP!"=="claim.list-then-open" (set "RM=list")
  if "!RCP!"=="claim.rename-claim" (set "RM=rename")
  if "!RCP!"=="claim.exclusive-marker" (set "RM=marker")
  if defined RM (set "RL=claim")
  if "!RCP!"=="update.read-modify-write" (set "RU=rmw")
  if "!RCP!"=="update.temp-rename" (set "RU=temp")
  if "!RCP!"=="update.append-line" (set "RU=append")
  if defined RU (set "RL=update")
  if "!RCP!"=="ledger.check-process-append" (set "RL=ledger_append")
  if "!L!"=="ren" (set "NEEDS=1")
  if "!L!"=="move" (set "NEEDS=1")
  if "!L!"=="moveY" (set "NEEDS=1")
  if "!L!"=="moveNY" (set "NEEDS=1")
  if "!L!"=="copy" (set "NEEDS=1")
  if "!L!"=="copyNY" (set "NEEDS=1")
  if "!L!"=="ifnotexistmove" (set "NEEDS=1")
  if "!L!"=="redirect" (set "NEEDTOK=1")
  if "!L!"=="ifnotexist" (set "NEEDTOK=1")
  if defined M (set "NEEDTOK=1")
  set "WHY="
  if not defined L (set "WHY=unknown variant")
  if not defined WHY (if not defined T (set "WHY=CONFORMANCE_TARGET is empty or has no file name"))
  if not defined WHY (if defined NEEDS (if not defined S (set "WHY=CONFORMANCE_SOURCE is empty")))
  if not defined WHY (if defined NEEDTOK (if not defined TOK (set "WHY=CONFORMANCE_TOKEN is empty")))
  set "UNSAFE="
  if not defined WHY (if defined _r (if defined ROOTBAD (set "UNSAFE=1")))
  if not defined WHY (if defined RESCAN (if exist "!Q!\suspect" (call :rescan_checks)))
  if not defined WHY (if defined UNSAFE (set "WHY=a path or token holds an exclamation mark or a percent sign, which this cmd.exe (Wine) re-expands inside variable values"))
  if not defined WHY (if "!L!"=="recipe" (call :recipe_checks))
  if not defined WHY (if "!L!"=="ren" (if exist "!Q!\name" (<"!Q!\name" set /p "TNAME=")))
  if not defined WHY (if "!L!"=="ren" (if not defined TNAME (set "WHY=CONFORMANCE_TARGET is empty or has no file name")))
  if defined WHY (
    >&2 echo probe: unsupported: !WHY!
    >&2 echo probe: end of attempt !ID!
    echo {"protocol":1,"type":"ready","id":!ID!,"supported":false,"reason":"!WHY!"}
  ) else (
    set "F="
    set "MARKERR="
    set "EL="
    set "T0="
    set "T1="
    set "C0="
    set "C1="
    echo {"protocol":1,"type":"ready","id":!ID!,"supported":true}
    set "REL="
    set /p "REL="
    if not "!REL!"=="go !ID!" (
      >&2 echo probe: expected go !ID!, got another line; stopping
      exit 3
    )
    (call )
    if "!L!"=="recipe" (
      set "T0=!TIME!"
      if defined CLOCK (<"!CLOCK!" set /p "C0=")
      call "!RCMD!" !RL!
      if defined CLOCK (<"!CLOCK!" set /p "C1=")
      set "T1=!TIME!"
      if defined STEP (set "F=!EL!")
    )
    if "!L!"=="mkdir" (
      set "T0=!TIME!"
      if defined CLOCK (<"!CLOCK!" set /p "C0=")
      mkdir "!T!" 1>&2 || set "F=!errorlevel!"
      set "EL=!errorlevel!"
      if defined CLOCK (<"!CLOCK!" set /p "C1=")
      set "T1=!TIME!"
    )
    if "!L!"=="ren" (
      set "T0=!TIME!"
      if defined CLOCK (<"!CLOCK!" set /p "C0=")
      ren "!S!" "!TNAME!" 1>&2 || set "F=!errorlevel!"
      set "EL=!errorlevel!"
      if defined CLOCK (<"!CLOCK!" set /p "C1=")
      set "T1=!TIME!"
    )
    if "!L!"=="move" (
      set "T0=!TIME!"
      if defined CLOCK (<"!CLOCK!" set /p "C0=")
      move "!S!" "!T!" 1>&2 || set "F=!errorlevel!"
      set "EL=!errorlevel!"
      if defined CLOCK (<"!CLOCK!" set /p "C1=")
      set "T1=!TIME!"
    )
    if "!L!"=="moveY" (
      set "T0=!TIME!"
      if defined CLOCK (<"!CLOCK!" set /p "C0=")
      move /Y "!S!" "!T!" 1>&2 || set "F=!errorlevel!"
      set "EL=!errorlevel!"
      if defined CLOCK (<"!CLOCK!" set /p "C1=")
      set "T1=!TIME!"
    )
    if "!L!"=="moveNY" (
      set "T0=!TIME!"
      if defined CLOCK (<"!CLOCK!" set /p "C0=")
      move /-Y "!S!" "!T!" 1>&2 || set "F=!errorlevel!"
      set "EL=!errorlevel!"
      if defined CLOCK (<"!CLOCK!" set /p "C1=")
      set "T1=!TIME!"
    )
    if "!L!"=="copy" (
      set "T0=!TIME!"
      if defined CLOCK (<"!CLOCK!" set /p "C0=")
      copy "!S!" "!T!" 1>&2 || set "F=!errorlevel!"
      set "EL=!errorlevel!"
      if defined CLOCK (<"!CLOCK!" set /p "C1=")
      set "T1=!TIME!"
    )
    if "!L!"=="copyNY" (
      set "T0=!TIME!"
      if defined CLOCK (<"!CLOCK!" set /p "C0=")
      copy /-Y "!S!" "!T!" 1>&2 || set "F=!errorlevel!"
      set "EL=!errorlevel!"
      if defined CLOCK (<"!CLOCK!" set /p "C1=")
      set "T1=!TIME!"
    )
    if "!L!"=="redirect" (
      set "T0=!TIME!"
      if defined CLOCK (<"!CLOCK!" set /p "C0=")
      >"!T!" echo !TOK!|| set "F=!errorlevel!"
      set "EL=!errorlevel!"
      if defined CLOCK (<"!CLOCK!" set /p "C1=")
      set "T1=!TIME!"
    )
    if "!L!"=="ifnotexist" (
      set "T0=!TIME!"
      if defined CLOCK (<"!CLOCK!" set /p "C0=")
      if not exist "!T!" (
        >"!T!" echo !TOK!|| set "F=!errorlevel!"
        set "EL=!errorlevel!"
        if defined CLOCK (<"!CLOCK!" set /p "C1=")
        set "T1=!TIME!"
      ) else (
        if defined CLOCK (<"!CLOCK!" set /p "C1=")
        set "T1=!TIME!"
        >&2 echo probe: target exists, checked with if exist
        set "F=1"
        set "EL=1"
      )
    )
    if "!L!"=="ifnotexistmove" (
      set "T0=!TIME!"
      if defined CLOCK (<"!CLOCK!" set /p "C0=")
      if not exist "!T!" (
        move /Y "!S!" "!T!" 1>&2 || set "F=!errorlevel!"
        set "EL=!errorlevel!"
        if defined CLOCK (<"!CLOCK!" set /p "C1=")
        set "T1=!TIME!"
      ) else (
        if defined CLOCK (<"!CLOCK!" set /p "C1=")
        set "T1=!TIME!"
        >&2 echo probe: target exists, checked with if exist
        set "F=1"
        set "EL=1"
      )
    )
    if "!L!"=="recipe" (set "ORB=") else (set "ORB=!ORBROKEN!")
    if defined ORB (
      set "EL=!F!"
      set "F="
      if not "!EL!"=="0" (set "F=1")
    )
    if defined F (
      set "OK=false"
      if not defined ORB (set "EL=!F!")
    ) else (
      set "OK=true"
    )
    set "DOMARK="
    if "!OK!"=="true" (if defined M (set "DOMARK=1"))
    if defined DOMARK (
      set "MF="
      (call )
      >"!M!" echo !TOK!|| set "MF=!errorlevel!"
      set "MEL=!errorlevel!"
      if defined ORBROKEN (
        set "MEL=!MF!"
        set "MF="
        if not "!MEL!"=="0" (set "MF=1")
      ) else (
        if defined MF (set "MEL=!MF!")
      )
      if not exist "!M!" (set "MF=1")
      if defined MF (
        >&2 echo probe: MarkError: could not write the mark file
        set "OK=false"
        set "MARKERR=1"
      )
    )
    >"!Q!\t0" echo !C0!
    >"!Q!\t1" echo !C1!
    >&2 echo probe: end of attempt !ID!
    set "SJ=null"
    if defined STEP (set "SJ="!STEP!"")
    if "!L!"=="recipe" (
      echo {"type":"result","id":!ID!,"ok":!OK!,"errorlevel":!EL!,"t0":"!T0!","t1":"!T1!","step":!SJ!,"counters":{!CJ!}}
    ) else (
      if defined MARKERR (
        echo {"type":"result","id":!ID!,"ok":!OK!,"errorlevel":!EL!,"t0":"!T0!","t1":"!T1!","error":{"type":"MarkError","code":null,"errno":null,"hresult":null,"errorlevel":!MEL!,"message":""}}
      ) else (
        echo {"type":"result","id":!ID!,"ok":!OK!,"errorlevel":!EL!,"t0":"!T0!","t1":"!T1!"}
      )
    )
  )
)
exit 0
