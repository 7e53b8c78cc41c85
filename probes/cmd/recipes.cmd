@echo off
rem conformance: the hand-off recipes of cmd.exe (protocol 2, ../PROTOCOL.md, "Recipes";
rem README.md, "Recipes"). Called by loop.cmd with the label as %1, delayed expansion on,
rem after the release; in: T (target), Q (loop folder), TOK (token), RTMP, RIN, RPROC, ROUT,
rem RM, and for update and ledger RU, RCNT, RINC, RKEY, REFF, RLIST; out: EL (errorlevel of
rem the failed step, else 0), STEP (the failed step, empty on success), CJ (counters, a JSON
rem object's members). Labels come first: Wine finds a goto label by reading the file line by
rem line from its start; :update_read, called once per increment, first of all.
goto %~1

:update_read
set "N="
:update_read_again
if not exist "!RCNT!" (
  set "EL=1"
  set "UX=1"
  exit /b 0
)
set "V="
set /a NL=0
for /f "usebackq delims=" %%a in ("%RCNT%") do (
  set "V=%%a"
  set /a NL+=1
)
set "M="
set /a M=V 2>nul
if "!NL!"=="1" (if "!M!"=="!V!" (set "N=!V!"))
if defined N (exit /b 0)
set /a UR+=1, TRY+=1
if !TRY! gtr 1000 (
  set "EL=1"
  set "UX=1"
  exit /b 0
)
goto update_read_again

:pub_direct
set "EL=0"
set "STEP=write"
(call )
copy /b "!Q!\content" "!T!" 1>&2
set "EL=!errorlevel!"
if not "!EL!"=="0" (exit /b 0)
set "STEP="
exit /b 0

:pub_temp
set "EL=0"
set "STEP=write"
(call )
copy /b "!Q!\content" "!RTMP!" 1>&2
set "EL=!errorlevel!"
if not "!EL!"=="0" (goto pub_temp_fail)
set "STEP=rename"
(call )
move /Y "!RTMP!" "!T!" 1>&2
set "EL=!errorlevel!"
if "!EL!"=="0" (if exist "!RTMP!" (set "EL=1"))
if not "!EL!"=="0" (goto pub_temp_fail)
set "STEP="
exit /b 0
:pub_temp_fail
if exist "!RTMP!" (del "!RTMP!" 1>&2)
exit /b 0

:read_poll
set /a RD=0, AB=0, ER=0
:read_next
set "LAST="
if exist "!Q!\stop" (set "LAST=1")
set /a RD+=1
if exist "!T!" (
  (call )
  copy /b "!T!" "!Q!\reads\!RD!" >nul 2>&1
  if errorlevel 1 (
    set /a ER+=1
    if exist "!Q!\reads\!RD!" (del "!Q!\reads\!RD!")
  )
) else (
  set /a AB+=1
)
if not defined LAST (goto read_next)
set "EL=0"
set "STEP="
set "CJ="reads":!RD!,"absent":!AB!,"errors":!ER!"
exit /b 0

:claim
set /a RN=0, LS=0, CLM=0, CF=0, DF=0, PRC=0, IDLE=0
set "EL=0"
set "STEP=output"
(call )
>>"!ROUT!" type nul
if not exist "!ROUT!" (set "EL=1")
if not "!EL!"=="0" (goto claim_end)
set "STEP="
:claim_round
set /a RN+=1
set "ANY="
set "PROG="
(call )
pushd "!RIN!" 1>&2
if errorlevel 1 (
  set "EL=1"
  set "STEP=list"
  goto claim_end
)
for %%f in (*) do (
  if /i not "%%~xf"==".claim" (
    set "ANY=1"
    set /a LS+=1
    set "NM=%%~nxf"
    set "OWN="
    set "AT=!RIN!\!NM!"
    if "!RM!"=="list" (set "OWN=1")
    if "!RM!"=="rename" (
      set "AT=!RPROC!\!NM!"
      move "!RIN!\!NM!" "!AT!" >nul 2>&1
      if exist "!AT!" (set "OWN=1")
    )
    if "!RM!"=="marker" (
      (call )
      mkdir "!RIN!\!NM!.claim" >nul 2>&1
      if not errorlevel 1 (set "OWN=1")
    )
    set "GOT="
    if defined OWN (
      (call )
      >>"!ROUT!" type "!AT!" 2>nul
      if not errorlevel 1 (set "GOT=1")
    )
    if defined GOT (
      set /a CLM+=1
      >>"!ROUT!" echo.
      set /a PRC+=1
      set "PROG=1"
      del "!AT!" >nul 2>&1
      if exist "!AT!" (set /a DF+=1)
    ) else (
      set /a CF+=1
    )
  )
)
popd
if not defined ANY (goto claim_end)
if defined PROG (set /a IDLE=0) else (set /a IDLE+=1)
if !IDLE! geq 2000 (
  set "EL=0"
  set "STEP=stuck"
  goto claim_end
)
goto claim_round
:claim_end
set "CJ="rounds":!RN!,"listed":!LS!,"claimed":!CLM!,"claim_failed":!CF!,"delete_failed":!DF!,"processed":!PRC!"
exit /b 0

:update
rem One update worker (RU: rmw, temp, append) adding 1 to the counter RCNT, RINC times, in
rem one for /l block (parsed once, run from memory; Wine's rules of loop.cmd: no rem inside,
rem every if brackets its command; Wine 8 expands no !VAR! in a for /l range, so %RINC%).
rem A read is :update_read (above): for /f of the counter's lines, which Wine 8 cannot do
rem inside a block (a for /f over an empty file there skips the rest of the block, measured),
rem its file named by %-expansion (Wine's for /f expands neither !VAR! nor a for variable in
rem its file set; the harness sends no such path holding ! or %). A whole value is one line
rem that set /a reads back as itself; anything else is read again, up to 1,000 times more,
rem as the session probes do (a missing counter fails the step at once, as ENOENT does).
set /a INC=0, UR=0
set "EL=0"
set "STEP="
set "UX="
for /l %%i in (1,1,%RINC%) do (
  if not defined UX (
    if "!RU!"=="append" (
      set "STEP=append"
      >>"!RCNT!" echo 1
      set /a INC+=1
      set "STEP="
    ) else (
      set "STEP=read"
      set /a TRY=0
      call :update_read
      if defined N (
        set /a N+=1
        if "!RU!"=="temp" (
          set "STEP=write"
          >"!RTMP!" echo !N!
          if exist "!RTMP!" (
            set "STEP=rename"
            (call )
            move /Y "!RTMP!" "!RCNT!" 1>&2
            set "EL=!errorlevel!"
            if "!EL!"=="0" (if exist "!RTMP!" (set "EL=1"))
            if "!EL!"=="0" (set /a INC+=1) else (set "UX=1")
          ) else (
            set "EL=1"
            set "UX=1"
          )
        ) else (
          set "STEP=write"
          >"!RCNT!" echo !N!
          set /a INC+=1
        )
      )
      if not defined UX (set "STEP=")
    )
  )
)
set "CJ="increments":!INC!,"unreadable_reads":!UR!,"lock_waits":0"
exit /b 0

:ledger_append
rem ledger.check-process-append: read the processed list RLIST (absent: empty; for /f takes
rem its lines, CR LF or LF; it is the if block's last command, as a for /f over an empty file
rem skips the rest of its block under Wine 8); the key RKEY on a line: skip; else the side
rem effect, the token in this worker's own file REFF (set /p with a prompt writes it without
rem a line end, as the harness reads it), then append the key and CR LF to the list.
set /a PRC=0, SKP=0
set "EL=0"
set "STEP=check"
set "SEEN="
if exist "!RLIST!" (
  for /f "usebackq delims=" %%l in ("%RLIST%") do (if "%%l"=="!RKEY!" (set "SEEN=1"))
)
if defined SEEN (
  set /a SKP=1
  set "STEP="
  goto ledger_end
)
set "STEP=effect"
<nul set /p "=!TOK!" >"!REFF!"
if not exist "!REFF!" (
  set "EL=1"
  goto ledger_end
)
set /a PRC=1
set "STEP=record"
(call )
>>"!RLIST!" echo !RKEY!
set "EL=!errorlevel!"
if not "!EL!"=="0" (goto ledger_end)
set "STEP="
:ledger_end
set "CJ="processed":!PRC!,"skipped":!SKP!,"record_refused":0"
exit /b 0
