#!/usr/bin/env bash
# Regenerate vmlinux/vmlinux.h from the running kernel's BTF.
# CO-RE relocates field offsets at load time, so the committed header only
# needs the types to exist; regenerate when a newer kernel type is needed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
btf=${1:-/sys/kernel/btf/vmlinux}
[ -r "$btf" ] || { echo "gen-vmlinux: $btf not readable: kernel built without BTF?" >&2; exit 1; }
bpftool btf dump file "$btf" format c > "$top/vmlinux/vmlinux.h.tmp"
mv "$top/vmlinux/vmlinux.h.tmp" "$top/vmlinux/vmlinux.h"
echo "wrote vmlinux/vmlinux.h from $btf"
