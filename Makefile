# Orchestration only: the module is built by Kbuild, userspace by Meson.
#   make         install what is missing, build vnpu.ko and all userspace
#   make check   every test suite: host suites, then one VM boot for the rest
#   make run     the main job: boot the VM with vnpu.ko and run a model on the NPU
#                (MODEL=path.onnx for your own model)
#   make install the module (updates/, depmod), its DKMS source, udev and
#                modules-load.d files, libvnpu, headers, plugins, tools, man
#                pages and the Python package (DESTDIR= and PREFIX= as usual)
#   make check-install  README.md's install section, run in the VM as written
#                (suite install on the host first: its DKMS build is the VM's)
#   make check-debug  the device suites and stress tests in the VM on a debug
#                kernel (KASAN, lockdep, kmemleak; scripts/debug-kernel builds
#                it once into ~/.cache/vnpu: ~30 min on 2 idle cores)
#   make stress  the stress tests at full figures in the VM on Debian's kernel
#   make fuzz    each libFuzzer target for FUZZ_SECONDS (default 600), going on
#                from the corpus of the last run (build/fuzz, clang + ASan + UBSan)
#   make bench   every benchmark; make bench-models: the model zoo against
#                ONNX Runtime (MODELS=a,b ROUNDS=N SECONDS=S THREADS=1 JSON=FILE NPU=1
#                LAYERS=1)

BUILD    ?= $(CURDIR)/build
MESON_BUILD := $(BUILD)/meson
KVER     ?= $(shell $(CURDIR)/scripts/kver)
KDIR     ?= /lib/modules/$(KVER)/build
MODEL    ?=
PREFIX   ?= /usr/local
DESTDIR  ?=
VERSION  := $(shell sed -n "s/^  version: '\\([^']*\\)',$$/\\1/p" meson.build)
FUZZ_BUILD := $(BUILD)/fuzz
FUZZ_SECONDS ?= 600
FUZZ_FLAGS ?=

.PHONY: all deps module userspace fuzz-build fuzz check check-install check-debug stress run bench bench-models checkpatch clean install

all: module userspace

# A cheap check: the stamp is newer than the install script.
deps: $(BUILD)/.deps-installed
$(BUILD)/.deps-installed: scripts/install-deps
	@mkdir -p $(BUILD)
	scripts/install-deps

module: deps
	flock $(BUILD)/.kbuild.lock $(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

$(MESON_BUILD)/build.ninja: | deps
	src=$$(scripts/linux-source $(BUILD)) && \
	meson setup $(MESON_BUILD) --prefix $(PREFIX) -Dlinux_source=$$src

# linux-source runs again so that a build tree set up before it extracted
# a file (its stamp names the list) gets that file.
userspace: deps $(MESON_BUILD)/build.ninja
	scripts/linux-source $(BUILD) >/dev/null
	ninja -C $(MESON_BUILD)

# The fuzzers get a build dir of their own, with clang: the gcc build above
# stays as it is.
$(FUZZ_BUILD)/build.ninja: | deps
	CC=clang meson setup $(FUZZ_BUILD) -Dfuzzing=true \
		-Db_sanitize=address,undefined -Db_lundef=false -Dwerror=false

fuzz-build: deps $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD)

fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_FLAGS='$(FUZZ_FLAGS)' meson test -C $(FUZZ_BUILD) --no-rebuild --suite fuzz \
		--timeout-multiplier 0 --print-errorlogs --verbose

check: all fuzz-build
	scripts/check $(BUILD)

# dkms-build (suite install) makes the module that the VM's `dkms install`
# installs: compiling it under TCG would take too long.
check-install: all
	meson test -C $(MESON_BUILD) --no-rebuild --print-errorlogs --suite install
	tests/vm/run-in-vm --timeout 3000 -- meson test -C $(MESON_BUILD) --no-rebuild \
		--print-errorlogs --verbose --suite vm-install

check-debug: all
	scripts/check-debug $(BUILD)

stress: all
	tests/vm/run-in-vm --timeout 14400 -- tests/vm/stress $(MESON_BUILD)

run: all
	scripts/run-main $(BUILD) $(MODEL)

# The module goes to updates/ (it overrides a module of the same name from
# the kernel package); depmod only on the real system (a package runs it
# in its postinst). /etc files already there are the admin's: kept.
install: all
	install -D -m 644 driver/vnpu.ko $(DESTDIR)/lib/modules/$(KVER)/updates/vnpu.ko
	[ -n "$(DESTDIR)" ] || depmod -a $(KVER)
	scripts/install-dkms-source $(DESTDIR)/usr/src/vnpu-$(VERSION)
	install -D -m 644 driver/udev/70-vnpu.rules $(DESTDIR)/etc/udev/rules.d/70-vnpu.rules
	for f in modules-load.d/vnpu.conf modprobe.d/vnpu.conf; do \
		[ -e $(DESTDIR)/etc/$$f ] || install -D -m 644 driver/$$f $(DESTDIR)/etc/$$f; \
	done
	meson install -C $(MESON_BUILD) --no-rebuild --quiet $(if $(DESTDIR),--destdir $(DESTDIR))
	[ -n "$(DESTDIR)" ] || { ldconfig; udevadm control --reload 2>/dev/null || true; }

bench: all
	scripts/bench $(BUILD)

# Real models against ONNX Runtime (scripts/bench-models --help): MODELS=a,b
# for a subset, ROUNDS=N and SECONDS=S per round, THREADS=all|1, JSON=FILE,
# NPU=1 for the NPU against the CPU device in the VM too, LAYERS=1 for where
# the time goes (layer types, and the blocks where vnpu loses most).
bench-models: all
	scripts/bench-models $(if $(ROUNDS),--rounds $(ROUNDS)) $(if $(SECONDS),--seconds $(SECONDS)) \
		$(if $(THREADS),--threads $(THREADS)) $(if $(JSON),--json $(JSON)) \
		$(if $(NPU),--npu) $(if $(LAYERS),--layers) $(MESON_BUILD) $(BUILD)/npm/node_modules

CHECKPATCH = --no-tree --strict --quiet --show-types \
	     --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG,BIT_MACRO
CHECKPATCH_FILES = $(filter-out %.mod.c,$(wildcard driver/*.[ch] driver/sim/*.[ch] \
		    uapi/drm/*.h uapi/linux/*.h))
# The engine is freestanding SIMD code, also built for the host: no kernel
# attribute macros (noinline, __aligned) exist there, GCC vector types need
# typedefs, its kernels are macros over accumulator names, and checkpatch
# reads float literals like 1.5e-01 as subtractions.
ENGINE_FILES = $(wildcard driver/sim/engine/*.[ch])
ENGINE_IGNORE = NEW_TYPEDEFS,PREFER_DEFINED_ATTRIBUTE_MACRO,MACRO_ARG_REUSE
ENGINE_IGNORE := $(ENGINE_IGNORE),MACRO_ARG_PRECEDENCE,MULTISTATEMENT_MACRO_USE_DO_WHILE
ENGINE_IGNORE := $(ENGINE_IGNORE),SPACING,COMPLEX_MACRO

# BIT() does not exist for the freestanding engine and exec code, which the
# host also builds, so BIT_MACRO is not asked for.
checkpatch: deps
	src=$$(scripts/linux-source $(BUILD)) && \
	$$src/scripts/checkpatch.pl $(CHECKPATCH) -f $(CHECKPATCH_FILES) && \
	$$src/scripts/checkpatch.pl $(CHECKPATCH) --ignore $(ENGINE_IGNORE) -f $(ENGINE_FILES)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf $(MESON_BUILD) $(FUZZ_BUILD) $(BUILD)/vm
