// Writes the version-1 fixture with the release that wrote version 1 (db19432).
package main

import (
	"log"
	"math"
	"os"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store/checkpoint"
)

func main() {
	const n, k = 5, 3
	st := &fw.State{Iter: 7, Passes: 9, FrobSq: 123.456, MaxRowSum: 7.5, Prev: math.NaN(), Fresh: true,
		Elapsed: 1500 * time.Millisecond, Gram: make([]float64, k*k), W: make([]float64, n*k), PW: make([]float64, n*k)}
	for i := range st.Gram {
		st.Gram[i] = float64(i) / 3
	}
	for i := range st.W {
		st.W[i], st.PW[i] = 1/float64(i+1), math.Pi*float64(i)
	}
	name := os.Args[1]
	if err := checkpoint.Save(name, st, []byte(`{"k":3}`), []byte("iter,objective\n0,1\n")); err != nil {
		log.Fatal(err)
	}
	c, err := checkpoint.Load(name, func(n, k int) ([]float64, []float64, error) {
		return make([]float64, n*k), make([]float64, n*k), nil
	})
	if err != nil || c.N != n || c.K != k {
		log.Fatal(err)
	}
	checkpoint.Dump(os.Stdout, name)
}
