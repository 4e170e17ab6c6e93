#!/bin/bash
# Guest-side entry point of the net lab (runs in the chroot into the host userland; see
# tests/lab/init): the igb platform, the selected scenarios, $LAB_OUT/lab-report.txt.
set -uo pipefail
GUEST_DIR=$(cd "$(dirname "$0")" && pwd)
. "$GUEST_DIR/lib.sh"
. "$GUEST_DIR/platform.sh"
guest_begin "net lab guest"

t=$(now)
platform_ok=0
if err=$(setup_igb 2>&1); then
  # smoke: 20 pings across both drivers
  if out=$(nsx busybox ping -c 20 -i 0.05 -W 2 -q "$NET.2" 2>&1); then
    platform_ok=1
    report PASS platform "$RX ($(ethtool -i $RX | sed -n 's/^driver: //p'), $(ls -d /sys/class/net/$RX/queues/rx-* | wc -l) rx queues) <- $TX in netns $NS; $(echo "$out" | grep -o "[0-9]* packets received"); $(elapsed "$t")s"
  else
    report FAIL platform "ping $NS -> $NET.2: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
  fi
else
  report FAIL platform "$(echo "$err" | tail -n 3 | tr '\n' ' ')"
fi
log "vectors: $(igb_vectors "$RX" | tr '\n' ' ')"
grep -E "CPU|$RX" /proc/interrupts
ethtool -l "$RX"; ethtool -c "$RX"

declare -A SC=([m]=sc-m-napi-counts.sh [q]=sc-q-mapping.sh [r]=sc-r-rss.sh [e]=sc-e-ethtool.sh
  [n]=sc-n-napi-set.sh [c]=sc-c-costs.sh [f]=sc-f-efficiency.sh [i]=../../guest/sc-i-idle.sh)
declare -A SC_BOUND=([m]=90 [q]=60 [r]=90 [e]=150 [n]=120 [c]=90 [f]=60 [i]=60)
guest_end m,q,r,e,n,c,f,i 1
