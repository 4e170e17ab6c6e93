#!/bin/bash
# Scenario e: verbs actuator. `dimctl verbs-probe --device rxe0` opens rxe0 through libibverbs
# (rxe provider), creates a CQ, checks the moderation capabilities first (rxe: cq_mod_caps all
# zero) and reports "moderation not supported by rxe0"; exit 0, no crash; the devices' DIM
# switches, the kernel CQs and NVMe-oF I/O are unaffected.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/platform.sh"
t0=$(now)
state() { rdma dev show -d 2>&1 | grep -o '^[0-9]*: [a-z0-9]*:\|adaptive-moderation [a-z]*' | tr '\n' ' '; echo; rdma resource show cq 2>&1 | grep -v 'comm \[\?dimctl' ; }
dmesg_n() { dmesg | grep -cE 'BUG:|Oops|general protection|WARNING:'; }
before=$(state); k0=$(dmesg_n)
out=$(timeout 30 "$DIMCTL" verbs-probe --device rxe0 2>&1); rc=$?
after=$(state); k1=$(dmesg_n)
io=ok
dd if=/dev/nvme0n1 of=/dev/null bs=4k count=16 iflag=direct 2>/dev/null || io="nvme read failed"
[ "${platform_ok:-0}" = 1 ] || io="n/a (platform failed)"
oneline=$(echo "$out" | tr '\n' ' ')
why=""
[ $rc -eq 0 ] || why+="exit status $rc (>=128: killed by a signal); "
echo "$out" | grep -q 'moderation not supported by rxe0' || why+="no 'moderation not supported by rxe0' in the output; "
echo "$out" | grep -q 'cq_mod_caps' || why+="capabilities (cq_mod_caps) not reported/checked; "
echo "$out" | grep -q 'ibv_modify_cq' && why+="probe reached ibv_modify_cq instead of stopping at the capability check; "
[ "$before" = "$after" ] || why+="rdma devices/CQs changed: before [$(echo "$before" | tr '\n' ' ')] after [$(echo "$after" | tr '\n' ' ')]; "
[ "$k0" = "$k1" ] || why+="kernel warnings appeared in dmesg; "
case "$io" in ok | n/a*) ;; *) why+="$io; " ;; esac
if [ -z "$why" ]; then
  report PASS verbs-probe "'$oneline' (rc 0); devices, kernel CQs and NVMe-oF I/O unaffected; $(elapsed "$t0")s"
else
  report FAIL verbs-probe "${why}output: $oneline"
fi
true
