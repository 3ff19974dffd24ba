// Command spectral writes the generated non-convex data sets of the first
// measurement of the spectral start and of -method spectral
// (studies/spectral/README.md): concentric rings, interleaved half-moons,
// interleaved spirals, a disc nested in a ring, parallel elongated bars
// and two bananas about a disc in the plane, with Gaussian noise, seeded, as CSV files with the columns
// x, y and label.
//
//	go run ./studies/spectral -n 3000 -seed 1 -o DIR
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// shape draws the point t in [0, 1) of class c of k classes, before noise.
// Row i is of class cycle[i mod len(cycle)], or i mod k if cycle is nil:
// the classes' sizes are in the ratio of their counts in cycle.
type shape struct {
	name  string
	k     int
	noise float64
	point func(c int, t float64) (x, y float64)
	cycle []int
}

var shapes = []shape{
	// Rings of radius 1, 2 and 3 about the origin.
	{"rings", 3, 0.12, func(c int, t float64) (float64, float64) {
		r, a := float64(c+1), 2*math.Pi*t
		return r * math.Cos(a), r * math.Sin(a)
	}, nil},
	// Two half-moons, one upside down and shifted into the other's mouth.
	{"moons", 2, 0.08, func(c int, t float64) (float64, float64) {
		a := math.Pi * t
		if c == 0 {
			return math.Cos(a), math.Sin(a)
		}
		return 1 - math.Cos(a), 0.5 - math.Sin(a)
	}, nil},
	// Two spirals of one and a half turns, the second turned by π.
	{"spirals", 2, 0.1, func(c int, t float64) (float64, float64) {
		a := 3 * math.Pi * (0.15 + 0.85*t)
		r := a / math.Pi
		a += math.Pi * float64(c)
		return r * math.Cos(a), r * math.Sin(a)
	}, nil},
	// Nested: a disc of radius 0.6 (a third of the rows) inside a ring of
	// radius 2 (two thirds), unequal sizes as in issue 35's banana and disc.
	{"nested", 2, 0.1, func(c int, t float64) (float64, float64) {
		if c == 0 {
			r, a := 0.6*math.Sqrt(math.Mod(t*7919, 1)), 2*math.Pi*t
			return r * math.Cos(a), r * math.Sin(a)
		}
		a := 2 * math.Pi * t
		return 2 * math.Cos(a), 2 * math.Sin(a)
	}, []int{0, 1, 1}},
	// Elongated: three parallel bars of length 8, 0.8 apart, sizes 2:2:1;
	// the k-means of the plane cuts them across.
	{"elongated", 3, 0.12, func(c int, t float64) (float64, float64) {
		return 8*t - 4, 0.8 * float64(c)
	}, []int{0, 1, 0, 1, 2}},
	// Bananas: two arcs of radius 2 and 120° facing each other, "()",
	// their middles 1.6 apart and their tips crossed, 0.4 apart, about a
	// disc of radius 0.4, sizes 2:2:1: issue 35's banana and disc, added
	// after AutoEigengap was fixed, for its confirmation.
	{"bananas", 3, 0.1, func(c int, t float64) (float64, float64) {
		switch c {
		case 0:
			a := 2 * math.Pi * (1.0/3 + t/3)
			return 1.2 + 2*math.Cos(a), 2 * math.Sin(a)
		case 1:
			a := 2 * math.Pi * (t/3 - 1.0/6)
			return -1.2 + 2*math.Cos(a), 2 * math.Sin(a)
		}
		r, a := 0.4*math.Sqrt(math.Mod(t*7919, 1)), 2*math.Pi*t
		return r * math.Cos(a), r * math.Sin(a)
	}, []int{0, 1, 0, 1, 2}},
}

func main() {
	n := flag.Int("n", 3000, "rows of each set, split evenly among its classes")
	seed := flag.Uint64("seed", 1, "seed of the draws")
	out := flag.String("o", ".", "directory of the CSV files")
	only := flag.String("shape", "", "write only this shape: rings, moons, spirals, nested, elongated or bananas")
	flag.Parse()
	chosen, err := pick(*only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "spectral:", err)
		os.Exit(2)
	}
	for _, s := range chosen {
		if err := write(filepath.Join(*out, s.name+".csv"), s, *n, *seed); err != nil {
			fmt.Fprintln(os.Stderr, "spectral:", err)
			os.Exit(1)
		}
	}
}

// pick returns the shapes named only, or all if only is empty; an error
// that lists the shapes if there is none of that name.
func pick(only string) ([]shape, error) {
	if only == "" {
		return shapes, nil
	}
	var names []string
	for _, s := range shapes {
		if s.name == only {
			return []shape{s}, nil
		}
		names = append(names, s.name)
	}
	return nil, fmt.Errorf("-shape %s: no such shape; want one of %s", only, strings.Join(names, ", "))
}

// write writes n points of the shape s drawn with seed to path.
func write(path string, s shape, n int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, uint64(len(s.name))))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "x,y,label")
	for i := range n {
		c := i % s.k
		if s.cycle != nil {
			c = s.cycle[i%len(s.cycle)]
		}
		x, y := s.point(c, rng.Float64())
		fmt.Fprintf(w, "%.6f,%.6f,%d\n", x+s.noise*rng.NormFloat64(), y+s.noise*rng.NormFloat64(), c)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
