#!/bin/sh
# enter-root.sh ROOT DIR... -- COMMAND...: runs COMMAND chrooted into the Debian root ROOT,
# with each DIR mounted at its own path inside, /proc and /dev, and in the current directory.
# Run it under `unshare --mount --propagation private`, so that the mounts vanish with it.
set -e
root=$1
shift
while [ "$1" != -- ]; do
	mkdir -p "$root$1"
	mount --rbind "$1" "$root$1"
	shift
done
shift
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
exec chroot "$root" /bin/sh -c 'cd "$0" && exec "$@"' "$PWD" "$@"
