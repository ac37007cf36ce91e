#!/usr/bin/env bash
# The .deb on a fresh Debian 12 (issue 44): `cpack -G DEB` in the build folder, installed
# with apt into a clean Debian 12 root (debootstrap --variant=minbase, from Debian's own
# packages), where a user who is not root runs `npucc compile --check-accuracy` on a bundled
# model, imports the Python module and reads the man page. apt pulls the package's Depends
# from Debian's archive, so a missing one fails here.
#
#   tests/package/test_deb_debian12.sh BUILD_DIR
#
# Needs: root (debootstrap, chroot, mounts in a private mount namespace: unshare), the
# debootstrap package, network to Debian's archive (the mirror of this machine's apt
# sources; NPUCC_DEBIAN_MIRROR overrides it). The bootstrapped root is kept in
# ${NPUCC_DEBIAN_ROOT_CACHE:-~/.cache/npucc-debian12} (about 170 MB, with the packages apt
# downloads), so only the first run bootstraps (4 minutes on the loaded 2-core machine);
# then a run takes about 4 minutes, half of it cpack packing the RelWithDebInfo binary
# (tests/README.md, "Packaging suites"). Not in ctest: .ci/run runs it as its own step.
set -euo pipefail
build=${1:?usage: test_deb_debian12.sh BUILD_DIR}
build=$(cd "$build" && pwd)
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
for tool in debootstrap unshare chroot cpack; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed (Debian: apt-get install $tool)"; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "FAIL: needs root (debootstrap, chroot)"; exit 1; }
cache=${NPUCC_DEBIAN_ROOT_CACHE:-${HOME:-/root}/.cache/npucc-debian12}
mirror=${NPUCC_DEBIAN_MIRROR:-$(sed -n 's/^URIs: *\([^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)}
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 ~ /\/debian$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
[ -n "$mirror" ] || { echo "FAIL: no Debian mirror in this machine's apt sources: set NPUCC_DEBIAN_MIRROR"; exit 1; }
started=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. The package (NPUCC_DEB names one already made).
deb=${NPUCC_DEB:-}
if [ -z "$deb" ]; then
  (cd "$build" && cpack -G DEB -B "$work/deb" >"$work/cpack.log" 2>&1) ||
    { cat "$work/cpack.log"; echo "FAIL: cpack -G DEB"; exit 1; }
  deb=$(ls "$work"/deb/npucc_*.deb | head -n 1)
fi
echo "package: $(basename "$deb"), $(du -k "$deb" | cut -f1) KiB"

# 2. A clean Debian 12 root: bootstrapped once into the cache, unpacked fresh each run.
mkdir -p "$cache/apt-archives"
if [ ! -f "$cache/root.tar" ]; then
  echo "bootstrapping Debian 12 (minbase) from $mirror into $cache (once)"
  debootstrap --variant=minbase bookworm "$work/bootstrap" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log"; echo "FAIL: debootstrap"; exit 1; }
  rm -rf "$work/bootstrap/var/cache/apt/archives"/*.deb
  tar -C "$work/bootstrap" -cf "$cache/root.tar.new" . && mv "$cache/root.tar.new" "$cache/root.tar"
  rm -rf "$work/bootstrap"
fi
root="$work/root"
mkdir "$root"
tar -C "$root" -xf "$cache/root.tar"
cp "$deb" "$root/tmp/npucc.deb"
cp /etc/resolv.conf "$root/etc/resolv.conf"
install -d "$root/home/tester"
cp "$source_dir/testdata/models/oww_hello_deepa.onnx" "$root/home/tester/model.onnx"

# 3. Inside it, in a private mount namespace (the mounts end with it): apt installs the
# package and its Depends; the user tester compiles with the accuracy check.
cat >"$root/tmp/inside.sh" <<'EOF'
set -eu
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
apt-get update -qq
apt-get install -y -qq --no-install-recommends /tmp/npucc.deb >/tmp/apt.log 2>&1 ||
  { tail -n 20 /tmp/apt.log; echo "FAIL: apt-get install npucc.deb"; exit 1; }
useradd -M -d /home/tester -s /bin/sh tester
chown -R tester /home/tester
as_tester() { setpriv --reuid=tester --regid=tester --clear-groups env -i HOME=/home/tester PATH=/usr/bin:/bin "$@"; }
cd /home/tester
as_tester npucc --version
as_tester npucc compile model.onnx -o out --accelerate-train-mode 'fast|step' --check-accuracy
as_tester python3 -c "
import json, npucc
runtime = json.load(open('out/manifest.json'))['accuracy']['runtime']
assert runtime.startswith('ONNX Runtime 1.'), runtime
info = npucc.build_info()['onnxruntime']
assert info['version'] and info['library'].startswith('/usr/'), info
result = npucc.compile('model.onnx', 'out-py', accelerate_train_mode='fast|step', check_accuracy=True)
assert result.accuracy['runtime'] == runtime, result.accuracy
print('python: npucc', npucc.__version__, 'accuracy checked in', runtime)
"
test -f /usr/share/man/man1/npucc.1.gz -o -f /usr/share/man/man1/npucc.1
test -f /usr/share/bash-completion/completions/npucc
test -f /usr/include/npucc/compile.h
test -f "$(dpkg -L npucc | grep '/cmake/npucc/npuccConfig.cmake$')"
dpkg -L npucc | grep -q 'onnxruntime-LICENSE$'
echo "inside: ok"
EOF
unshare --mount --propagation private -- bash -c '
  set -e
  root=$1; archives=$2
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mount --bind "$archives" "$root/var/cache/apt/archives"
  chroot "$root" /bin/bash /tmp/inside.sh
' inside "$root" "$cache/apt-archives" 2>&1 | tee "$work/inside.log"
status=${PIPESTATUS[0]}
if [ "$status" != 0 ] || ! grep -qx "inside: ok" "$work/inside.log"; then
  echo "FAIL: the .deb on Debian 12 (exit $status)"
  exit 1
fi
echo "deb on Debian 12: ok in $(($(date +%s) - started)) s"
