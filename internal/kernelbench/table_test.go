package kernelbench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/tile"
)

// report returns a report of p = 16, k = 10 and the families go and avx2,
// avx2's rates ten times go's but for the kNN build's and its screen's,
// knnAVX2 and twice it (NoKernel for both if knnAVX2 is); go's passes are not timed if fallbackReps is 0.
func report(cpu string, fallbackReps int, knnAVX2 float64) *Report {
	fams := []Family{
		{ISA: tile.ISAGo, Peak: 1e10, Probe: "scalar float32", Reps: fallbackReps},
		{ISA: tile.ISAAVX2, Peak: 1e11, Probe: "avx2 float32x8", Reps: 3},
	}
	goRate := func(v float64) float64 {
		if fallbackReps == 0 {
			return 0
		}
		return v
	}
	rows := passes(16, []int{10})
	for i, v := range []float64{1e8, 9e7, 7e7, 2e8, 3e8} {
		rows[i].Rate = map[tile.ISA]float64{tile.ISAGo: goRate(v), tile.ISAAVX2: 10 * v}
	}
	rows[3].Rate[tile.ISAAVX2] = knnAVX2
	rows[4].Rate[tile.ISAAVX2] = 2 * knnAVX2
	if knnAVX2 == NoKernel {
		rows[4].Rate[tile.ISAAVX2] = NoKernel
	}
	return &Report{
		Settings: Settings{N: 20000, Ps: []int{16}, Ks: []int{10}, Reps: 3, FallbackReps: fallbackReps,
			Workers: 2, BlockSize: 256, Precision: tile.Float32, Probe: 300 * time.Millisecond},
		CPU: cpu, Features: "amd64: avx avx2 fma", Families: fams, Rows: rows,
	}
}

func TestWriteHeader(t *testing.T) {
	for _, tc := range []struct{ name, cpu, want string }{
		{"model known", "AMD EPYC", "cpu: AMD EPYC (amd64: avx avx2 fma)\n"},
		{"model unknown", "", "cpu: amd64: avx avx2 fma\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := report(tc.cpu, 1, 4e8)
			r.Families = r.Families[:1] // go alone: its dense passes are known on every CPU
			var b bytes.Buffer
			if err := r.WriteHeader(&b); err != nil {
				t.Fatal(err)
			}
			want := tc.want +
				"kernels: go (go: the portable kernel, the baseline); dense passes (gen, P·S, P·W): go\n\n" +
				"kernel  FMA peak flop/s  probe (2 workers, 300ms)\n" +
				"go      1e+10            scalar float32\n\n"
			if b.String() != want {
				t.Errorf("header:\n%s\nwant:\n%s", b.String(), want)
			}
		})
	}
}

const tableLegend = "entries/s count all n² entries (the upper triangle of tiles is generated once); speed-up is\n" +
	"over go; % of FMA peak counts 2p+24 flops per generated entry, plus 4k for P·W, and 2p for the\n" +
	"kNN build (the 30-nearest-neighbour graph, exact) and for its distance kernel alone (screen:\n" +
	"every tile, each row's threshold at its 30th nearest), against the family's own probe (go:\n"

func TestWriteTable(t *testing.T) {
	for _, tc := range []struct {
		name         string
		fallbackReps int
		knnAVX2      float64
		want         string
	}{
		{"all measured", 1, 4e8, "" +
			"   p   k    pass  kernel  entries/s  speed-up  % of FMA peak\n" +
			"  16   -     gen      go      1e+08         -          28.0%\n" +
			"  16   -     gen    avx2      1e+09     10.0x          28.0%\n" +
			"  16  10     P·S      go      9e+07         -          25.2%\n" +
			"  16  10     P·S    avx2      9e+08     10.0x          25.2%\n" +
			"  16  10     P·W      go      7e+07         -          33.6%\n" +
			"  16  10     P·W    avx2      7e+08     10.0x          33.6%\n" +
			"  16   -     kNN      go      2e+08         -          32.0%\n" +
			"  16   -     kNN    avx2      4e+08      2.0x           6.4%\n" +
			"  16   -  screen      go      3e+08         -          48.0%\n" +
			"  16   -  screen    avx2      8e+08      2.7x          12.8%\n\n" +
			tableLegend + "scalar FMAs); medians of 3 (vector kernels) and 1 (go) passes.\n" +
			"p=16: kNN build at 222% (go), 44% (avx2) of the P·S pass (k=10)\n"},
		{"go skipped, a kernel missing", 0, NoKernel, "" +
			"   p   k    pass  kernel  entries/s  speed-up  % of FMA peak\n" +
			"  16   -     gen      go          -         -              -\n" +
			"  16   -     gen    avx2      1e+09         -          28.0%\n" +
			"  16  10     P·S      go          -         -              -\n" +
			"  16  10     P·S    avx2      9e+08         -          25.2%\n" +
			"  16  10     P·W      go          -         -              -\n" +
			"  16  10     P·W    avx2      7e+08         -          33.6%\n" +
			"  16   -     kNN      go          -         -              -\n" +
			"  16   -     kNN    avx2         -*         -              -\n" +
			"  16   -  screen      go          -         -              -\n" +
			"  16   -  screen    avx2         -*         -              -\n\n" +
			"-* avx2: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := report("", tc.fallbackReps, tc.knnAVX2).WriteTable(&b); err != nil {
				t.Fatal(err)
			}
			// A missing kernel's footnote says why for this CPU and build.
			got, want := b.String(), tc.want
			if strings.HasSuffix(want, "-* avx2: ") {
				got = got[:min(len(got), len(want))]
			}
			if got != want {
				t.Errorf("table:\n%s\nwant:\n%s", b.String(), tc.want)
			}
		})
	}
}
