package solver

import (
	"context"
	"time"

	"github.com/ssnmf/ssnmf/fw"
)

// Meter is the affinity of a run with its passes counted and timed, for
// the summary's entries per second: the passes of Mul and MulOneHot, and
// those of every complete sweep.
type Meter struct {
	fw.Affinity
	Passes  int           // the passes over P so far
	Elapsed time.Duration // their time
}

// Mul is the affinity's Mul, counted as one pass.
func (m *Meter) Mul(ctx context.Context, dst, w []float64, k int, rowSums []float64) (float64, error) {
	defer m.count(time.Now(), 1)
	return m.Affinity.Mul(ctx, dst, w, k, rowSums)
}

// MulOneHot is the affinity's MulOneHot, counted as one pass.
func (m *Meter) MulOneHot(ctx context.Context, dst []float64, s []int32, k int) error {
	defer m.count(time.Now(), 1)
	return m.Affinity.MulOneHot(ctx, dst, s, k)
}

// Sweep is the affinity's Sweep, whose passes are counted from the pull of
// its first block to the push of its last.
func (m *Meter) Sweep(k int, opt fw.SweepOptions) (fw.Sweep, error) {
	sw, err := m.Affinity.Sweep(k, opt)
	if err != nil {
		return nil, err
	}
	return &meteredSweep{Sweep: sw, m: m}, nil
}

// PassTime returns the mean time of a pass; 0 before the first.
func (m *Meter) PassTime() time.Duration {
	if m.Passes == 0 {
		return 0
	}
	return m.Elapsed / time.Duration(m.Passes)
}

func (m *Meter) count(start time.Time, passes int) {
	m.Passes += passes
	m.Elapsed += time.Since(start)
}

// meteredSweep times a sweep from the pull of its first block to the push
// of its last.
type meteredSweep struct {
	fw.Sweep
	m     *Meter
	start time.Time
}

// Pull starts the sweep's clock at its first block.
func (s *meteredSweep) Pull(ctx context.Context, r0, r1 int, pw []float64, d *fw.Pending) (fw.Block, error) {
	if r0 == 0 {
		s.start = time.Now()
	}
	return s.Sweep.Pull(ctx, r0, r1, pw, d)
}

// Push counts the sweep's passes and their time at its last block.
func (s *meteredSweep) Push(ctx context.Context, r0, r1 int, pw []float64, d *fw.Pending) error {
	err := s.Sweep.Push(ctx, r0, r1, pw, d)
	if b := s.Blocks(); err == nil && r1 == b[len(b)-1] {
		s.m.count(s.start, s.Passes())
	}
	return err
}

// EntriesPerSecond is the rate of a pass over the given number of entries
// of P (n² for a dense P, all of them counted; the stored ones of a graph)
// that took d.
func EntriesPerSecond(entries float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return entries / d.Seconds()
}
