@echo off
rem conformance: the hand-off recipes of cmd.exe (protocol 2, ../PROTOCOL.md, "Recipes";
rem README.md, "Recipes"). Called by loop.cmd with the label as %1, delayed expansion on,
rem after the release; in: T (target), Q (loop folder), RTMP, RIN, RPROC, ROUT, RM; out:
rem EL (errorlevel of the failed step, else 0), STEP (the failed step, empty on success),
rem CJ (counters, a JSON object's members). Labels come first: Wine finds a goto label by
rem reading the file line by line from its start.
goto %~1

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
