#!/bin/bash
# CPU starvation without a hog (issue 16): stop the command with SIGSTOP for OFF ms, let it run
# for ON ms, until it ends; the first 3 s (imports) run free. Example, a tenth of a core:
#   benchmarks/starve.sh 100 900 -- .venv/bin/python -m benchmarks.colgen_phases tarragona 10 60
# usage: starve.sh DUTY_ON_MS DUTY_OFF_MS -- cmd...   (SIGSTOP/SIGCONT the child: a fraction of a core)
on=$1; off=$2; shift 3
"$@" & pid=$!
sleep 3  # imports and data loading at full speed
while kill -0 $pid 2>/dev/null; do
  kill -STOP $pid 2>/dev/null; sleep $(echo "$off/1000" | bc -l); kill -CONT $pid 2>/dev/null; sleep $(echo "$on/1000" | bc -l)
done
wait $pid
