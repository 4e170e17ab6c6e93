# shellcheck shell=bash
# Sourced by the BPF benchmarks (overhead.sh, cpu_times_overhead.sh): two network namespaces
# joined by a veth pair whose receiver's NAPI polls (va in $NSA with GRO on, 10.78.0.1; vb in
# $NSB with TSO/GSO off, 10.78.0.2; static neighbours, no IPv6), kernel.bpf_stats_enabled on, and
# all of it undone at exit, with $WORK removed. The caller sets NSA, NSB and WORK first; A and B
# are then the commands that run in each namespace.
veth_pair_cleanup() {
  [ -n "${OLD_STATS:-}" ] && echo "$OLD_STATS" >/proc/sys/kernel/bpf_stats_enabled
  ip netns del "$NSA" 2>/dev/null || true
  ip netns del "$NSB" 2>/dev/null || true
  rm -rf "$WORK"
}

veth_pair_start() {
  OLD_STATS="$(cat /proc/sys/kernel/bpf_stats_enabled)"
  trap veth_pair_cleanup EXIT INT TERM
  echo 1 >/proc/sys/kernel/bpf_stats_enabled

  A=(ip netns exec "$NSA")
  B=(ip netns exec "$NSB")
  ip netns add "$NSA"
  ip netns add "$NSB"
  local ns
  for ns in "$NSA" "$NSB"; do
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip netns exec "$ns" ip link set lo up
  done
  ip link add va netns "$NSA" type veth peer name vb netns "$NSB"
  "${A[@]}" ip addr add 10.78.0.1/24 dev va
  "${B[@]}" ip addr add 10.78.0.2/24 dev vb
  "${A[@]}" ethtool -K va gro on >/dev/null
  "${B[@]}" ethtool -K vb tso off gso off >/dev/null
  "${A[@]}" ip link set va up
  "${B[@]}" ip link set vb up
  local va_mac vb_mac
  va_mac=$("${A[@]}" ip link show dev va | awk '/link\/ether/ {print $2}')
  vb_mac=$("${B[@]}" ip link show dev vb | awk '/link\/ether/ {print $2}')
  "${A[@]}" ip neigh replace 10.78.0.2 lladdr "$vb_mac" dev va nud permanent
  "${B[@]}" ip neigh replace 10.78.0.1 lladdr "$va_mac" dev vb nud permanent
}
