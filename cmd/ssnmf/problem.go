package main

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"math"
	"strconv"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/tilefile"
	"github.com/ssnmf/ssnmf/tile"
)

// problem is the affinity matrix P of a run and the data it came from.
type problem struct {
	n         int
	tab       *store.Table // the input; nil when P comes from a tile file and no INPUT is given
	src       tile.Source
	file      *tilefile.File // the tile file, if P comes from one
	gamma     float64
	gammaRule string // "given", or how the automatic rule went
	checksum  uint32 // CRC-32C of the features as the kernel uses them, or of the tile file's index
}

// problem loads the input and sets up P: the Gaussian kernel of the
// features, or the tile file of -affinity. Large inputs are mapped into the
// work directory dir rather than held in memory.
func (kc *kernelConfig) problem(dir string) (_ *problem, err error) {
	pr := &problem{}
	defer func() {
		if err != nil {
			pr.close()
		}
	}()
	if kc.input != "" || kc.affinity == "" {
		tab, err := kc.load(dir)
		if err != nil {
			return nil, usageError{err}
		}
		pr.tab, pr.n = tab, tab.N
		if kc.standardize {
			tile.Standardize(tab.Features, tab.N, tab.P)
		}
	}
	if kc.affinity != "" {
		f, err := tilefile.Open(kc.affinity, kc.workers)
		if err != nil {
			return nil, usagef("-affinity: %v", err)
		}
		pr.file, pr.src = f, f
		if pr.tab != nil && pr.tab.N != f.N() {
			return nil, usagef("-affinity %s holds P for n = %d, but %s has %d rows", kc.affinity, f.N(), kc.input, pr.tab.N)
		}
		pr.n = f.N()
		kc.block = f.Block()
		// The bandwidth the file was written with, for a k-means start.
		pr.gammaRule = "tile file"
		if g, err := strconv.ParseFloat(f.Meta()["gamma"], 64); err == nil && g > 0 && !math.IsInf(g, 0) {
			pr.gamma = g
		} else if pr.tab != nil {
			bw, err := tile.AutoBandwidth(pr.tab.Features, pr.tab.N, pr.tab.P, kc.seed)
			if err != nil {
				return nil, usagef("%s: %v", kc.inputName(), err)
			}
			pr.gamma, pr.gammaRule = bw.Gamma, "tile file; for the k-means start "+bw.Rule
		}
		pr.checksum = crc32.Checksum(fmt.Appendf(nil, "%d %d %v %v", f.N(), f.Block(), f.Float32(), f.Meta()), castagnoli)
		return pr, nil
	}
	tab := pr.tab
	pr.gamma, pr.gammaRule = kc.gamma.value, "given"
	if kc.gamma.auto {
		bw, err := tile.AutoBandwidth(tab.Features, tab.N, tab.P, kc.seed)
		if err != nil {
			return nil, usagef("%s: %v; standardize the features (-standardize) or give -gamma", kc.inputName(), err)
		}
		pr.gamma, pr.gammaRule = bw.Gamma, bw.Rule
	}
	src, err := tile.NewGaussianPrecision(tab.Features, tab.N, tab.P, pr.gamma, kc.precision)
	if err != nil {
		return nil, err
	}
	pr.src = src
	kc.block = min(kc.block, tab.N)
	pr.checksum = crc32.Checksum(store.AsBytes(tab.Features), castagnoli)
	return pr, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// describe says what P is, for the progress line.
func (pr *problem) describe() string {
	if pr.file != nil {
		prec := "float64"
		if pr.file.Float32() {
			prec = "float32"
		}
		return fmt.Sprintf("P from tile file (block %d, %s)", pr.file.Block(), prec)
	}
	return fmt.Sprintf("p=%d gamma=%.6g (%s)", pr.tab.P, pr.gamma, pr.gammaRule)
}

func (pr *problem) close() {
	if pr.file != nil {
		pr.file.Close()
	}
	if pr.tab != nil {
		pr.tab.Close()
	}
}

func (kc *kernelConfig) load(dir string) (*store.Table, error) {
	opt := store.TableOptions{Features: kc.features, Label: kc.label}
	if kc.input == "" {
		return store.ParseCSV(bytes.NewReader(builtinCSV), builtinName, opt)
	}
	return openInput(kc.input, kc.format, opt, dir)
}
