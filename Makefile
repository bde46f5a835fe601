# uvmmu: cycle-accurate GPU unified-memory page-migration hardware, in Go,
# with Verilog export. `make test` is the whole test suite; see README.md.

GO        ?= go
PKGS      := ./...
# Debian packages that provide the Verilog tools the test suite drives.
SIM_PKGS  := iverilog verilator yosys
SIM_TOOLS := iverilog vvp verilator yosys

.PHONY: test lint tools bench verilog verilog-check cosim-long area speed pgo

## test: formatting and vet checks, then every Go test (block testbenches,
## kernel tests, and the Verilog lint and co-simulation suites).
test: tools lint
	UVMMU_REQUIRE_SIM=1 $(GO) test -count=1 -timeout 30m $(PKGS)

## lint: gofmt and go vet.
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)

## tools: make sure Icarus Verilog, Verilator and Yosys are installed;
## installs them with apt-get when running as root.
tools:
	@missing=""; for t in $(SIM_TOOLS); do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing$$missing (Debian packages: $(SIM_PKGS))"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(SIM_PKGS) >/dev/null; \
	  else \
	    echo "missing tools:$$missing"; \
	    echo "install the Debian/Ubuntu packages: sudo apt-get install $(SIM_PKGS)"; \
	    exit 1; \
	  fi; \
	fi

## bench: kernel and block benchmarks with allocation counts.
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## verilog: regenerate the RTL under verilog/rtl from the Go generator, then
## lint every module and co-simulate it against the Go models.
verilog: tools
	$(GO) run ./verilog/cmd/vgen -out verilog/rtl
	UVMMU_REQUIRE_SIM=1 $(GO) test -count=1 ./tb/...

## verilog-check: fail when the committed RTL differs from what the
## generator emits.
verilog-check:
	$(GO) run ./verilog/cmd/vgen -check verilog/rtl

## cosim-long: co-simulate every top for 10^7 cycles in both simulators.
cosim-long: tools
	UVMMU_REQUIRE_SIM=1 UVMMU_COSIM_CYCLES=10000000 $(GO) test -count=1 -timeout 0 -run Cosim ./tb/...

## speed: Go model (fast kernel, checked kernel beside) against a Verilator
## -O3 build of the emitted RTL on the same stimulus (uvmmu_dcq, uvmmu_da,
## grit_pa_cache), output checksums compared, cycles per second of each;
## then the full system on every workload at 150% under um, uvmmu and
## ideal at SPEED_SCALE, set-up timed apart from the simulation loop.
## Medians of SPEED_RUNS runs, written with the machine and its load to
## docs/performance.md.
SPEED_CYCLES ?= 1000000
SPEED_RUNS   ?= 3
SPEED_SCALE  ?= 0.5
speed: tools
	UVMMU_REQUIRE_SIM=1 UVMMU_SPEED_CYCLES=$(SPEED_CYCLES) UVMMU_SPEED_RUNS=$(SPEED_RUNS) \
	UVMMU_SPEED_SCALE=$(SPEED_SCALE) UVMMU_SPEED_REPORT=$(CURDIR)/docs/performance.md \
	$(GO) test -count=1 -v -timeout 0 -run '^TestSpeed$$' ./tb/

## pgo: the profile the go command uses to optimize every build of uvmsim
## (sim/cmd/uvmsim/default.pgo): CPU profiles of six system runs at 150%
## oversubscription, taken from a build without it, merged. Results do not
## depend on it; remake it when the simulator's hot paths change.
PGO_RUNS := sssp:um:1 sssp:uvmmu:0.5 fdtd:um:0.5 srad:ideal:0.5 bfs:uvmmu:0.5 hotspot:um:0.5
PGO_DIR  ?= out/pgo
pgo:
	mkdir -p $(PGO_DIR)
	$(GO) build -pgo=off -o $(PGO_DIR)/uvmsim ./sim/cmd/uvmsim
	for r in $(PGO_RUNS); do \
	  set -- $$(echo $$r | tr : ' '); \
	  $(PGO_DIR)/uvmsim run --workload $$1 --policy $$2 --scale $$3 --oversub 150 \
	    --cpuprofile $(PGO_DIR)/$$1-$$2.pprof > /dev/null || exit 1; \
	done
	$(GO) tool pprof -proto $(PGO_DIR)/*.pprof > $(PGO_DIR)/merged.pgo
	mv $(PGO_DIR)/merged.pgo sim/cmd/uvmsim/default.pgo

## area: Yosys area and logic-depth report per block, plus per-operation
## latencies from the Go models. AREA_FLAGS="--liberty FILE --json out.json".
area: tools
	$(GO) run ./tb/cmd/area $(AREA_FLAGS)

## run: the headline experiment, UVMMU Fig. 4: every built-in workload
## under um, uvmsmart and uvmmu at 100/125/150% oversubscription at the
## default sizes, RUN_JOBS runs at a time. Prints the speedup table and
## writes out/fig4/ (fig4.csv, fig4.json, fig4.svg, results.csv,
## results.json).
RUN_JOBS ?= 2
.PHONY: run
run:
	@mkdir -p out
	$(GO) build -o out/uvmsim ./sim/cmd/uvmsim
	out/uvmsim experiment fig4 --jobs $(RUN_JOBS) --out out/fig4
