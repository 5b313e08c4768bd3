#!/usr/bin/env bash
# A network lab on one Linux machine: test hosts made of network namespaces, joined by a bridge,
# with faults (cuts, one-way cuts, random loss) and latency (a TCP delay proxy) on demand.
#
#   scripts/netlab.sh up    LAB [HOST...]      make the lab: one namespace per HOST (default:
#                                              coordinator worker-1 worker-2 worker-3) and one
#                                              holding the bridge; prints "HOST ADDRESS" lines
#   scripts/netlab.sh down  LAB                remove everything the lab made: its processes, its
#                                              namespaces (and with them every link, address and
#                                              nftables rule); safe to repeat, safe after a failure
#   scripts/netlab.sh addr  LAB HOST           print HOST's address
#   scripts/netlab.sh exec  LAB HOST CMD...    run CMD on HOST (exec: CMD keeps this process's pid)
#   scripts/netlab.sh cut   LAB HOST [both|out|in]  drop HOST's traffic: both ways (default), only
#                                              what HOST sends (out), or only what it receives (in)
#   scripts/netlab.sh loss  LAB HOST PERCENT   drop PERCENT % of HOST's frames at random, each way
#   scripts/netlab.sh dropped LAB HOST         how many frames HOST's cuts and loss dropped so far
#   scripts/netlab.sh heal  LAB HOST|all       remove HOST's cuts and loss (or every host's); prints
#                                              how many frames they had dropped
#   scripts/netlab.sh move  LAB ADDRESS HOST   give HOST the extra address ADDRESS, taking it from
#                                              the host that had it (a floating service address)
#   scripts/netlab.sh delay LAB HOST PORT TARGET:TPORT MEAN_MS JITTER_MS
#                                              on HOST, forward tcp PORT (all HOST's addresses)
#                                              to TARGET:TPORT, delaying each direction by
#                                              MEAN ± JITTER ms (in the foreground; the kernel
#                                              here has no netem)
#   scripts/netlab.sh publish LAB HOST TARGET:TPORT
#                                              a way in for a test on this machine: listen on
#                                              127.0.0.1 (a free port) in the root namespace and
#                                              forward each connection to TARGET:TPORT as seen
#                                              from HOST (e.g. a gateway on HOST's loopback);
#                                              prints "listening PORT"; in the foreground. The
#                                              hosts' cuts do not touch it: it stands for clients
#                                              outside the lab's network
#   scripts/netlab.sh list                     the labs that exist
#   scripts/netlab.sh check                    exit 0 if a lab can be made here (root, ip, nft,
#                                              namespaces, veth, bridge, bridge filtering), else
#                                              print why and exit 1 (NETLAB=off: always exit 1)
#   scripts/netlab.sh install                  install iproute2 and nftables if missing (apt-get)
#
# LAB is a short unique name ([a-z0-9-], at most 20 characters) that prefixes every namespace
# the lab makes: LAB-br (the bridge) and LAB-HOST per host; two labs never share anything. Each
# namespace is recorded in /run/netlab/LAB ($NETLAB_STATE_DIR) before it is made, and `down`
# removes exactly those. Hosts
# get 198.18.0.1, .2, … in order (198.18.0.0/15 is reserved for network tests, RFC 2544); the
# lab has no default route and no link to the root namespace, so its traffic cannot leave it.
# Faults are nftables rules in the bridge's namespace (`table bridge netlab`): a chain per host
# and direction, so `heal` empties exactly that host's chains.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
SUBNET_PREFIX=198.18.0
# Each lab's namespaces, one per line, written before each is made: what `down` removes.
STATE_DIR=${NETLAB_STATE_DIR:-/run/netlab}
DEFAULT_HOSTS=(coordinator worker-1 worker-2 worker-3)

die() {
  echo "netlab: $*" >&2
  exit 1
}

need_root() { [[ $(id -u) -eq 0 ]] || die "needs root (network namespaces and nftables)"; }

valid_lab() {
  [[ $1 =~ ^[a-z0-9][a-z0-9-]{0,19}$ ]] || die "bad lab name '$1': use [a-z0-9-], at most 20 characters"
}

valid_host() {
  # The host's bridge port is named p-HOST: interface names have at most 15 characters.
  [[ $1 =~ ^[a-z0-9][a-z0-9-]{0,12}$ ]] || die "bad host name '$1': use [a-z0-9-], at most 13 characters"
}

bridge_ns() { echo "$1-br"; }
host_ns() { echo "$1-$2"; }
ns_exists() { [[ -e /run/netns/$1 ]]; }
state_file() { echo "$STATE_DIR/$LAB"; }

# Makes namespace $1, recording it first so that `down` removes it whatever happens next.
add_ns() {
  echo "$1" >>"$(state_file)"
  ip netns add "$1"
  ip -n "$1" link set lo up
}
in_bridge() { ip netns exec "$(bridge_ns "$LAB")" "$@"; }

# The lab's hosts (the bridge's ports are named p-HOST).
hosts() {
  ns_exists "$(bridge_ns "$LAB")" || die "no lab named $LAB (run: $0 up $LAB)"
  ip -n "$(bridge_ns "$LAB")" -o link show type veth | sed -E 's/^[0-9]+: p-([^@:]+).*/\1/'
}

# The host's own address (the first on its eth0; a moved service address comes after it).
host_address() {
  ip -n "$(host_ns "$LAB" "$1")" -o -4 addr show dev eth0 | sed -nE 's/.* inet ([0-9.]+)\/.*/\1/p' | head -n 1
}

require_host() {
  valid_host "$1"
  ns_exists "$(host_ns "$LAB" "$1")" || die "lab $LAB has no host $1"
}

up() {
  need_root
  local -a names=("$@")
  ((${#names[@]})) || names=("${DEFAULT_HOSTS[@]}")
  ((${#names[@]} <= 200)) || die "at most 200 hosts"
  local host
  for host in "${names[@]}"; do valid_host "$host"; done
  [[ -e $(state_file) ]] || ns_exists "$(bridge_ns "$LAB")" && die "lab $LAB exists already (run: $0 down $LAB)"
  mkdir -p "$STATE_DIR"
  # Whatever fails half-way, leave nothing behind.
  trap 'down >/dev/null 2>&1 || true' ERR
  local bridge
  bridge=$(bridge_ns "$LAB")
  add_ns "$bridge"
  ip -n "$bridge" link add br0 type bridge
  ip -n "$bridge" link set br0 up
  # Nothing is routed here: the bridge only switches frames between the lab's hosts.
  in_bridge nft -f - <<EOF || die "nftables cannot filter bridged traffic here"
table bridge netlab {
  chain forward { type filter hook forward priority 0; policy accept; }
}
EOF
  local index=0 namespace
  for host in "${names[@]}"; do
    index=$((index + 1))
    namespace=$(host_ns "$LAB" "$host")
    add_ns "$namespace"
    # The veth pair is made inside the host's namespace with its peer sent straight to the
    # bridge's: no interface of the lab ever exists in the root namespace.
    ip -n "$namespace" link add eth0 type veth peer name "p-$host" netns "$bridge"
    ip -n "$bridge" link set "p-$host" master br0 up
    ip -n "$namespace" addr add "$SUBNET_PREFIX.$index/24" dev eth0
    ip -n "$namespace" link set eth0 up
    in_bridge nft add chain bridge netlab "out-$host"
    in_bridge nft add chain bridge netlab "in-$host"
    in_bridge nft add rule bridge netlab forward iifname "p-$host" jump "out-$host"
    in_bridge nft add rule bridge netlab forward oifname "p-$host" jump "in-$host"
    echo "$host $SUBNET_PREFIX.$index"
  done
  trap - ERR
}

# Every process running in one of the lab's namespaces (daemons, proxies) — all started in them
# by this lab's users — is killed by its pid before the namespaces go.
down() {
  need_root
  local namespace pids deadline
  local -a namespaces=()
  [[ -e $(state_file) ]] || return 0
  mapfile -t namespaces < <(sort -u "$(state_file)")
  ((${#namespaces[@]})) || return 0
  for namespace in "${namespaces[@]}"; do
    pids=$(ip netns pids "$namespace" 2>/dev/null || true)
    [[ -n $pids ]] && kill -TERM $pids 2>/dev/null || true
  done
  deadline=$((SECONDS + 5))
  for namespace in "${namespaces[@]}"; do
    while [[ -n $(ip netns pids "$namespace" 2>/dev/null) ]] && ((SECONDS < deadline)); do sleep 0.1; done
    pids=$(ip netns pids "$namespace" 2>/dev/null || true)
    [[ -n $pids ]] && kill -KILL $pids 2>/dev/null || true
  done
  # Deleting a namespace deletes its links (a veth takes its peer with it) and its nftables.
  for namespace in "${namespaces[@]}"; do
    ip netns delete "$namespace" 2>/dev/null || true
  done
  for namespace in "${namespaces[@]}"; do
    ns_exists "$namespace" && die "could not delete namespace $namespace"
  done
  rm -f "$(state_file)"
}

cut_host() {
  local host=$1 direction=${2:-both}
  require_host "$host"
  case $direction in
    both) in_bridge nft add rule bridge netlab "out-$host" counter drop
          in_bridge nft add rule bridge netlab "in-$host" counter drop ;;
    out) in_bridge nft add rule bridge netlab "out-$host" counter drop ;;
    in) in_bridge nft add rule bridge netlab "in-$host" counter drop ;;
    *) die "cut: direction must be both, out or in (got $direction)" ;;
  esac
}

loss() {
  local host=$1 percent=$2
  require_host "$host"
  [[ $percent =~ ^[0-9]+$ ]] && ((percent <= 100)) || die "loss: PERCENT must be 0…100 (got $percent)"
  in_bridge nft add rule bridge netlab "out-$host" numgen random mod 100 '<' "$percent" counter drop
  in_bridge nft add rule bridge netlab "in-$host" numgen random mod 100 '<' "$percent" counter drop
}

# How many frames HOST's cuts and loss have dropped since they were made (heal resets).
dropped() {
  local host=$1
  require_host "$host"
  { in_bridge nft list chain bridge netlab "out-$host"; in_bridge nft list chain bridge netlab "in-$host"; } |
    sed -nE 's/.*counter packets ([0-9]+) .*/\1/p' | awk '{ total += $1 } END { print total + 0 }'
}

# Prints how many frames the removed rules had dropped (all hosts' together for `all`).
heal() {
  local host total=0
  local -a targets
  if [[ $1 == all ]]; then mapfile -t targets < <(hosts); else require_host "$1"; targets=("$1"); fi
  for host in "${targets[@]}"; do
    total=$((total + $(dropped "$host")))
    in_bridge nft flush chain bridge netlab "out-$host"
    in_bridge nft flush chain bridge netlab "in-$host"
  done
  echo "$total"
}

move() {
  local address=$1 target=$2 host
  [[ $address =~ ^198\.18\.0\.([0-9]+)$ ]] && ((BASH_REMATCH[1] >= 1 && BASH_REMATCH[1] <= 254)) ||
    die "move: ADDRESS must be in $SUBNET_PREFIX.0/24 (got $address)"
  require_host "$target"
  for host in $(hosts); do
    if ip -n "$(host_ns "$LAB" "$host")" -o addr show dev eth0 | grep -q "inet $address/"; then
      ip -n "$(host_ns "$LAB" "$host")" addr del "$address/24" dev eth0
    fi
  done
  ip -n "$(host_ns "$LAB" "$target")" addr add "$address/24" dev eth0
  # What a gratuitous ARP does on a real network: the other hosts forget the old owner's MAC.
  for host in $(hosts); do
    ip -n "$(host_ns "$LAB" "$host")" neigh flush to "$address" 2>/dev/null || true
  done
}

# Prints yes if host $1 can open a tcp connection to host $2 within a second, else no.
probe() {
  local listener
  ip netns exec "$(host_ns "$LAB" "$2")" perl -MIO::Socket::INET -e \
    '$s = IO::Socket::INET->new(LocalPort => 7, Listen => 1, ReuseAddr => 1) or die; $s->accept; sleep 2' &
  listener=$!
  local tries=0
  until ip netns exec "$(host_ns "$LAB" "$2")" ss -ltn 2>/dev/null | grep -q ':7 ' || ((tries++ > 50)); do sleep 0.02; done
  if ip netns exec "$(host_ns "$LAB" "$1")" perl -MIO::Socket::INET -e \
    'exit(IO::Socket::INET->new(PeerAddr => $ARGV[0], PeerPort => 7, Timeout => 1) ? 0 : 1)' "$(host_address "$2")"; then
    echo yes
  else
    echo no
  fi
  # SIGKILL: a launcher may have left SIGTERM blocked in the processes it starts (Foundation's
  # Process does), and a blocked SIGTERM would leave the listener waiting for a connection.
  kill -KILL "$listener" 2>/dev/null || true
  wait "$listener" 2>/dev/null || true
}

check() {
  [[ ${NETLAB:-} != off ]] || { echo "turned off by NETLAB=off"; return 1; }
  [[ $(id -u) -eq 0 ]] || { echo "not root"; return 1; }
  command -v ip >/dev/null || { echo "ip (iproute2) is not installed"; return 1; }
  command -v nft >/dev/null || { echo "nft (nftables) is not installed"; return 1; }
  command -v perl >/dev/null || { echo "perl is not installed"; return 1; }
  LAB="netlab-check-$$"
  local output
  if ! output=$(up a b 2>&1); then
    down >/dev/null 2>&1 || true
    echo "cannot make a lab here: ${output//$'\n'/ }"
    return 1
  fi
  # A tcp connection from a to b works, and stops working when a's traffic is cut.
  local reached cut_reached
  reached=$(probe a b)
  cut_host a out
  cut_reached=$(probe a b)
  down
  [[ $reached == yes ]] || { echo "lab hosts cannot reach each other over the bridge"; return 1; }
  [[ $cut_reached == no ]] || { echo "bridge filtering (nftables table bridge) has no effect here"; return 1; }
  echo "ok"
}

install() {
  command -v ip >/dev/null && command -v nft >/dev/null && return 0
  local sudo=""
  [[ $(id -u) -eq 0 ]] || sudo=sudo
  echo "installing iproute2 and nftables..." >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq iproute2 nftables >/dev/null 2>&1 || {
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq iproute2 nftables >/dev/null
  }
}

COMMAND=${1:-}
shift || true
case $COMMAND in
  check) check; exit ;;
  install) install; exit ;;
  list) for f in "$STATE_DIR"/*; do [[ -e $f ]] && basename "$f"; done; exit 0 ;;
esac
[[ $# -ge 1 ]] || die "usage: $0 up|down|addr|exec|cut|loss|dropped|heal|move|delay|publish|list|check|install LAB ..."
LAB=$1
shift
valid_lab "$LAB"
case $COMMAND in
  up) up "$@" ;;
  down) down ;;
  addr) [[ $# -eq 1 ]] || die "usage: $0 addr LAB HOST"; require_host "$1"; host_address "$1" ;;
  exec)
    [[ $# -ge 2 ]] || die "usage: $0 exec LAB HOST CMD..."
    require_host "$1"
    namespace=$(host_ns "$LAB" "$1")
    shift
    exec ip netns exec "$namespace" "$@"
    ;;
  cut) [[ $# -ge 1 ]] || die "usage: $0 cut LAB HOST [both|out|in]"; cut_host "$@" ;;
  loss) [[ $# -eq 2 ]] || die "usage: $0 loss LAB HOST PERCENT"; loss "$@" ;;
  dropped) [[ $# -eq 1 ]] || die "usage: $0 dropped LAB HOST"; dropped "$1" ;;
  heal) [[ $# -eq 1 ]] || die "usage: $0 heal LAB HOST|all"; heal "$1" ;;
  move) [[ $# -eq 2 ]] || die "usage: $0 move LAB ADDRESS HOST"; move "$@" ;;
  delay)
    [[ $# -eq 5 ]] || die "usage: $0 delay LAB HOST PORT TARGET:TPORT MEAN_MS JITTER_MS"
    require_host "$1"
    namespace=$(host_ns "$LAB" "$1")
    shift
    exec ip netns exec "$namespace" perl "$SCRIPT_DIR/netlab-delay.pl" "$@"
    ;;
  publish)
    [[ $# -eq 2 ]] || die "usage: $0 publish LAB HOST TARGET:TPORT"
    require_host "$1"
    namespace=$(host_ns "$LAB" "$1")
    # The listening socket is made here, in the root namespace, and kept open across the exec
    # into HOST's namespace, where the proxy connects to TARGET: a socket stays in the
    # namespace it was made in.
    exec perl -MIO::Socket::INET -MFcntl -e '
      my $listener = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 64, ReuseAddr => 1, Proto => "tcp")
        or die "cannot listen on 127.0.0.1: $!\n";
      fcntl($listener, F_SETFD, 0) or die "fcntl: $!\n";
      exec("ip", "netns", "exec", $ARGV[0], "perl", $ARGV[1], "fd:" . fileno($listener), $ARGV[2], 0, 0) or die "exec: $!\n";
    ' "$namespace" "$SCRIPT_DIR/netlab-delay.pl" "$2"
    ;;
  *) die "unknown command $COMMAND" ;;
esac
