#!/usr/bin/env bash
# Starts parallel_check as 2 ranks (torchrun's variables, a free port) and passes on rank 0's
# report; fails when any rank fails. Rank 1 starts first: it waits for rank 0's store to listen.
# Usage: gradient_check.sh DIST_CHECK
set -uo pipefail
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pids=()
for rank in 1 0; do
  [ "$rank" = 0 ] && sleep 0.3
  RANK=$rank WORLD_SIZE=2 LOCAL_RANK=$rank LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$1" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status
