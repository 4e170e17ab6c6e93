# Guest platform: veth + rxe0, nvmet over rdma on /dev/nullb0, nvme connect, fio.
# shellcheck shell=bash

# Keep IPv6 off everywhere: no ND/MLD/RS packets on the veths (exact NAPI counts).
# New network namespaces inherit these (devconf_inherit_init_net=1).
net_quiet() {
  echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
  echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
  echo 1 >/proc/sys/net/core/devconf_inherit_init_net
}

setup_rxe0() {
  net_quiet
  ip -batch - <<IP || return 1
link add veth0 type veth peer name veth1
addr add $RDMA_NET.1/24 dev veth0
addr add $RDMA_NET.2/24 dev veth1
link set veth0 up
link set veth1 up
IP
  rdma link add rxe0 type rxe netdev veth0 || return 1
  wait_for 10 test -e /sys/class/infiniband/rxe0 || return 1
}

setup_nvmet() {
  local c=/sys/kernel/config/nvmet
  [ -d "$c" ] || { echo "no $c (nvmet not loaded?)" >&2; return 1; }
  wait_for 10 test -b /dev/nullb0 || { echo "no /dev/nullb0" >&2; return 1; }
  mkdir "$c/subsystems/$NQN" "$c/subsystems/$NQN/namespaces/1" "$c/ports/1" || return 1
  echo 1 >"$c/subsystems/$NQN/attr_allow_any_host"
  echo -n /dev/nullb0 >"$c/subsystems/$NQN/namespaces/1/device_path"
  echo 1 >"$c/subsystems/$NQN/namespaces/1/enable" || return 1
  echo rdma >"$c/ports/1/addr_trtype"
  echo ipv4 >"$c/ports/1/addr_adrfam"
  echo "$RDMA_NET.1" >"$c/ports/1/addr_traddr"
  echo "$NVME_PORT" >"$c/ports/1/addr_trsvcid"
  ln -s "$c/subsystems/$NQN" "$c/ports/1/subsystems/$NQN" || return 1
}

HOSTID=$(cat /proc/sys/kernel/random/uuid 2>/dev/null)
[ -f /tmp/lab/hostid ] && HOSTID=$(cat /tmp/lab/hostid)
mkdir -p /tmp/lab && echo "$HOSTID" >/tmp/lab/hostid

# Keep-alive: a 3600 s timeout makes the host send a keep-alive every 1800 s, i.e. never
# during the lab, so the admin-queue CQs stay silent unless we issue admin commands.
nvme_connect() {
  nvme connect -t rdma -a "$RDMA_NET.1" -s "$NVME_PORT" -n "$NQN" -k 3600 \
    --hostnqn="nqn.2014-08.org.nvmexpress:uuid:$HOSTID" --hostid="$HOSTID" >"$WORK/connect.out" 2>&1 ||
    { cat "$WORK/connect.out" >&2; return 1; }
  wait_for 20 test -b /dev/nvme0n1 || { echo "no /dev/nvme0n1 after connect" >&2; return 1; }
}
nvme_disconnect() {
  nvme disconnect -n "$NQN" >"$WORK/disconnect.out" 2>&1 || { cat "$WORK/disconnect.out" >&2; return 1; }
  wait_for 20 test ! -e /dev/nvme0n1
}

# run_fio NAME QD NIOS : direct 4k random reads on /dev/nvme0n1, bounded by count and time.
run_fio() {
  fio --name="$1" --filename=/dev/nvme0n1 --direct=1 --rw=randread --bs=4k --ioengine=libaio \
    --iodepth="$2" --number_ios="$3" --size=256m --runtime="${FIO_RUNTIME:-20}" \
    --output-format=json --output="$WORK/fio-$1.json" >/dev/null 2>"$WORK/fio-$1.err"
  local rc=$?
  [ $rc -eq 0 ] || { cat "$WORK/fio-$1.err" >&2; return $rc; }
  jq -r '.jobs[0].read | "\(.total_ios) \(.iops|floor)"' "$WORK/fio-$1.json"
}
