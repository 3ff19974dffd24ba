// Package graph holds sparse affinity matrices: graphs whose weighted edges
// are the nonzero entries of a symmetric P, stored by rows as neighbour
// lists (compressed sparse rows). A pass over such a P costs O(nnz·k)
// instead of O(n²·k), and a row-wise sweep visits each row with its
// neighbour list, so the solver's methods run on a graph of a million
// points as they run on the dense kernel of a few thousand.
//
// KNN builds the kNN graph of a feature matrix, by an exact search or, for
// large n, an approximate one over the leaves of a partition tree
// (Partition) whose recall it measures; CSR.Renumber puts a graph built in
// the partition's order back into the input's. The approximate search
// runs in rounds: rounds that search pairs of leaves exactly, with the
// exact search's kernel, and, once those slow down, rounds of neighbour
// descent row by row, where each row is offered the candidates of its
// candidates (its nearest neighbours and nearest reverse neighbours).
//
// A CSR is an fw.Affinity: its products, and a Sweep of one block whose
// Block.Spread passes every change of a row of W on to the row's
// neighbours at once, so that P·W stays exact through a sweep with nothing
// pending.
//
// # CSR files
//
// KNN and FromEdges can assemble the graph in a CSR file instead of the
// heap: a count pass sizes the file, a fill pass writes the entries into
// its memory-mapped arrays, and each row is then sorted and merged in
// place. The file is written under the name FILE.tmp and renamed when
// complete; OpenFile maps it read-only and the CSR's slices are its pages.
// A solver's work directory keeps its graph there (graph.csr), so that a
// resumed run opens it instead of searching again. Integers are
// little-endian and the arrays are used in place, so the files are made
// and read on little-endian hosts only.
//
//	offset          size    field
//	     0             8    magic "SSNMFCSR"
//	     8             4    format version, uint32 = 1
//	    12             8    n, rows, uint64, 1 to 2³¹-1
//	    20             8    nnz, stored entries, uint64
//	    28             8    source, uint64: what the graph was built from
//	                        (for KNN, CRC-32C of the options << 32 | of the rows)
//	    36             4    CRC-32C of the bytes from 4096 to the end
//	    40             4    reserved, zero
//	    44             4    CRC-32 (IEEE) of bytes [0, 44)
//	    48          4048    reserved, zero
//	  4096      8·(n+1)    RowPtr, int64: row i is entries [RowPtr[i], RowPtr[i+1])
//	     .         8·nnz    Val, float64, finite and >= 0
//	     .         4·nnz    Col, int32, increasing within a row
//
//	+----------+---------+---+-----+--------+----------+-----+---------+
//	| SSNMFCSR | version | n | nnz | source | body crc | crc | 0 ... 0 |  4096 bytes
//	+----------+---------+---+-----+--------+----------+-----+---------+
//	| RowPtr[0] RowPtr[1] ... RowPtr[n]                                |  8·(n+1)
//	| Val[0] Val[1] ... Val[nnz-1]                                     |  8·nnz
//	| Col[0] Col[1] ... Col[nnz-1]                                     |  4·nnz
//	+------------------------------------------------------------------+
//
// The length of a valid file is exactly 4096 + 8(n+1) + 12·nnz bytes.
// OpenFile refuses, with an error naming the file, a wrong magic, version,
// checksum or length, and a matrix that NewCSR refuses (not symmetric,
// columns out of order, a negative value, ...). DumpFile, and ssnmf dump,
// print a file's header and first rows.
package graph

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ssnmf/ssnmf/internal/ordered"
	"github.com/ssnmf/ssnmf/tile"
)

// chunkRows is the number of rows of a task in a pass: fixed, so that sums
// are added in the same order for any number of workers.
const chunkRows = 4096

// CSR is a symmetric, nonnegative n×n matrix in compressed sparse row form:
// row i has the entries Scale·Val[RowPtr[i]:RowPtr[i+1]] in the columns
// Col[RowPtr[i]:RowPtr[i+1]], in increasing order. Entries not stored are 0.
type CSR struct {
	RowPtr []int64   // n+1 offsets, RowPtr[0] = 0
	Col    []int32   // nnz column indices, increasing within a row
	Val    []float64 // nnz values, finite and >= 0
	// Scale multiplies every stored value in the products and sweeps, so
	// that a graph kept in a file can be weighted without rewriting it
	// (see affinity's mass rule). NewCSR sets it to 1; it must be finite
	// and > 0.
	Scale float64
	// Workers is the number of goroutines of a pass; 1 if 0. Any number
	// gives the same bits.
	Workers int
	// Kernel is the family of Mul's vector kernels (AVX-512, AVX2, NEON):
	// tile.ISAAuto, the zero value, for the fastest this CPU runs, or
	// tile.ISAGo for the portable loop. Every family gives the portable
	// loop's bits. A family the CPU lacks is an error.
	Kernel tile.ISA

	diag    []float64 // P_ii, for sweeps
	moments Moments   // of the values, taken by checkCSR
	file    *mapping  // the CSR file the slices are mapped from, or nil
}

// NewCSR checks that rowPtr, col and val describe a symmetric, finite,
// nonnegative n×n matrix with increasing columns within each row, and
// returns it. It does not copy the slices.
func NewCSR(rowPtr []int64, col []int32, val []float64) (*CSR, error) {
	return checkCSR(rowPtr, col, val, 1, nil)
}

// checkEntries is how many entries checkCSR checks between calls of its
// hook: a range of the arrays still in cache when the hook reads it.
const checkEntries = 1 << 16

// checkCSR is NewCSR, in one pass over the arrays in order, which also
// takes the values' Moments, on workers goroutines: chunks of rows of at
// least checkEntries entries are checked in any order, and committed in
// order, where the moments are summed and visit, if not nil, is called
// with the chunk's range [lo, hi) of the entries: so that a file's
// checksum (openMapped, fileBuilder.finish) reads the arrays in the same
// pass, and a graph larger than memory is read once, not three times. The
// result, and the error of a bad matrix (its first bad entry's), do not
// depend on the workers.
func checkCSR(rowPtr []int64, col []int32, val []float64, workers int, visit func(lo, hi int64)) (*CSR, error) {
	if len(rowPtr) < 2 || rowPtr[0] != 0 || rowPtr[len(rowPtr)-1] != int64(len(col)) || len(col) != len(val) {
		return nil, fmt.Errorf("graph: %d row offsets, %d columns and %d values do not form a CSR matrix", len(rowPtr), len(col), len(val))
	}
	n := len(rowPtr) - 1
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("graph: %d rows, at most %d fit int32 columns", n, math.MaxInt32)
	}
	chunks := []int{0} // the first row of each chunk, then n
	for i := range n {
		if rowPtr[i] > rowPtr[i+1] {
			return nil, fmt.Errorf("graph: row %d: offsets %d > %d", i, rowPtr[i], rowPtr[i+1])
		}
		if i+1 < n && rowPtr[i+1]-rowPtr[chunks[len(chunks)-1]] >= checkEntries {
			chunks = append(chunks, i+1)
		}
	}
	chunks = append(chunks, n)
	m := &CSR{RowPtr: rowPtr, Col: col, Val: val, Scale: 1, diag: make([]float64, n)}
	// P is symmetric if its entries (i, j, v) are its entries (j, i, v):
	// the sums of a 64-bit hash of each entry read both ways agree (and
	// differ, but with odds of 2⁻⁶⁴, if not). One pass in order, so that a
	// graph larger than memory is checked without reading it at random;
	// only a failed check looks for the entry that breaks it.
	var fwd, bwd uint64
	var mo Moments
	err := ordered.Run(context.Background(), max(1, workers), len(chunks)-1, func() *checked { return new(checked) },
		func(_ context.Context, t int, c *checked) error {
			*c = checked{}
			for i := chunks[t]; i < chunks[t+1] && c.err == nil; i++ {
				c.err = m.checkRow(i, &c.fwd, &c.bwd)
			}
			return nil
		},
		func(t int, c *checked) error {
			if c.err != nil {
				return c.err
			}
			fwd, bwd = fwd+c.fwd, bwd+c.bwd
			lo, hi := rowPtr[chunks[t]], rowPtr[chunks[t+1]]
			for _, v := range val[lo:hi] {
				mo.add(v)
			}
			if visit != nil {
				visit(lo, hi)
			}
			return nil
		})
	switch {
	case err != nil:
		return nil, err
	case fwd != bwd:
		return nil, m.asymmetry()
	}
	m.moments = mo
	return m, nil
}

// checked is what checkCSR finds in a chunk of rows: the sums of its
// entries' hashes read both ways, and its first bad entry.
type checked struct {
	fwd, bwd uint64
	err      error
}

// checkRow checks row i's entries, records its diagonal entry and adds
// their hashes read both ways to fwd and bwd.
func (m *CSR) checkRow(i int, fwd, bwd *uint64) error {
	n, col, val := len(m.diag), m.Col, m.Val
	lo, hi := m.RowPtr[i], m.RowPtr[i+1]
	for e := lo; e < hi; e++ {
		j, v := col[e], val[e]
		switch {
		case j < 0 || int(j) >= n:
			return fmt.Errorf("graph: row %d: column %d out of range [0, %d)", i, j, n)
		case e > lo && j <= col[e-1]:
			return fmt.Errorf("graph: row %d: columns %d and %d not increasing", i, col[e-1], j)
		case !(v >= 0) || math.IsInf(v, 0):
			return fmt.Errorf("graph: row %d, column %d: value %v, want finite and >= 0", i, j, v)
		}
		if int(j) == i {
			m.diag[i] = v
		}
		*fwd += entryHash(int32(i), j, v)
		*bwd += entryHash(j, int32(i), v)
	}
	return nil
}

// Moments are sums of the stored values of a CSR, Scale not applied,
// taken when it was made: enough to check that S·P's sums and norms stay
// in a float64's range without another pass over a graph that may be
// larger than memory.
type Moments struct {
	Sum float64 // Σ v, in the order of the entries
	Max float64 // the largest value
	// Squares is Σ (v/Max)², kept as the largest value grows (each
	// partial sum rescaled to the new largest), so that it neither
	// overflows nor underflows where Σ v² would; ||P||² is Max²·Squares.
	Squares float64
}

// add takes v >= 0 into the moments.
func (mo *Moments) add(v float64) {
	mo.Sum += v
	switch {
	case v > mo.Max:
		r := mo.Max / v
		mo.Squares = mo.Squares*r*r + 1
		mo.Max = v
	case v > 0:
		r := v / mo.Max
		mo.Squares += r * r
	}
}

// entryHash mixes an entry (i, j, v) into 64 bits (SplitMix64's finalizer).
func entryHash(i, j int32, v float64) uint64 {
	z := (uint64(uint32(i))<<32 | uint64(uint32(j))) * 0x9e3779b97f4a7c15
	z ^= math.Float64bits(v)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// asymmetry returns the error naming an entry of m without its mirror.
func (m *CSR) asymmetry() error {
	for i := range m.N() {
		for e := m.RowPtr[i]; e < m.RowPtr[i+1]; e++ {
			j, v := m.Col[e], m.Val[e]
			if w, ok := m.at(int(j), int32(i)); !ok || w != v {
				return fmt.Errorf("graph: not symmetric: P[%d][%d] = %v, P[%d][%d] = %v", i, j, v, j, i, w)
			}
		}
	}
	return errors.New("graph: not symmetric")
}

// at returns P_ij and whether it is stored.
func (m *CSR) at(i int, j int32) (float64, bool) {
	cols := m.Col[m.RowPtr[i]:m.RowPtr[i+1]]
	e, ok := slices.BinarySearch(cols, j)
	if !ok {
		return 0, false
	}
	return m.Val[m.RowPtr[i]+int64(e)], true
}

// N returns the order of P.
func (m *CSR) N() int { return len(m.RowPtr) - 1 }

// NNZ returns the number of stored entries.
func (m *CSR) NNZ() int64 { return m.RowPtr[len(m.RowPtr)-1] }

// Sum returns the sum of the stored values, Scale not applied, as NewCSR
// found them: Moments().Sum.
func (m *CSR) Sum() float64 { return m.moments.Sum }

// Moments returns the sums of the stored values NewCSR took, Scale not
// applied.
func (m *CSR) Moments() Moments { return m.moments }

// checkScale reports a Scale that no pass can use.
func (m *CSR) checkScale() error {
	if !(m.Scale > 0) || math.IsInf(m.Scale, 0) {
		return fmt.Errorf("graph: scale %v, want a finite value > 0", m.Scale)
	}
	return nil
}

// rowSums are one task's sums in a pass.
type rowSums struct{ frob float64 }

// pass runs row over the rows in chunks of chunkRows on m.Workers
// goroutines; a row writes only its own outputs and returns its squared
// entries' sum, which is added in row order.
func (m *CSR) pass(ctx context.Context, row func(i int) float64) (float64, error) {
	n := m.N()
	var frob float64
	err := ordered.Run(ctx, m.Workers, (n+chunkRows-1)/chunkRows,
		func() *rowSums { return &rowSums{} },
		func(_ context.Context, t int, s *rowSums) error {
			s.frob = 0
			for i := t * chunkRows; i < min(n, (t+1)*chunkRows); i++ {
				s.frob += row(i)
			}
			return nil
		},
		func(_ int, s *rowSums) error { frob += s.frob; return nil })
	return frob, err
}

// Mul sets dst = P·W and, if rowSums is not nil, the row sums of P,
// returning ||P||_F^2. It costs O(nnz·k).
//
// Every product of a pass, here and in MulOneHot and Spread, is rounded by
// an explicit float64 conversion before it is added, which forbids the
// compiler to fuse the two into one multiply-add (as it does on arm64):
// the sums have the bits of fw.Dense's on every architecture.
func (m *CSR) Mul(ctx context.Context, dst, w []float64, k int, rowSums []float64) (float64, error) {
	n := m.N()
	if len(dst) != n*k || len(w) != n*k || (rowSums != nil && len(rowSums) != n) {
		return 0, fmt.Errorf("graph: P·W: sizes do not match n = %d, k = %d", n, k)
	}
	if err := m.checkScale(); err != nil {
		return 0, err
	}
	row, err := m.mulRow(dst, w, k)
	if err != nil {
		return 0, err
	}
	frob, err := m.pass(ctx, func(i int) float64 {
		rs, sq := row(i)
		if rowSums != nil {
			rowSums[i] = rs
		}
		return sq
	})
	if rowSums == nil {
		frob = 0
	}
	return frob, err
}

// rowKernel is a vector kernel of one row of P·W (csr_amd64.s,
// csr_arm64.s).
type rowKernel func(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)

// mulRow returns the function that sets row i of dst = P·W (n×k) and
// returns the row's sum and sum of squares: Kernel's vector kernels, or
// the portable loop.
func (m *CSR) mulRow(dst, w []float64, k int) (func(i int) (rs, sq float64), error) {
	isa, err := m.Kernel.Resolve()
	if err != nil {
		return nil, fmt.Errorf("graph: P·W: %w", err)
	}
	ks, lanes := rowKernels(isa)
	if ks == nil || k == 0 {
		return func(i int) (rs, sq float64) {
			yi := dst[i*k : (i+1)*k]
			clear(yi)
			for e := m.RowPtr[i]; e < m.RowPtr[i+1]; e++ {
				v, j := float64(m.Scale*m.Val[e]), int(m.Col[e])
				for c, x := range w[j*k : (j+1)*k] {
					yi[c] += float64(v * x)
				}
				rs += v
				sq += float64(v * v)
			}
			return rs, sq
		}, nil
	}
	most := len(ks) * lanes
	return func(i int) (rs, sq float64) {
		a, b := m.RowPtr[i], m.RowPtr[i+1]
		yi := dst[i*k : (i+1)*k]
		if a == b {
			clear(yi)
			return 0, 0
		}
		// Columns [c, c+most) at a time, the row's sums from the first.
		for c := 0; c < k; c += most {
			width := min(most, k-c)
			r, s := ks[(width+lanes-1)/lanes-1](&yi[c], &w[c], k, width, &m.Col[a], &m.Val[a], int(b-a), m.Scale)
			if c == 0 {
				rs, sq = r, s
			}
		}
		return rs, sq
	}, nil
}

// KernelName names the code of Mul: the vector family's, as "avx512/csr",
// or "go/csr" for the portable loop (and where this CPU lacks Kernel,
// which Mul refuses).
func (m *CSR) KernelName() string {
	isa, err := m.Kernel.Resolve()
	if ks, _ := rowKernels(isa); err != nil || ks == nil {
		isa = tile.ISAGo
	}
	return isa.String() + "/csr"
}

// MulOneHot sets dst = P·S for the one-hot S with S[i][s[i]] = 1. It costs
// O(nnz) plus clearing dst.
func (m *CSR) MulOneHot(ctx context.Context, dst []float64, s []int32, k int) error {
	n := m.N()
	if len(dst) != n*k || len(s) != n {
		return fmt.Errorf("graph: P·S: sizes do not match n = %d, k = %d", n, k)
	}
	for i, c := range s {
		if c < 0 || int(c) >= k {
			return fmt.Errorf("graph: P·S: row %d has column %d, want 0 <= c < %d", i, c, k)
		}
	}
	if err := m.checkScale(); err != nil {
		return err
	}
	_, err := m.pass(ctx, func(i int) float64 {
		yi := dst[i*k : (i+1)*k]
		clear(yi)
		for e := m.RowPtr[i]; e < m.RowPtr[i+1]; e++ {
			yi[s[m.Col[e]]] += float64(m.Scale * m.Val[e])
		}
		return 0
	})
	return err
}
