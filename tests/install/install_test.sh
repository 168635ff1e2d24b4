#!/bin/bash
# meson install into a temporary DESTDIR, then an ordinary libfabric program built with
# nothing but pkg-config's flags, against the installed libfabric.pc (the compat library)
# and ufi.pc (libufi), run from the installed tree: it must be served by the installed ufi.
#   install_test.sh <build dir> <probe.c>
set -eu
build=$1
probe=$2
for tool in pkg-config cc meson; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is not installed"
    exit 77
  fi
done
tmp=$(mktemp -d /tmp/ufi-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
meson install -C "$build" --no-rebuild --destdir "$tmp/root" --quiet >"$tmp/install.log" 2>&1 || {
  cat "$tmp/install.log"; echo "FAIL: meson install"; exit 1; }
prefix=$(meson introspect "$build" --buildoptions | python3 -c \
  'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"))')
libdir=$(meson introspect "$build" --buildoptions | python3 -c \
  'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="libdir"))')
compat=$(meson introspect "$build" --buildoptions | python3 -c \
  'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="compat_dir"))')
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac
root=$tmp/root
fail=0
check() { if "$@"; then :; else echo "FAIL: $*"; fail=1; fi; }
# What the layout promises.
check test -f "$root$prefix/include/rdma/fabric.h"
check test -f "$root$prefix/include/ufi/ufi.h" -o -d "$root$prefix/include/ufi"
check test -L "$root$libdir/libufi.so"
check test -f "$root$libdir/$compat/libfabric.so.1"
check test -f "$root$libdir/pkgconfig/ufi.pc"
check test -f "$root$libdir/$compat/pkgconfig/libfabric.pc"
check test -x "$root$prefix/bin/ufi_info"
check test -f "$root$libdir/libfabric/libufi-fi.so"
mandir=$(meson introspect "$build" --buildoptions | python3 -c \
  'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="mandir"))')
case $mandir in /*) ;; *) mandir=$prefix/$mandir ;; esac
check test -f "$root$mandir/man7/fi_ufi.7"
check test -f "$root$mandir/man1/ufi_info.1"
check test -f "$root$mandir/man1/ufi_perf.1"
soname=$(objdump -p "$root$libdir/$compat/libfabric.so.1" | awk '/SONAME/ {print $2}')
check test "$soname" = "libfabric.so.1"

# Build with pkg-config's flags alone (the prefix moved to where DESTDIR put it).
for pc in libfabric ufi; do
  dir=$root$libdir/pkgconfig
  [ "$pc" = libfabric ] && dir=$root$libdir/$compat/pkgconfig
  flags=$(PKG_CONFIG_PATH=$dir PKG_CONFIG_LIBDIR=$dir \
          pkg-config --define-variable=prefix="$root$prefix" --cflags --libs "$pc")
  echo "$pc: $flags"
  # shellcheck disable=SC2086
  if ! cc -o "$tmp/probe_$pc" "$probe" $flags -ldl 2>"$tmp/cc.log"; then
    cat "$tmp/cc.log"; echo "FAIL: building with pkg-config --cflags --libs $pc"; fail=1; continue
  fi
  run_env=()
  [ "$pc" = ufi ] && run_env=(LD_LIBRARY_PATH="$root$libdir")  # (ufi.pc sets no run path, as is usual)
  out=$(env "${run_env[@]}" UFI_LOG_LEVEL=error "$tmp/probe_$pc") || { echo "$out"; echo "FAIL: the $pc probe"; fail=1; continue; }
  echo "$out"
  check grep -q "^provider ufi" <<<"$out"
  if [ "$pc" = libfabric ]; then
    check grep -q "^library $root$libdir/$compat/libfabric.so.1" <<<"$out"
  else
    check grep -q "^library $root$libdir/libufi.so" <<<"$out"
  fi
done
[ $fail -eq 0 ] && echo "PASS: installed under $root$prefix, built with pkg-config alone"
exit $fail
