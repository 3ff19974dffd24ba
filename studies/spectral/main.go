// Command spectral writes the generated non-convex data sets of the first
// measurement of the spectral start and of -method spectral
// (studies/spectral/README.md): concentric rings, interleaved half-moons
// and interleaved spirals in the plane, with Gaussian noise, seeded, as
// CSV files with the columns x, y and label.
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
)

// shape draws the point t in [0, 1) of class c of k classes, before noise.
type shape struct {
	name  string
	k     int
	noise float64
	point func(c int, t float64) (x, y float64)
}

var shapes = []shape{
	// Rings of radius 1, 2 and 3 about the origin.
	{"rings", 3, 0.12, func(c int, t float64) (float64, float64) {
		r, a := float64(c+1), 2*math.Pi*t
		return r * math.Cos(a), r * math.Sin(a)
	}},
	// Two half-moons, one upside down and shifted into the other's mouth.
	{"moons", 2, 0.08, func(c int, t float64) (float64, float64) {
		a := math.Pi * t
		if c == 0 {
			return math.Cos(a), math.Sin(a)
		}
		return 1 - math.Cos(a), 0.5 - math.Sin(a)
	}},
	// Two spirals of one and a half turns, the second turned by π.
	{"spirals", 2, 0.1, func(c int, t float64) (float64, float64) {
		a := 3 * math.Pi * (0.15 + 0.85*t)
		r := a / math.Pi
		a += math.Pi * float64(c)
		return r * math.Cos(a), r * math.Sin(a)
	}},
}

func main() {
	n := flag.Int("n", 3000, "rows of each set, split evenly among its classes")
	seed := flag.Uint64("seed", 1, "seed of the draws")
	out := flag.String("o", ".", "directory of the CSV files")
	only := flag.String("shape", "", "write only this shape: rings, moons or spirals")
	flag.Parse()
	for _, s := range shapes {
		if *only != "" && s.name != *only {
			continue
		}
		if err := write(filepath.Join(*out, s.name+".csv"), s, *n, *seed); err != nil {
			fmt.Fprintln(os.Stderr, "spectral:", err)
			os.Exit(1)
		}
	}
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
		x, y := s.point(c, rng.Float64())
		fmt.Fprintf(w, "%.6f,%.6f,%d\n", x+s.noise*rng.NormFloat64(), y+s.noise*rng.NormFloat64(), c)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
