package store

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"unsafe"
)

// permuteRunBytes bounds the rows of dst that PermuteRows assembles in
// memory at a time, permuteMinRun is the least it takes whatever its
// memory, and permuteScans the runs it makes from scans of src.
const (
	permuteRunBytes = 256 << 20
	permuteMinRun   = 16 << 20
	permuteScans    = 4
)

// PermuteRows puts the rows of src (n×k, row-major) into dst in another
// order: row q of src becomes row order[q] of dst, where order is a
// permutation of 0..n-1 (as graph.Partition returns it: the input's row at
// each position).
//
// Both may be memory-mapped files larger than memory. dst is written in
// order, a run of rows at a time: each run is assembled in memory outside
// the Go heap (memory bytes, but at least 16 MiB and at most 256 MiB) and
// copied in once, so no page of dst is written twice. src is read in
// order, once for each run, up to four runs (1 GiB of dst at the largest
// runs). Beyond, a first scan of src distributes its rows, each
// with its index in dst, into one file in dir per run (removed before
// PermuteRows returns), from which each run is then assembled: W is read
// and written about twice in all, whatever n, where a scan of src a run
// would read it n·k·8 / (a run's bytes) times. Filling dst's rows in place
// in src's order instead dirties its pages at random; with less memory
// than dst, the kernel writes them back and reads them again many times
// over. That is what PermuteRows does if dir is "": for dst in memory,
// where the runs would only copy every row twice more.
func PermuteRows(dst, src []float64, k int, order []int32, dir string, memory int64) error {
	return permuteRows(dst, src, k, order, dir, permuteRun(memory))
}

// permuteRun is the bytes of PermuteRows' runs within memory.
func permuteRun(memory int64) int { return int(min(permuteRunBytes, max(permuteMinRun, memory))) }

// permuteRows is PermuteRows with runs of at most runBytes.
func permuteRows(dst, src []float64, k int, order []int32, dir string, runBytes int) error {
	n := len(order)
	if k < 1 || len(src) != n*k || len(dst) != n*k {
		return fmt.Errorf("store: permute %d and %d values as %d rows of %d", len(src), len(dst), n, k)
	}
	seen := make([]uint64, (n+63)/64) // a bit a row: 12.5 MB at 10⁸ rows
	for q, i := range order {
		if i < 0 || int(i) >= n || seen[i/64]&(1<<(i%64)) != 0 {
			return fmt.Errorf("store: order[%d] = %d is not a permutation of %d rows", q, i, n)
		}
		seen[i/64] |= 1 << (i % 64)
	}
	if dir == "" {
		for q, i := range order {
			copy(dst[int(i)*k:int(i+1)*k], src[q*k:(q+1)*k])
		}
		return nil
	}
	if n == 0 {
		return nil
	}
	runRows := min(n, max(1, runBytes/(8*k)))
	mem, err := MapAnonymous(8 * k * runRows)
	if err != nil {
		return fmt.Errorf("store: permute: %w", err)
	}
	defer UnmapAnonymous(mem)
	buf := unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(mem))), k*runRows)
	nruns := (n + runRows - 1) / runRows
	if nruns <= permuteScans {
		for lo := 0; lo < n; lo += runRows {
			hi := min(n, lo+runRows)
			for q, i := range order {
				if int(i) >= lo && int(i) < hi {
					copy(buf[(int(i)-lo)*k:(int(i)-lo+1)*k], src[q*k:(q+1)*k])
				}
			}
			copy(dst[lo*k:hi*k], buf[:(hi-lo)*k])
		}
		return nil
	}
	runs, err := distributeRows(src, k, order, runRows, dir)
	if err != nil {
		return err
	}
	defer runs.Close()
	for r := range nruns {
		lo := r * runRows
		hi := min(n, lo+runRows)
		if err := assembleRun(buf[:(hi-lo)*k], runs, r, k, lo); err != nil {
			return err
		}
		copy(dst[lo*k:hi*k], buf[:(hi-lo)*k])
	}
	return nil
}

// distributeRows scans src in order and appends each row, after its index
// in dst (int32, little-endian), to the file of its run of runRows rows of
// dst, in new run files in dir, returned rewound.
func distributeRows(src []float64, k int, order []int32, runRows int, dir string) (*RunFiles, error) {
	runs, err := NewRunFiles(dir, (len(order)+runRows-1)/runRows, 8*k*runRows)
	if err != nil {
		return nil, fmt.Errorf("store: permute: %w", err)
	}
	entry := make([]byte, 4+8*k)
	for q, i := range order {
		binary.LittleEndian.PutUint32(entry, uint32(i))
		for c, v := range src[q*k : (q+1)*k] {
			binary.LittleEndian.PutUint64(entry[4+8*c:], math.Float64bits(v))
		}
		if err := runs.Append(int(i)/runRows, entry); err != nil {
			runs.Close()
			return nil, fmt.Errorf("store: permute: %w", err)
		}
	}
	if err := runs.Rewind(); err != nil {
		runs.Close()
		return nil, fmt.Errorf("store: permute: %w", err)
	}
	return runs, nil
}

// assembleRun reads the rows of the run of dst that begins at row lo from
// its file, run r of runs (as distributeRows wrote it), into run, which
// holds the run's len(run)/k rows.
func assembleRun(run []float64, runs *RunFiles, r, k, lo int) error {
	rows := len(run) / k
	in, name := runs.Reader(r)
	entry := make([]byte, 4+8*k)
	for range rows {
		if _, err := io.ReadFull(in, entry); err != nil {
			return fmt.Errorf("store: permute: reading back %s: %w", name, err)
		}
		i := int(binary.LittleEndian.Uint32(entry)) - lo
		if i < 0 || i >= rows {
			return fmt.Errorf("store: permute: %s holds row %d, outside its run of %d rows from %d", name, i+lo, rows, lo)
		}
		for c := range run[i*k : (i+1)*k] {
			run[i*k+c] = math.Float64frombits(binary.LittleEndian.Uint64(entry[4+8*c:]))
		}
	}
	return nil
}
