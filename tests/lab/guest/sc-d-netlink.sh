#!/bin/bash
# Scenario d: rdma netlink actuator. `dimctl run` in enforce mode with a rule naming rxe0 and
# kernel_dim set opposite to rxe0's current switch flips it and reads it back (rdma dev show -d
# and dimctl rdma show); rxe1 (on another veth, not in any rule) is never switched, checked
# every 0.2 s while dimctl runs; on SIGTERM the original value is restored.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/platform.sh"
t0=$(now)
PORT=9978

if [ ! -e /sys/class/infiniband/rxe1 ]; then
  if ! err=$( { net_quiet; ip link add veth2 type veth peer name veth3 &&
      ip addr add "$RDMA2_NET.1/24" dev veth2 && ip link set veth2 up && ip link set veth3 up &&
      rdma link add rxe1 type rxe netdev veth2 && wait_for 10 test -e /sys/class/infiniband/rxe1; } 2>&1); then
    report FAIL netlink-enforce "cannot create rxe1: $err"; exit 0
  fi
fi
orig0=$(rdma_dim_of rxe0); orig1=$(rdma_dim_of rxe1)
[ -n "$orig0" ] && [ -n "$orig1" ] || { report FAIL netlink-enforce "rdma dev show -d prints no adaptive-moderation (rxe0='$orig0' rxe1='$orig1')"; exit 0; }
if [ "$orig0" = on ]; then want=off; want_b=false; else want=on; want_b=true; fi

cfg=$WORK/enforce.yaml
cat >"$cfg" <<YAML
version: 1
mode: shadow
interval: 20ms
state_file: /run/dimctl/state-enforce.json
metrics:
  listen: 127.0.0.1:$PORT
collectors:
  napi: false
  rdma: true
devices:
  - name: lab-rxe0
    match:
      rdma_device: ["rxe0"]
    mode: enforce
    algorithm: rdma
    kernel_dim: $want_b
YAML
"$DIMCTL" run --config "$cfg" >"$WORK/run-enforce.log" 2>&1 &
pid=$!
switched=0 touched1=""
end=$(( EPOCHSECONDS + 40 ))
while [ "$EPOCHSECONDS" -lt "$end" ] && kill -0 $pid 2>/dev/null; do
  [ "$(rdma_dim_of rxe1)" = "$orig1" ] || touched1="rxe1 switched to $(rdma_dim_of rxe1) while dimctl ran; "
  if [ "$(rdma_dim_of rxe0)" = "$want" ]; then switched=1; break; fi
  sleep 0.2
done
show=""
if dimctl_has rdma show; then
  show=$("$DIMCTL" rdma show --json 2>&1)
  show_0=$(echo "$show" | jq -r '.[] | select(.name == "rxe0") | .adaptive_moderation' 2>/dev/null)
  show_1=$(echo "$show" | jq -r '.[] | select(.name == "rxe1") | .adaptive_moderation' 2>/dev/null)
fi
# keep watching rxe1 for a while in enforce mode (dimctl keeps re-applying rxe0)
for _ in $(seq 10); do
  [ "$(rdma_dim_of rxe1)" = "$orig1" ] || touched1="rxe1 switched to $(rdma_dim_of rxe1) while dimctl ran; "
  sleep 0.2
done
curl -sf --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$WORK/metrics-enforce.txt"
menabled=$(grep -E '^dimctl_rdma_dim_enabled\{' "$WORK/metrics-enforce.txt" | grep 'device="rxe0"' | awk '{print $NF}')
alive=0; kill -0 $pid 2>/dev/null && alive=1
kill -TERM $pid 2>/dev/null
wait_for 20 bash -c "! kill -0 $pid" || kill -KILL $pid
wait $pid; rc=$?
after0=$(rdma_dim_of rxe0); after1=$(rdma_dim_of rxe1)
why=""
[ $alive -eq 1 ] || why+="dimctl run exited early (rc $rc); "
[ $switched -eq 1 ] || why+="rxe0 not switched to $want within 40 s (still $(rdma_dim_of rxe0)); "
[ -z "$touched1" ] || why+="$touched1"
if [ -n "$show" ]; then
  [ "$show_0" = "$want_b" ] || why+="dimctl rdma show: rxe0 adaptive_moderation=$show_0, expected $want_b; "
  exp1=false; [ "$orig1" = on ] && exp1=true
  [ "$show_1" = "$exp1" ] || why+="dimctl rdma show: rxe1 adaptive_moderation=$show_1, expected $exp1; "
fi
[ "$after0" = "$orig0" ] || why+="rxe0 not restored on SIGTERM: $after0 (original $orig0); "
[ "$after1" = "$orig1" ] || why+="rxe1 changed: $after1 (original $orig1); "
[ $rc -eq 0 ] || why+="dimctl run exited $rc on SIGTERM; "
cp "$WORK/run-enforce.log" "$LAB_OUT/run-enforce.log" 2>/dev/null
if [ -z "$why" ]; then
  report PASS netlink-enforce "rxe0 adaptive-moderation $orig0 -> $want (rdma dev show -d; dimctl rdma show: ${show_0:-n/a}; metric dimctl_rdma_dim_enabled=${menabled:-n/a}), rxe1 stayed $orig1 (not in the allowlist), restored to $after0 on SIGTERM; $(elapsed "$t0")s"
else
  report FAIL netlink-enforce "$why(log: $(tail -n 2 "$WORK/run-enforce.log" | tr '\n' ' '))"
fi
true
