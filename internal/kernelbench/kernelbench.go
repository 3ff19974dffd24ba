// Package kernelbench times the tile passes of every kernel family this
// CPU runs against that family's own FMA peak: the measuring behind
// "ssnmf bench".
//
// One idea: a rate means little alone, so each family's passes (the
// Gaussian tiles' generation alone, P·S, P·W and the exact kNN build) are
// timed on the same random points in the same run as a short probe of
// that family's fused multiply-adds (tile.FMAPeak), and the report gives
// each rate as entries per second, as a speed-up over the portable kernel
// and as a share of the peak under the kernels' flop model. The kNN build
// is timed whole and its distance kernel alone (the screen), so that the
// kernel's share of the peak is not hidden by the build's lists and
// assembly, nor theirs by the kernel.
package kernelbench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/tile"
)

// Settings are what Run measures and how.
type Settings struct {
	// N is the number of random points, at least 2.
	N int
	// Ps are the feature dimensions and Ks the numbers of clusters timed,
	// each at least 1; Ks[0] is the P·S pass the kNN build is compared
	// with.
	Ps, Ks []int
	// Reps is the number of passes timed per figure of a vector kernel,
	// at least 1, and FallbackReps that of the portable kernel, go; 0
	// skips go's passes (its FMA peak is still probed).
	Reps, FallbackReps int
	// Workers is the number of goroutines of the passes and the probes,
	// and BlockSize the tile edge; both at least 1.
	Workers, BlockSize int
	// Precision is that of the kernel values.
	Precision tile.Precision
	// Probe is how long each family's FMA probe runs; positive.
	Probe time.Duration
	// Log, if not nil, receives a line as each figure's timing begins.
	Log io.Writer
	// Probed, if not nil, is called with the report once the families
	// and their peaks are known, before any pass is timed (the command
	// prints the table's header there); an error it returns ends Run.
	Probed func(*Report) error
}

// Report is what Run measured.
type Report struct {
	// Settings are the settings of the run.
	Settings Settings
	// CPU is the CPU's model name (/proc/cpuinfo), or "" where unknown,
	// and Features its vector features (tile.CPUFeatures).
	CPU, Features string
	// Families are the kernel families this CPU runs, the portable one
	// (the baseline) first, then the vector ones from the narrowest.
	Families []Family
	// Rows are the passes timed, for each of Settings.Ps in turn: gen,
	// P·S for each of Settings.Ks, P·W for each of them, kNN and screen.
	Rows []Row
}

// Family is a kernel family of the run, with its FMA peak.
type Family struct {
	// ISA is the family.
	ISA tile.ISA
	// Peak is its FMA throughput in flop/s, and Probe the name of the
	// instruction that measured it ("avx2 float32x8", "scalar float32").
	Peak  float64
	Probe string
	// Reps is the number of passes timed per figure of the family.
	Reps int
}

// Pass names a pass that Run times.
type Pass string

// The passes Run times.
const (
	// Gen generates the Gaussian tiles alone (their statistics).
	Gen Pass = "gen"
	// PS is the P·S pass: P times a one-hot matrix.
	PS Pass = "P·S"
	// PW is the P·W pass: P times a dense n×k matrix.
	PW Pass = "P·W"
	// KNN is the build of the exact kNN graph.
	KNN Pass = "kNN"
	// Screen is the kNN build's distance kernel alone: every tile of the
	// upper triangle screened (tile.Pairs.Near) with each row's threshold
	// at the distance of its graph.DefaultNeighbors-th nearest row, as
	// late in a search, where few pairs pass.
	Screen Pass = "screen"
)

// Row is one pass timed, with its rate for each family.
type Row struct {
	// P is the feature dimension and K the number of clusters (0 for the
	// passes without one, gen, kNN and screen).
	P, K int
	// Pass is the pass timed.
	Pass Pass
	// FlopsPerEntry is the number of flops per generated entry in the
	// vector kernels' model.
	FlopsPerEntry float64
	// Rate is the median rate in entries per second (all n² entries
	// counted) of each family: 0 if not measured, NoKernel if the family
	// has no kernel for the pass in this build.
	Rate map[tile.ISA]float64
}

// NoKernel is the rate of a pass that a family has no kernel for in this
// build.
const NoKernel = -1

// Run probes the FMA peak of every family this CPU runs, then times every
// pass of every family for each of s.Ps and s.Ks on s.N random points.
func Run(ctx context.Context, s Settings) (*Report, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	r := &Report{Settings: s, CPU: cpuModel(), Features: tile.CPUFeatures()}
	var err error
	if r.Families, err = families(ctx, s); err != nil {
		return nil, err
	}
	if s.Probed != nil {
		if err := s.Probed(r); err != nil {
			return nil, err
		}
	}
	if r.Rows, err = rows(ctx, s, r.Families); err != nil {
		return nil, err
	}
	return r, nil
}

// check returns an error naming the first setting out of its range.
func (s Settings) check() error {
	switch {
	case s.N < 2:
		return fmt.Errorf("kernelbench: N = %d, want at least 2", s.N)
	case len(s.Ps) == 0 || slices.Min(s.Ps) < 1:
		return fmt.Errorf("kernelbench: Ps = %v, want dimensions of at least 1", s.Ps)
	case len(s.Ks) == 0 || slices.Min(s.Ks) < 1:
		return fmt.Errorf("kernelbench: Ks = %v, want numbers of clusters of at least 1", s.Ks)
	case s.Reps < 1 || s.FallbackReps < 0:
		return fmt.Errorf("kernelbench: Reps = %d and FallbackReps = %d, want at least 1 and at least 0", s.Reps, s.FallbackReps)
	case s.Workers < 1 || s.BlockSize < 1:
		return fmt.Errorf("kernelbench: Workers = %d and BlockSize = %d, want at least 1 each", s.Workers, s.BlockSize)
	case s.Probe <= 0:
		return fmt.Errorf("kernelbench: Probe = %v, want a positive duration", s.Probe)
	}
	return nil
}

// hasDense reports whether the family k has the dense passes' kernels
// (the portable one has them all).
func hasDense(k tile.ISA) bool { return k == tile.ISAGo || tile.DenseVectorKernel(k) }

// families returns the families this CPU runs, the portable one (the
// baseline) first, then the vector ones from the narrowest, with their
// FMA peaks.
func families(ctx context.Context, s Settings) ([]Family, error) {
	var fams []Family
	supported := tile.SupportedISAs()
	for i := len(supported) - 1; i >= 0; i-- {
		f := Family{ISA: supported[i], Reps: s.Reps}
		if f.ISA == tile.ISAGo {
			f.Reps = s.FallbackReps
		}
		var err error
		if f.Peak, f.Probe, err = tile.FMAPeak(ctx, f.ISA, s.Precision, s.Workers, s.Probe); err != nil {
			return nil, fmt.Errorf("kernelbench: FMA probe of %s: %w", f.ISA, err)
		}
		fams = append(fams, f)
	}
	return fams, nil
}

// passes returns the rows to time for dimension p, their rates not yet
// measured.
func passes(p int, ks []int) []Row {
	// The flop model of the vector kernels per generated entry: p FMAs
	// of the dot product, about 12 vector operations for the exponent
	// and its argument, and for P·W k FMAs in each direction.
	gen := 2*float64(p) + 2*12
	out := []Row{{P: p, Pass: Gen, FlopsPerEntry: gen}}
	for _, k := range ks {
		out = append(out, Row{P: p, K: k, Pass: PS, FlopsPerEntry: gen})
	}
	for _, k := range ks {
		out = append(out, Row{P: p, K: k, Pass: PW, FlopsPerEntry: gen + 4*float64(k)})
	}
	// The kNN build screens distances with the same dot products and
	// no exponent.
	return append(out, Row{P: p, Pass: KNN, FlopsPerEntry: 2 * float64(p)}, Row{P: p, Pass: Screen, FlopsPerEntry: 2 * float64(p)})
}

// rows times every pass of every family for each p and k.
func rows(ctx context.Context, s Settings, fams []Family) ([]Row, error) {
	var out []Row
	for _, p := range s.Ps {
		x := features(s.N, p)
		g, err := tile.NewGaussianPrecision(x, s.N, p, 1/(2*float64(p)), s.Precision)
		if err != nil {
			return nil, fmt.Errorf("kernelbench: the Gaussian kernel of p=%d: %w", p, err)
		}
		var th []float64 // the screen's thresholds, once timed
		for _, r := range passes(p, s.Ks) {
			r.Rate = map[tile.ISA]float64{}
			for _, f := range fams {
				has := hasDense(f.ISA)
				if r.Pass == KNN || r.Pass == Screen {
					has = knnKernel(x, p, f.ISA)
				}
				switch {
				case !has:
					r.Rate[f.ISA] = NoKernel
					continue
				case f.Reps == 0:
					continue
				}
				if s.Log != nil {
					fmt.Fprintf(s.Log, "bench: p=%d %s k=%d %s\n", r.P, r.Pass, r.K, f.ISA)
				}
				if r.Pass == Screen {
					if th == nil {
						if th, err = thresholds(ctx, x, s.N, p, s.Workers); err != nil {
							return nil, err
						}
					}
					if r.Rate[f.ISA], err = timeScreen(ctx, s, f, x, p, th); err != nil {
						return nil, err
					}
					continue
				}
				e := &tile.Engine{Source: g, BlockSize: s.BlockSize, Workers: s.Workers, ISA: f.ISA}
				if r.Rate[f.ISA], err = timePass(ctx, e, x, r, s.N, f.Reps); err != nil {
					return nil, err
				}
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// knnKernel reports whether the kNN build of family k screens with that
// family's kernel, rather than with the portable one under its name: the
// screen of a few of the rows of x (n×p) names its kernel.
func knnKernel(x []float64, p int, k tile.ISA) bool {
	m := min(len(x)/max(p, 1), 8)
	ps, err := tile.NewPairs(x[:m*p], m, p, max(m, 1), k)
	return err == nil && strings.HasPrefix(ps.Kernel(), k.String()+"/")
}

// cpuModel returns the CPU's model name from /proc/cpuinfo, or "" where
// the file or the line is missing (arm64 Linux has none).
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	return modelName(string(b))
}

// modelName returns the value of the "model name" line of the text of
// /proc/cpuinfo, or "" if it has none.
func modelName(cpuinfo string) string {
	for line := range strings.SplitSeq(cpuinfo, "\n") {
		if key, val, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(val)
		}
	}
	return ""
}

// features returns n points in p dimensions in three Gaussian clusters,
// from a fixed seed.
func features(n, p int) []float64 {
	rng := rand.New(rand.NewPCG(1, uint64(p)))
	x := make([]float64, n*p)
	for i := range n {
		c := float64(rng.IntN(3))
		for q := range p {
			x[i*p+q] = c + rng.NormFloat64()
		}
	}
	return x
}

// timePass runs pass r reps times and returns the median rate in entries
// per second.
func timePass(ctx context.Context, e *tile.Engine, x []float64, r Row, n, reps int) (float64, error) {
	k := max(r.K, 1)
	y := make([]float64, n*k)
	w := make([]float64, n*k)
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(i % k)
		w[i*k+int(s[i])] = 0.5
		w[i*k+(i+1)%k] += 0.5
	}
	rate, err := medianRate(n, reps, func() (err error) {
		switch r.Pass {
		case Gen:
			_, err = e.Stats(ctx, nil)
		case PS:
			err = e.MulOneHot(ctx, y, s, k)
		case PW:
			_, err = e.Mul(ctx, y, w, k, nil)
		case KNN:
			_, err = graph.KNN(ctx, x, n, r.P, graph.KNNOptions{Workers: e.Workers, Kernel: e.ISA})
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("bench %s p=%d k=%d: %w", r.Pass, r.P, r.K, err)
	}
	return rate, nil
}

// medianRate runs pass reps times and returns the median of its rates in
// entries per second, all n² entries counted.
func medianRate(n, reps int, pass func() error) (float64, error) {
	rates := make([]float64, reps)
	for i := range rates {
		start := time.Now()
		if err := pass(); err != nil {
			return 0, err
		}
		rates[i] = float64(n) * float64(n) / time.Since(start).Seconds()
	}
	slices.Sort(rates)
	return rates[reps/2], nil
}

// thresholds returns each row of x's squared distance to its
// graph.DefaultNeighbors-th nearest row (itself among them: a search's
// lists hold the row first), from the exact search.
func thresholds(ctx context.Context, x []float64, n, p, workers int) ([]float64, error) {
	kp, err := graph.KNNRows(ctx, x, n, p, graph.KNNOptions{Workers: workers}, 0, 1)
	if err != nil {
		return nil, fmt.Errorf("kernelbench: the screen's thresholds, p=%d: %w", p, err)
	}
	th := make([]float64, n)
	for q, i := range kp.Rows {
		th[i] = math.Inf(1)
		if c := int(kp.Count[q]); c == kp.M {
			th[i] = kp.Dist[q*kp.M+c-1]
		}
	}
	return th, nil
}

// timeScreen times family f's screen of every tile of the upper triangle
// of the blocks of x (n×p) with the thresholds th, on s.Workers
// goroutines taking the tiles in turn, f.Reps times, and returns the
// median rate in entries per second (all n² counted). The panels are
// packed before the clock starts.
func timeScreen(ctx context.Context, s Settings, f Family, x []float64, p int, th []float64) (float64, error) {
	ps, err := tile.NewPairs(x, s.N, p, s.BlockSize, f.ISA)
	if err != nil {
		return 0, fmt.Errorf("bench %s p=%d: %w", Screen, p, err)
	}
	nb := ps.Blocks()
	var tiles [][2]int
	for I := range nb {
		for J := I; J < nb; J++ {
			tiles = append(tiles, [2]int{I, J})
		}
	}
	// The tiles go to the workers in turn, in no order: a pass of the
	// screen commits nothing (ordered.Run would hold a worker back behind
	// a slow tile).
	return medianRate(s.N, f.Reps, func() error {
		var next atomic.Int64
		g, gctx := errgroup.WithContext(ctx)
		for range s.Workers {
			g.Go(func() error {
				sc := ps.NewScratch()
				for t := int(next.Add(1) - 1); t < len(tiles); t = int(next.Add(1) - 1) {
					if err := gctx.Err(); err != nil {
						return err
					}
					I, J := tiles[t][0], tiles[t][1]
					r0, r1 := ps.Rows(I)
					c0, c1 := ps.Rows(J)
					ps.Near(sc, I, J, th[r0:r1], th[c0:c1], func(int, int, float64) {})
				}
				return nil
			})
		}
		return g.Wait()
	})
}
