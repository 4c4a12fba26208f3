#!/bin/sh
# vnpu-bench's command line: exit codes, --help, and real runs on DEVICE
# (default CPU; a conv model from libonnx-testdata) whose report, JSON and
# trace are checked. An NPU device that is not present skips (77).
bench=$1
device=${2:-CPU}
case $device in
NPU*)	grep -qs DRIVER=vnpu /sys/class/drm/renderD*/device/uevent ||
		{ echo "skip: no vnpu device"; exit 77; } ;;
esac
model=/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding/model.onnx
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

expect() {
	want=$1; shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" != "$want" ]; then
		echo "not ok - '$*' exited $got, want $want"; cat "$tmp/err"
		fails=$((fails + 1))
	else
		echo "ok - '$*' exits $want"
	fi
}

expect 0 "$bench" --help
grep -q '^usage: vnpu-bench' "$tmp/out" || { echo "not ok - --help to stdout"; fails=$((fails + 1)); }
expect 2 "$bench"
expect 2 "$bench" -m "$model" -api fast
expect 2 "$bench" -m "$model" -nireq 0
expect 2 "$bench" -m "$model" -niter x
expect 2 "$bench" -m "$model" -niter 5 -t 1
expect 2 "$bench" -m "$model" -hint fastest
expect 2 "$bench" -m "$model" -infer_precision f64
expect 2 "$bench" -m "$model" -infer_precision ''
expect 2 "$bench" -m "$model" -shape '[1,2'
expect 2 "$bench" -m "$model" -io pinned
expect 2 "$bench" -m "$model" --no-such-option
expect 2 "$bench" -m "$model" extra
expect 2 "$bench" -m
expect 1 "$bench" -m /nonexistent.onnx
expect 1 "$bench" -m "$model" -d NO_SUCH_DEVICE -niter 1
expect 1 "$bench" -m "$model" -niter 1 --json /nonexistent/dir/x.json

if [ -f "$model" ]; then
	for api in sync async; do
		expect 0 "$bench" -m "$model" -d "$device" -api $api -niter 50 -pc \
			--json "$tmp/r.json" --trace "$tmp/t.json"
		for key in 'Read' 'Compile' 'First inference' 'Count' 'Duration' 'median' 'average' 'min' \
			'max' 'p90' 'p99' 'Throughput' 'Per-layer counters'; do
			grep -q "$key" "$tmp/out" || { echo "not ok - no '$key' in the report"; fails=$((fails + 1)); }
		done
		/usr/bin/python3 - "$tmp/r.json" "$tmp/t.json" $api <<'PY' || fails=$((fails + 1))
import json, sys
r = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))
api = sys.argv[3]
assert r["count"] == 50, r["count"]
assert r["read_ms"] > 0 and r["compile_ms"] > 0 and r["first_inference_ms"] > 0, r
assert r["throughput_fps"] > 0 and r["latency_ms"]["min"] <= r["latency_ms"]["median"] <= r["latency_ms"]["max"]
assert r["layers"], "no layers"
ev = [e for e in t["traceEvents"] if e["ph"] == "X"]
stages = {e["name"] for e in ev if e["cat"] == "stage"}
assert {"preprocess", "upload", "submit", "wait", "download", "postprocess"} <= stages, stages
assert any(e["cat"] == "layer" for e in ev), "no layers in the trace"
assert any(e["cat"] == "job" for e in ev), "no jobs in the trace"
# A job ends before the wait that saw it end. One request's jobs run one
# after the other; the async pipeline's requests may run side by side.
waits = {}
for e in ev:
    if e["name"] == "wait":
        k = e["args"]["run"]
        waits[k] = max(waits.get(k, 0), e["ts"] + e["dur"])
for e in ev:
    if e["cat"] == "job":
        assert e["ts"] + e["dur"] <= waits[e["args"]["run"]] + 0.01, ("job after its wait", e)
jobs = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e["cat"] == "job")
if api == "sync":
    assert all(a[1] <= b[0] + 0.01 for a, b in zip(jobs, jobs[1:])), "sync jobs overlap"
assert len({e["args"]["run"] for e in ev}) == 50
print("ok - JSON report and trace parse")
PY
	done
	# Each -io gives the same report; on the NPU the driver's counters say
	# what was copied: nothing with the device's own or remote tensors.
	for io in device host remote; do
		expect 0 "$bench" -m "$model" -d "$device" -api sync -niter 5 -io $io \
			--json "$tmp/io.json"
		/usr/bin/python3 - "$tmp/io.json" "$io" "$device" <<'PY' || fails=$((fails + 1))
import sys, json
r = json.load(open(sys.argv[1]))
io, device = sys.argv[2], sys.argv[3]
assert r["count"] == 5, r["count"]
copied = r.get("driver_bytes_copied")
if device.startswith("NPU"):
    assert copied is not None, "no driver counters on the NPU"
    assert (copied > 0) == (io == "host"), (io, copied)
print("ok - -io %s: %s bytes copied by the driver" % (io, copied))
PY
	done
	# -infer_precision reaches the compiled model (its report and JSON).
	for p in f32 f16 bf16; do
		expect 0 "$bench" -m "$model" -d "$device" -api sync -niter 3 \
			-infer_precision $p --json "$tmp/p.json"
		grep -q "^Precision  *$p\$" "$tmp/out" ||
			{ echo "not ok - -infer_precision $p: not in the report"; fails=$((fails + 1)); }
		grep -q "\"precision\": \"$p\"" "$tmp/p.json" ||
			{ echo "not ok - -infer_precision $p: not in the JSON"; fails=$((fails + 1)); }
	done
else
	echo "skip - $model is missing"
fi
[ "$fails" = 0 ]
