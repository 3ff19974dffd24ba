package kernelbench

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/tile"
)

// small returns settings that run in a fraction of a second.
func small() Settings {
	return Settings{N: 64, Ps: []int{3}, Ks: []int{2, 5}, Reps: 1, FallbackReps: 1,
		Workers: 2, BlockSize: 16, Precision: tile.Float32, Probe: 5 * time.Millisecond}
}

func TestRun(t *testing.T) {
	noGo := small()
	noGo.FallbackReps = 0
	twoP := small()
	twoP.Ps, twoP.Ks, twoP.Precision = []int{1, 4}, []int{3}, tile.Float64
	for _, tc := range []struct {
		name string
		s    Settings
	}{{"small", small()}, {"no go passes", noGo}, {"two dimensions, float64", twoP}} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			tc.s.Log = &log
			probed := 0
			tc.s.Probed = func(r *Report) error {
				probed++
				if len(r.Families) == 0 || len(r.Rows) != 0 {
					t.Errorf("Probed: %d families, %d rows; want the families and no rows", len(r.Families), len(r.Rows))
				}
				return nil
			}
			r, err := Run(context.Background(), tc.s)
			if err != nil {
				t.Fatal(err)
			}
			if probed != 1 {
				t.Errorf("Probed called %d times, want once", probed)
			}
			checkFamilies(t, r.Families, tc.s)
			var want []Row
			for _, p := range tc.s.Ps {
				want = append(want, passes(p, tc.s.Ks)...)
			}
			if len(r.Rows) != len(want) {
				t.Fatalf("%d rows, want %d", len(r.Rows), len(want))
			}
			timed := 0
			for i, row := range r.Rows {
				if row.P != want[i].P || row.K != want[i].K || row.Pass != want[i].Pass {
					t.Errorf("row %d: p=%d k=%d %s, want p=%d k=%d %s", i, row.P, row.K, row.Pass, want[i].P, want[i].K, want[i].Pass)
				}
				for _, f := range r.Families {
					switch rate := row.Rate[f.ISA]; {
					case rate == NoKernel && f.ISA == tile.ISAGo:
						t.Errorf("row %d: go has no kernel", i)
					case rate == 0 && f.Reps > 0, rate > 0 && f.Reps == 0, rate < 0 && rate != NoKernel:
						t.Errorf("row %d: %s rate %g with %d reps", i, f.ISA, rate, f.Reps)
					case rate > 0:
						timed++
					}
				}
			}
			if lines := strings.Count(log.String(), "\n"); lines != timed {
				t.Errorf("%d progress lines, want one per figure timed, %d:\n%s", lines, timed, log.String())
			}
		})
	}
}

// checkFamilies checks that fams are the families this CPU runs, go
// first, then the vector ones from the narrowest, with their peaks and
// repetitions.
func checkFamilies(t *testing.T, fams []Family, s Settings) {
	t.Helper()
	want := tile.SupportedISAs()
	slices.Reverse(want)
	if len(fams) != len(want) {
		t.Fatalf("%d families, want %v", len(fams), want)
	}
	for i, f := range fams {
		reps := s.Reps
		if f.ISA == tile.ISAGo {
			reps = s.FallbackReps
		}
		if f.ISA != want[i] || f.Peak <= 0 || f.Probe == "" || f.Reps != reps {
			t.Errorf("family %d: %+v, want %s with a peak and %d reps", i, f, want[i], reps)
		}
	}
}

func TestRunSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Settings)
		want string
	}{
		{"one point", func(s *Settings) { s.N = 1 }, "N = 1"},
		{"no dimensions", func(s *Settings) { s.Ps = nil }, "Ps = []"},
		{"dimension 0", func(s *Settings) { s.Ps = []int{4, 0} }, "Ps = [4 0]"},
		{"k 0", func(s *Settings) { s.Ks = []int{0} }, "Ks = [0]"},
		{"no reps", func(s *Settings) { s.Reps = 0 }, "Reps = 0"},
		{"negative fallback reps", func(s *Settings) { s.FallbackReps = -1 }, "FallbackReps = -1"},
		{"no workers", func(s *Settings) { s.Workers = 0 }, "Workers = 0"},
		{"no tile", func(s *Settings) { s.BlockSize = 0 }, "BlockSize = 0"},
		{"no probe", func(s *Settings) { s.Probe = 0 }, "Probe = 0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := small()
			tc.edit(&s)
			if _, err := Run(context.Background(), s); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run: err = %v, want one naming %q", err, tc.want)
			}
		})
	}
}

func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, small()); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("Run canceled: err = %v", err)
	}
}

func TestPasses(t *testing.T) {
	got := passes(4, []int{10, 100})
	want := []Row{
		{P: 4, Pass: Gen, FlopsPerEntry: 32},
		{P: 4, K: 10, Pass: PS, FlopsPerEntry: 32},
		{P: 4, K: 100, Pass: PS, FlopsPerEntry: 32},
		{P: 4, K: 10, Pass: PW, FlopsPerEntry: 72},
		{P: 4, K: 100, Pass: PW, FlopsPerEntry: 432},
		{P: 4, Pass: KNN, FlopsPerEntry: 8},
		{P: 4, Pass: Screen, FlopsPerEntry: 8},
	}
	if len(got) != len(want) {
		t.Fatalf("passes: %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if g, w := got[i], want[i]; g.P != w.P || g.K != w.K || g.Pass != w.Pass || g.FlopsPerEntry != w.FlopsPerEntry {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
}

func TestModelName(t *testing.T) {
	for _, tc := range []struct{ name, cpuinfo, want string }{
		{"amd64", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9B14\nflags\t: fpu\n", "AMD EPYC 9B14"},
		{"first of several", "model name : A\nmodel name : B\n", "A"},
		{"arm64, none", "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n", ""},
		{"empty", "", ""},
	} {
		if got := modelName(tc.cpuinfo); got != tc.want {
			t.Errorf("%s: modelName = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{0.02567, "0.026%"}, {0.5, "0.5%"}, {1, "1.0%"}, {43.66, "43.7%"}, {280, "280.0%"}} {
		if got := percent(tc.v); got != tc.want {
			t.Errorf("percent(%g) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestRatios(t *testing.T) {
	fams := []Family{{ISA: tile.ISAGo}, {ISA: tile.ISAAVX2}, {ISA: tile.ISAAVX512}}
	ref := Row{Rate: map[tile.ISA]float64{tile.ISAGo: 1e8, tile.ISAAVX2: 2e9, tile.ISAAVX512: NoKernel}}
	for _, tc := range []struct {
		name string
		rate map[tile.ISA]float64
		want string
	}{
		{"all measured", map[tile.ISA]float64{tile.ISAGo: 2.8e8, tile.ISAAVX2: 7e8, tile.ISAAVX512: 9e8}, "280% (go), 35% (avx2)"},
		{"go skipped", map[tile.ISA]float64{tile.ISAAVX2: 1e9}, "50% (avx2)"},
		{"none", map[tile.ISA]float64{tile.ISAGo: NoKernel}, "-"},
	} {
		if got := ratios(Row{Rate: tc.rate}, ref, fams); got != tc.want {
			t.Errorf("%s: ratios = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// BenchmarkScreen times the screen alone (timeScreen: every tile of the
// upper triangle, each row's threshold at its 30th nearest, two workers)
// on 20,000 rows of 16 standard normal features, for every vector family
// this CPU runs, and reports the median pass's entries (all n² counted)
// a second and flop/s (2p a pair, n²/2 pairs), to set against the
// family's FMA peak (`ssnmf bench`).
func BenchmarkScreen(b *testing.B) {
	const n, p = 20_000, 16
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, n*p)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	th, err := thresholds(context.Background(), x, n, p, 2)
	if err != nil {
		b.Fatal(err)
	}
	s := Settings{N: n, Workers: 2, BlockSize: tile.DefaultBlockSize}
	for _, isa := range tile.SupportedISAs() {
		if isa == tile.ISAGo {
			continue
		}
		b.Run(isa.String(), func(b *testing.B) {
			var rates []float64 // a pass's, without the panels' packing
			for b.Loop() {
				rate, err := timeScreen(context.Background(), s, Family{ISA: isa, Reps: 1}, x, p, th)
				if err != nil {
					b.Fatal(err)
				}
				rates = append(rates, rate)
			}
			slices.Sort(rates)
			rate := rates[len(rates)/2]
			b.ReportMetric(rate, "entries/s")
			b.ReportMetric(rate/2*2*p, "flop/s")
		})
	}
}
