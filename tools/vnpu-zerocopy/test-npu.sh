#!/bin/sh
# vnpu-zerocopy on NPU.0: the dma-buf and userptr ways must run on the
# NPU's memory, copy nothing and give the copying path's output (the
# tool fails otherwise); this checks that neither was skipped. Without a
# vnpu device (the host suite 'runtime') it skips (77).
set -eu
grep -qs DRIVER=vnpu /sys/class/drm/renderD*/device/uevent ||
	{ echo "skip: no vnpu device"; exit 77; }
out=$("$1" -m "$2" -d NPU.0 -shape 4,1024,3 -niter 2)
printf '%s\n' "$out"
for way in userptr dma-buf; do
	printf '%s\n' "$out" | grep -Eq "^$way +NPU\.0 +0 .* equal$" || {
		echo "vnpu-zerocopy-npu: the $way way did not run in place" >&2
		exit 1
	}
done
