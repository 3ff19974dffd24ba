// Writes the version-2 fixtures with the release that writes version 2 (539f197).
package main

import (
	"log"
	"math"
	"os"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store/checkpoint"
)

func state(n, k int) *fw.State {
	st := &fw.State{Iter: 7, Passes: 9, FrobSq: 123.456, MaxRowSum: 7.5, Prev: 42.125, Fresh: false,
		Elapsed: 1500 * time.Millisecond, Gram: make([]float64, k*k), W: make([]float64, n*k), PW: make([]float64, n*k)}
	for i := range st.Gram {
		st.Gram[i] = float64(i) / 3
	}
	for i := range st.W {
		st.W[i], st.PW[i] = 1/float64(i+1), math.Pi*float64(i)
	}
	return st
}

func save(name string, st *fw.State, settings, trace string) {
	if err := checkpoint.Save(name, st, []byte(settings), []byte(trace)); err != nil {
		log.Fatal(err)
	}
	if _, err := checkpoint.Load(name, func(n, k int) ([]float64, []float64, error) {
		return make([]float64, n*k), make([]float64, n*k), nil
	}); err != nil {
		log.Fatal(err)
	}
	checkpoint.Dump(os.Stdout, name)
}

func main() {
	dir := os.Args[1]
	save(dir+"/v2_fw.ckp", state(5, 3), `{"k":3}`, "iter,objective\n0,1\n")

	const n, k, nz = 7, 3, 4
	st := state(n, k)
	st.Fresh, st.Prev = true, 17.5
	st.Objective, st.Gap, st.SweepGap = 99.25, 0.5, math.NaN()
	p := &fw.Pending{NZ: nz, Count: make([]uint8, n), Col: make([]int32, n*nz), Val: make([]float64, n*nz)}
	for i := range n {
		p.Count[i] = uint8(i % (nz + 1))
		for e := range nz {
			p.Col[i*nz+e] = int32((i + e) % k)
			p.Val[i*nz+e] = float64(i-e) / 7
			if e >= int(p.Count[i]) {
				p.Col[i*nz+e], p.Val[i*nz+e] = 12345, math.Inf(1) // not used, not saved
			}
		}
	}
	st.Pending = p
	save(dir+"/v2_rowcd.ckp", st, `{"k":3,"method":"rowcd"}`, "iter,objective\n0,1\n1,0.5\n")
}
