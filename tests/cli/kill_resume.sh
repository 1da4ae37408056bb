#!/usr/bin/env bash
# kill -9 in the middle of `geodl train`, then --resume: neither the model file nor the
# checkpoint is damaged, the resumed run ends with the weights of an uninterrupted one, and
# no temporary file of the killed runs is left.
# Usage: kill_resume.sh GEODL CONFIG WORKDIR
set -euo pipefail
geodl=$1 config=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
args=(-q train "$config" --samples-size 64 --epochs 5 --batch-size 4 --threads 2 --seed 2
      --deterministic)
"$geodl" "${args[@]}" --output-path "$work/whole" > "$work/whole.log"

for attempt in 1 2; do
  "$geodl" "${args[@]}" --output-path "$work/killed" $([ $attempt = 2 ] && echo --resume) \
    > "$work/killed-$attempt.log" 2>&1 &
  pid=$!
  # Wait for one more completed epoch, then kill at a moment that varies with the attempt.
  want=$((attempt + 1))
  for _ in $(seq 1 3000); do
    lines=$( (cat "$work/killed/metrics.csv" 2>/dev/null || true) | wc -l)
    [ "$lines" -gt "$want" ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.02
  done
  sleep 0.$((attempt * 3))
  kill -9 $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  # Both files still read as complete GeoDL files.
  "$geodl" info "$work/killed/last_checkpoint.pt" > /dev/null
  "$geodl" info "$work/killed/model.pt" > /dev/null
done

"$geodl" "${args[@]}" --output-path "$work/killed" --resume > "$work/resumed.log" 2>&1
grep -qE "resuming after epoch|nothing to train" "$work/resumed.log"
digest() { "$geodl" info "$1" | sed -n 's/^weights digest: //p'; }
a=$(digest "$work/whole/last_checkpoint.pt") b=$(digest "$work/killed/last_checkpoint.pt")
c=$(digest "$work/whole/model.pt") d=$(digest "$work/killed/model.pt")
echo "uninterrupted: $a $c; killed twice and resumed: $b $d"
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$c" = "$d" ]
# The resumed run removed what the killed ones left half-written.
if ls -a "$work/killed" | grep -q '\.tmp-'; then echo "temporary files left behind:"; ls -a "$work/killed"; exit 1; fi
echo "no temporary file left; same weights"
