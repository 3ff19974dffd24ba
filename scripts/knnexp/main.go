package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/tile"
)

func main() {
	probes := flag.Int("probes", 8, "")
	recall := flag.Float64("recall", 0.99, "")
	rounds := flag.Int("rounds", 10, "")
	leaf := flag.Int("leaf", 256, "")
	workers := flag.Int("workers", 2, "")
	flag.Parse()
	if f, err := os.Create("/tmp/knn.prof"); err == nil {
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	dir, _ := os.MkdirTemp("/tmp", "knnexp")
	defer os.RemoveAll(dir)
	tab, err := input.Open(flag.Arg(0), "auto", store.TableOptions{}, dir)
	if err != nil {
		panic(err)
	}
	tile.Standardize(tab.Features, tab.N, tab.P)
	t0 := time.Now()
	_, err = graph.Partition(context.Background(), tab.Features, tab.N, tab.P, *leaf, 1, *workers)
	if err != nil {
		panic(err)
	}
	t1 := time.Now()
	fmt.Printf("partition %.2fs\n", t1.Sub(t0).Seconds())
	var st graph.KNNStats
	opt := graph.KNNOptions{Method: graph.Approximate, Probes: *probes, Recall: *recall, Rounds: *rounds, Leaf: *leaf, Workers: *workers, Stats: &st, ScratchDir: dir,
		Round: func(r int, kr graph.KNNRound) {
			fmt.Printf("round %d tiles %d changed %.4f recall %.4f  t=%.2fs\n", r, kr.Tiles, kr.Changed, kr.Recall, time.Since(t1).Seconds())
		}}
	g, err := graph.KNN(context.Background(), tab.Features, tab.N, tab.P, opt)
	if err != nil {
		panic(err)
	}
	fmt.Printf("knn %.2fs total %.2fs nnz %d tiles %d (%.4f of all)\n", time.Since(t1).Seconds(), time.Since(t0).Seconds(), g.NNZ(), st.Tiles, float64(st.Tiles)/(float64(st.Leaves)*float64(st.Leaves+1)/2))
}
