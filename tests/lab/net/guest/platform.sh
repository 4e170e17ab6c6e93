# The net lab's platform: the two igb NICs (found by MAC) renamed igb0/igb1, igb1 moved into
# netns digtx, IPv4 only, static neighbours (no ARP, ND or MLD packets in the counts).
# shellcheck shell=bash
dev_by_mac() { local d; for d in /sys/class/net/*; do [ "$(cat "$d/address")" = "$1" ] && { basename "$d"; return 0; }; done; return 1; }
setup_igb() {
  local a b
  echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
  echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
  echo 1 >/proc/sys/net/core/devconf_inherit_init_net
  wait_for 20 dev_by_mac 52:54:00:d1:00:02 || { echo "no igb NIC with MAC 52:54:00:d1:00:02: $(ls /sys/class/net)"; return 1; }
  a=$(dev_by_mac 52:54:00:d1:00:01) b=$(dev_by_mac 52:54:00:d1:00:02)
  [ "$a" = "$RX" ] || ip link set "$a" name "$RX" || return 1
  [ "$b" = "$TX" ] || ip link set "$b" name "$TX" || return 1
  ip netns add "$NS" || return 1
  ip link set "$TX" netns "$NS" || return 1
  nsx ip link set lo up
  ip addr add "$NET.2/24" dev "$RX" || return 1
  nsx ip addr add "$NET.1/24" dev "$TX" || return 1
  ip link set "$RX" up || return 1
  nsx ip link set "$TX" up || return 1
  # igb's link comes up through its watchdog (2 s period)
  wait_for 30 grep -q 1 "/sys/class/net/$RX/carrier" || { echo "$RX: no carrier"; return 1; }
  wait_for 30 nsx grep -q 1 "/sys/class/net/$TX/carrier" || { echo "$TX: no carrier"; return 1; }
  local rxmac txmac
  rxmac=$(cat "/sys/class/net/$RX/address"); txmac=$(nsx cat "/sys/class/net/$TX/address")
  for i in 2 3 4 5 6 7 8 9; do
    [ $i = 2 ] || ip addr add "$NET.$i/32" dev "$RX" || return 1
    nsx ip neigh replace "$NET.$i" lladdr "$rxmac" dev "$TX" nud permanent || return 1
  done
  # RSS on the UDP 4-tuple (igb hashes UDP on the addresses only by default): the flows of
  # one sender differ by source port.
  ethtool -N "$RX" rx-flow-hash udp4 sdfn || return 1
  ip neigh replace "$NET.1" lladdr "$txmac" dev "$RX" nud permanent || return 1
}
