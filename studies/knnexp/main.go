// Command knnexp times the approximate kNN search alone, round by round,
// on a data set: it reads the input (as ssnmf solve does), standardizes
// it, moves the rows into the partition's leaves, and searches, printing
// each round's tiles, the share of the lists that changed and the sampled
// recall, then the whole search's time. It is for choosing the search's
// settings (docs/guide/performance.md, "The approximate search at scale").
//
// Usage:
//
//	go run ./studies/knnexp [-leaf 512] [-probes 32] [-recall 0.99] [-rounds 10]
//	    [-leaf-rounds 2] [-descent-forward 29] [-descent-reverse 15]
//	    [-scratch-memory BYTES] [-workers 2] [-cpuprofile FILE] INPUT
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/tile"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "knnexp:", err)
		os.Exit(1)
	}
}

func run() error {
	leaf := flag.Int("leaf", graph.DefaultLeaf, "rows of a leaf")
	probes := flag.Int("probes", graph.DefaultProbes, "leaves searched with each leaf in a round")
	recall := flag.Float64("recall", graph.DefaultRecall, "the sampled recall@M at which the search stops")
	rounds := flag.Int("rounds", graph.DefaultRounds, "the most rounds")
	leafRounds := flag.Int("leaf-rounds", graph.DefaultLeafRounds, "neighbour descent after at least this many rounds of leaf pairs; < 0: no descent")
	scratchMemory := flag.Int64("scratch-memory", 0, "bytes of the search's scratch that may be anonymous memory rather than files (graph.KNNOptions.ScratchMemory)")
	forward := flag.Int("descent-forward", graph.DefaultDescentForward, "descent: a row's nearest neighbours among its candidates")
	reverse := flag.Int("descent-reverse", graph.DefaultDescentReverse, "descent: a row's nearest reverse neighbours among its candidates")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "goroutines")
	profile := flag.String("cpuprofile", "", "write a CPU profile to `FILE`")
	flag.Parse()
	if flag.NArg() != 1 {
		return errors.New("want one INPUT (usage in the package doc)")
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	dir, err := os.MkdirTemp("", "knnexp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tab, err := input.Open(flag.Arg(0), input.Auto, store.TableOptions{}, dir)
	if err != nil {
		return err
	}
	defer tab.Close()
	tile.Standardize(tab.Features, tab.N, tab.P)
	begin := time.Now()
	if _, err := graph.Partition(context.Background(), tab.Features, tab.N, tab.P, *leaf, 1, *workers); err != nil {
		return err
	}
	parted := time.Now()
	fmt.Printf("partition %.2fs\n", parted.Sub(begin).Seconds())
	var st graph.KNNStats
	opt := graph.KNNOptions{Method: graph.Approximate, Leaf: *leaf, Probes: *probes, Recall: *recall, Rounds: *rounds, LeafRounds: *leafRounds, DescentForward: *forward, DescentReverse: *reverse,
		Workers: *workers, Stats: &st, ScratchDir: dir, ScratchMemory: *scratchMemory,
		Round: func(r int, kr graph.KNNRound) {
			fmt.Printf("round %d tiles %d descent %v changed %.4f recall %.4f  t=%.2fs cpu=%.2fs\n", r, kr.Tiles, kr.Descent, kr.Changed, kr.Recall, time.Since(parted).Seconds(), cpuSeconds())
		}}
	g, err := graph.KNN(context.Background(), tab.Features, tab.N, tab.P, opt)
	if err != nil {
		return err
	}
	defer g.Close()
	all := float64(st.Leaves) * float64(st.Leaves+1) / 2
	fmt.Printf("knn %.2fs total %.2fs cpu %.2fs nnz %d tiles %d (%.4f of all)\n",
		time.Since(parted).Seconds(), time.Since(begin).Seconds(), cpuSeconds(), g.NNZ(), st.Tiles, float64(st.Tiles)/all)
	return nil
}
