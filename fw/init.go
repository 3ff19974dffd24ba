package fw

import (
	"fmt"
	"math/rand/v2"

	"github.com/ssnmf/ssnmf/internal/enum"
)

// Start chooses the initial point.
type Start int

const (
	// StartRandom draws every entry uniformly from [0, 1) and normalizes each
	// row to sum 1.
	StartRandom Start = iota
	// StartCorners puts each row on a vertex of its simplex drawn uniformly:
	// a random one-hot row.
	StartCorners
)

var startNames = [...]string{StartRandom: "random", StartCorners: "corners"}

// String returns the start's name as the command line spells it.
func (s Start) String() string { return enum.Name(startNames[:], s, "Start") }

// ParseStart returns the start named s ("random" or "corners").
func ParseStart(s string) (Start, error) { return enum.Parse[Start](startNames[:], s, "init") }

// Initialize fills w (n×k, row-major) with a feasible starting point drawn
// from the seeded generator: the same seed gives the same bits.
func Initialize(w []float64, k int, start Start, seed uint64) error {
	if k < 1 || len(w)%k != 0 {
		return fmt.Errorf("fw: cannot initialize %d values with k = %d", len(w), k)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5353_4e4d_46)) // "SSNMF"
	for i := 0; i < len(w); i += k {
		row := w[i : i+k]
		switch start {
		case StartRandom:
			var sum float64
			for j := range row {
				row[j] = float64(rng.Float64())
				sum += row[j]
			}
			if sum == 0 {
				row[0], sum = 1, 1
			}
			for j := range row {
				row[j] /= sum
			}
		case StartCorners:
			clear(row)
			row[rng.IntN(k)] = 1
		default:
			return fmt.Errorf("fw: unknown start %v", start)
		}
	}
	return nil
}
