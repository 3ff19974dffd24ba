package tilefile

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"golang.org/x/sync/errgroup"

	"github.com/ssnmf/ssnmf/internal/fault"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/tile"
)

// File is an open tile file: a tile.Source whose tiles are read in place
// from the memory-mapped file. A File is safe for concurrent use by several
// goroutines until Close.
type File struct {
	name    string
	n, b    int
	float32 bool
	meta    map[string]string
	g       grid
	mapped  []byte
	f       *os.File
	recs    []arrow.RecordBatch
	v64     [][]float64 // tile t's values, in the mapping; float64 files
	v32     [][]float32 // float32 files
}

// Open maps the tile file name read-only and validates it completely (see
// the package documentation), using up to workers goroutines for the value
// checks (GOMAXPROCS if workers <= 0).
func Open(name string, workers int) (*File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.Size() > math.MaxInt {
		f.Close()
		return nil, fmt.Errorf("tile file %s: too large to map", name)
	}
	data, err := store.MapReadOnly(f, int(st.Size()))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("tile file %s: %w", name, err)
	}
	tf := &File{name: name, mapped: data, f: f}
	if err := tf.load(data); err != nil {
		tf.Close()
		return nil, fmt.Errorf("tile file %s: %w", name, err)
	}
	if err := tf.checkValues(workers); err != nil {
		tf.Close()
		return nil, fmt.Errorf("tile file %s: %w", name, err)
	}
	return tf, nil
}

// Decode validates a tile file held in memory, as Open does for a file on
// disk. data must stay unchanged while the File is in use.
func Decode(data []byte, workers int) (*File, error) {
	tf := &File{name: "(memory)"}
	if err := tf.load(data); err != nil {
		tf.Close()
		return nil, err
	}
	if err := tf.checkValues(workers); err != nil {
		tf.Close()
		return nil, err
	}
	return tf, nil
}

// load reads the schema and every record batch's metadata and checks the
// tile index. Arrow's decoder can panic on corrupt flatbuffers; such a
// panic is reported as an error.
func (tf *File) load(data []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt Arrow IPC file: %v", p)
		}
	}()
	if err := store.VerifyArrowFile(bytes.NewReader(data), int64(len(data))); err != nil {
		return fmt.Errorf("not an Arrow IPC file, or truncated: %w", err)
	}
	r, err := ipc.NewMappedFileReader(data)
	if err != nil {
		return fmt.Errorf("not an Arrow IPC file, or truncated: %w", err)
	}
	defer r.Close()
	if err := tf.readSchema(r.Schema()); err != nil {
		return err
	}
	// Every tile takes a record batch of at least 8 bytes: refuse a grid
	// the file cannot hold before allocating for it.
	nb := (tf.n + tf.b - 1) / tf.b
	if total := nb * (nb + 1) / 2; total > len(data)/8 {
		return fmt.Errorf("n = %d and block = %d make %d tiles, but the file holds %d record batches", tf.n, tf.b, total, r.NumRecords())
	}
	tf.g = newGrid(tf.n, tf.b)
	total := tf.g.tiles()
	if tf.float32 {
		tf.v32 = make([][]float32, total)
	} else {
		tf.v64 = make([][]float64, total)
	}
	seen := make([]int, total) // batch number + 1
	for i := range r.NumRecords() {
		rec, err := r.RecordBatchAt(i)
		if err != nil {
			return fmt.Errorf("record batch %d: %w", i, err)
		}
		tf.recs = append(tf.recs, rec)
		I, J, err := tileCoords(rec)
		if err != nil {
			return fmt.Errorf("record batch %d: %w", i, err)
		}
		if I < 0 || J < I || J >= tf.g.nb {
			return fmt.Errorf("record batch %d: tile %d,%d is not in the upper triangle of a %d×%d tile grid", i, I, J, tf.g.nb, tf.g.nb)
		}
		t := tf.g.index(I, J)
		if seen[t] != 0 {
			return fmt.Errorf("record batch %d: tile %d,%d is duplicated (also record batch %d)", i, I, J, seen[t]-1)
		}
		seen[t] = i + 1
		r0, r1, c0, c1 := tf.g.bounds(t)
		want := (r1 - r0) * (c1 - c0)
		col := rec.Column(0)
		if col.Len() != want || rec.NumRows() != int64(want) {
			return fmt.Errorf("tile %d,%d: %d values, want %d×%d = %d", I, J, col.Len(), r1-r0, c1-c0, want)
		}
		if col.NullN() != 0 {
			return fmt.Errorf("tile %d,%d: %d null values", I, J, col.NullN())
		}
		var p unsafe.Pointer
		switch a := col.(type) {
		case *array.Float64:
			tf.v64[t] = a.Float64Values()
			p = unsafe.Pointer(unsafe.SliceData(tf.v64[t]))
		case *array.Float32:
			tf.v32[t] = a.Float32Values()
			p = unsafe.Pointer(unsafe.SliceData(tf.v32[t]))
		default:
			return fmt.Errorf("tile %d,%d: column type %s", I, J, col.DataType())
		}
		if !within(p, data) {
			return fmt.Errorf("tile %d,%d: values are not stored in place (compressed record batches are not supported)", I, J)
		}
	}
	for t, s := range seen {
		if s == 0 {
			I, J := tf.g.coords(t)
			return fmt.Errorf("tile %d,%d is missing (%d record batches, want %d tiles for n = %d, block = %d)",
				I, J, r.NumRecords(), total, tf.n, tf.b)
		}
	}
	return nil
}

func within(p unsafe.Pointer, data []byte) bool {
	if len(data) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	return uintptr(p) >= lo && uintptr(p) < lo+uintptr(len(data))
}

func (tf *File) readSchema(s *arrow.Schema) error {
	if s.NumFields() != 1 || s.Field(0).Name != column {
		return fmt.Errorf("schema has fields %v, want the single column %q", fieldNames(s), column)
	}
	switch s.Field(0).Type.ID() {
	case arrow.FLOAT64:
	case arrow.FLOAT32:
		tf.float32 = true
	default:
		return fmt.Errorf("column %q has type %s, want float32 or float64", column, s.Field(0).Type)
	}
	md := s.Metadata()
	tf.meta = make(map[string]string)
	for i, k := range md.Keys() {
		if rest, ok := strings.CutPrefix(k, keyPrefix); ok {
			tf.meta[rest] = md.Values()[i]
		}
	}
	if got := tf.meta["magic"]; got != Magic {
		return fmt.Errorf("metadata %s = %q, want %q (not a ssnmf tile file)", keyMagic, got, Magic)
	}
	if got := tf.meta["version"]; got != strconv.Itoa(Version) {
		return fmt.Errorf("metadata %s = %q, want %d", keyVersion, got, Version)
	}
	var err error
	if tf.n, err = positive(tf.meta, "n", math.MaxInt32); err != nil {
		return err
	}
	if tf.b, err = positive(tf.meta, "block", tf.n); err != nil {
		return err
	}
	return nil
}

func positive(meta map[string]string, key string, max int) (int, error) {
	v, err := strconv.Atoi(meta[key])
	if err != nil || v < 1 || v > max {
		return 0, fmt.Errorf("metadata %s%s = %q, want an integer in [1, %d]", keyPrefix, key, meta[key], max)
	}
	return v, nil
}

func fieldNames(s *arrow.Schema) []string {
	var names []string
	for _, f := range s.Fields() {
		names = append(names, f.Name)
	}
	return names
}

func tileCoords(rec arrow.RecordBatch) (I, J int, err error) {
	rm, ok := rec.(arrow.RecordBatchWithMetadata)
	if !ok {
		return 0, 0, errors.New("no tile metadata")
	}
	md := rm.Metadata()
	i := md.FindKey(keyTile)
	if i < 0 {
		return 0, 0, fmt.Errorf("no %s metadata", keyTile)
	}
	s := md.Values()[i]
	a, b, ok := strings.Cut(s, ",")
	if ok {
		I, err = strconv.Atoi(a)
		if err == nil {
			J, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil {
		return 0, 0, fmt.Errorf("%s = %q, want \"I,J\"", keyTile, s)
	}
	return I, J, nil
}

// checkValues checks every value for NaN, infinities and negatives and the
// diagonal tiles for symmetry. The error, if any, names the first bad tile
// in row-major order.
func (tf *File) checkValues(workers int) error {
	if workers <= 0 {
		workers = defaultWorkers()
	}
	total := tf.g.tiles()
	errs := make([]error, total)
	var eg errgroup.Group
	eg.SetLimit(workers)
	for t := range total {
		eg.Go(func() error {
			errs[t] = fault.Guard(func() error { return tf.checkTile(t) })()
			return nil
		})
	}
	eg.Wait() // the tasks' errors, faults included, are in errs
	return firstError(errs)
}

func firstError(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func (tf *File) checkTile(t int) error {
	I, J := tf.g.coords(t)
	r0, r1, c0, c1 := tf.g.bounds(t)
	w := c1 - c0
	at := func(i int) float64 {
		if tf.float32 {
			return float64(tf.v32[t][i])
		}
		return tf.v64[t][i]
	}
	for i := range (r1 - r0) * w {
		if v := at(i); !(v >= 0) || math.IsInf(v, 1) {
			return fmt.Errorf("tile %d,%d: P[%d,%d] = %v, want a finite value >= 0", I, J, r0+i/w, c0+i%w, v)
		}
	}
	if I == J {
		for r := range w {
			for c := r + 1; c < w; c++ {
				if a, b := at(r*w+c), at(c*w+r); a != b {
					return fmt.Errorf("tile %d,%d: not symmetric: P[%d,%d] = %v but P[%d,%d] = %v", I, J, r0+r, c0+c, a, r0+c, c0+r, b)
				}
			}
		}
	}
	return nil
}

// N returns the order of P.
func (tf *File) N() int { return tf.n }

// Block returns the tile edge the file was written with. Passes read it
// fastest with an engine of the same block size.
func (tf *File) Block() int { return tf.b }

// Float32 reports whether the file stores float32 values.
func (tf *File) Float32() bool { return tf.float32 }

// Meta returns the provenance metadata, keys without the "ssnmf." prefix.
func (tf *File) Meta() map[string]string { return tf.meta }

// Tile writes P[r0:r1, c0:c1] into dst, row-major, assembling it from the
// stored tiles and their transposes; any range inside P may be asked for.
//
// A fault of the mapping, the file cut short under the run, is an error
// naming the file (see store.CatchFault).
func (tf *File) Tile(dst []float64, r0, r1, c0, c1 int) (err error) {
	defer store.CatchFault("tile file "+tf.name, tf.f, tf.mapped, &err)()
	if r0 < 0 || r1 > tf.n || c0 < 0 || c1 > tf.n || r0 > r1 || c0 > c1 {
		return fmt.Errorf("tile file %s: range [%d:%d, %d:%d] outside %d×%d", tf.name, r0, r1, c0, c1, tf.n, tf.n)
	}
	w, b := c1-c0, tf.b
	for I := r0 / b; I*b < r1; I++ {
		for J := c0 / b; J*b < c1; J++ {
			// The part of block (I, J) inside the request.
			ra, rb := max(r0, I*b), min(r1, (I+1)*b, tf.n)
			ca, cb := max(c0, J*b), min(c1, (J+1)*b, tf.n)
			if I <= J {
				t := tf.g.index(I, J)
				tw := min((J+1)*b, tf.n) - J*b
				for r := ra; r < rb; r++ {
					src := (r-I*b)*tw + ca - J*b
					tf.copyRow(dst[(r-r0)*w+ca-c0:(r-r0)*w+cb-c0], t, src)
				}
				continue
			}
			// Below the diagonal: P[r, c] = stored (J, I) at [c - J·b, r - I·b].
			t := tf.g.index(J, I)
			tw := min((I+1)*b, tf.n) - I*b
			for r := ra; r < rb; r++ {
				row := dst[(r-r0)*w : (r-r0+1)*w]
				for c := ca; c < cb; c++ {
					row[c-c0] = tf.value(t, (c-J*b)*tw+r-I*b)
				}
			}
		}
	}
	return nil
}

func (tf *File) copyRow(dst []float64, t, off int) {
	if tf.float32 {
		for i, v := range tf.v32[t][off : off+len(dst)] {
			dst[i] = float64(v)
		}
		return
	}
	copy(dst, tf.v64[t][off:off+len(dst)])
}

func (tf *File) value(t, i int) float64 {
	if tf.float32 {
		return float64(tf.v32[t][i])
	}
	return tf.v64[t][i]
}

// Close releases the mapping. Tiles may not be read after Close.
func (tf *File) Close() error {
	for _, r := range tf.recs {
		r.Release()
	}
	tf.recs, tf.v32, tf.v64 = nil, nil, nil
	var err error
	if tf.f != nil {
		err = errors.Join(store.UnmapReadOnly(tf.mapped), tf.f.Close())
		tf.f, tf.mapped = nil, nil
	}
	return err
}

var _ tile.Source = (*File)(nil)
