package tilefile

import (
	"bytes"
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/tile"
)

func gaussian(t testing.TB, n, p int) *tile.Gaussian {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, n*p)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	g, err := tile.NewGaussian(x, n, p, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func writeFile(t testing.TB, src tile.Source, opt Options) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "p.arrow")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), f, src, opt); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		n, b    int
		float32 bool
	}{
		{name: "one tile", n: 9, b: 16},
		{name: "ragged", n: 37, b: 8},
		{name: "even", n: 32, b: 8},
		{name: "block 1", n: 5, b: 1},
		{name: "float32", n: 37, b: 8, float32: true},
	}
	ranges := [][4]int{{0, 0, 0, 0}, {0, 8, 0, 8}, {0, 8, 8, 16}, {8, 16, 0, 8}, {3, 20, 5, 30}, {30, 37, 0, 37}, {0, 37, 0, 37}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := gaussian(t, tc.n, 3)
			tf, err := Open(writeFile(t, g, Options{Block: tc.b, Float32: tc.float32, Workers: 3, Meta: map[string]string{"kernel": "gaussian"}}), 2)
			if err != nil {
				t.Fatal(err)
			}
			defer tf.Close()
			if tf.N() != tc.n || tf.Block() != min(tc.b, tc.n) || tf.Float32() != tc.float32 || tf.Meta()["kernel"] != "gaussian" {
				t.Fatalf("N %d Block %d Float32 %v meta %v", tf.N(), tf.Block(), tf.Float32(), tf.Meta())
			}
			for _, r := range ranges {
				r0, r1, c0, c1 := min(r[0], tc.n), min(r[1], tc.n), min(r[2], tc.n), min(r[3], tc.n)
				want := make([]float64, (r1-r0)*(c1-c0))
				got := make([]float64, len(want))
				if err := g.Tile(want, r0, r1, c0, c1); err != nil {
					t.Fatal(err)
				}
				if err := tf.Tile(got, r0, r1, c0, c1); err != nil {
					t.Fatal(err)
				}
				for i := range want {
					w := want[i]
					if tc.float32 {
						w = float64(float32(w))
					}
					if got[i] != w {
						t.Fatalf("range %v: value %d = %v, want %v", r, i, got[i], w)
					}
				}
			}
			if err := tf.Tile(make([]float64, 4), 0, 2, tc.n-1, tc.n+1); err == nil {
				t.Error("range outside P: no error")
			}
		})
	}
}

// A pass over a float64 tile file gives the same bits as a pass over the
// generated kernel it was written from, in the portable code that wrote it
// (the vectorized kernel of a GOEXPERIMENT=simd build rounds differently).
func TestEngineSameBits(t *testing.T) {
	const n, k, b = 50, 4, 16
	g := gaussian(t, n, 3)
	tf, err := Open(writeFile(t, g, Options{Block: b}), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	w := make([]float64, n*k)
	for i := range w {
		w[i] = rng.Float64()
	}
	var out [2][]float64
	var frob [2]float64
	for i, src := range []tile.Source{g, tf} {
		e := tile.Engine{Source: src, BlockSize: b, Workers: 2, ISA: tile.ISAGo}
		out[i] = make([]float64, n*k)
		if frob[i], err = e.Mul(context.Background(), out[i], w, k, nil); err != nil {
			t.Fatal(err)
		}
	}
	if frob[0] != frob[1] {
		t.Errorf("||P||² %v from the kernel, %v from the file", frob[0], frob[1])
	}
	for i := range out[0] {
		if out[0][i] != out[1][i] {
			t.Fatalf("P·W[%d] = %v from the kernel, %v from the file", i, out[0][i], out[1][i])
		}
	}
}

func TestWriteDeterministic(t *testing.T) {
	g := gaussian(t, 40, 2)
	var files [][]byte
	for _, workers := range []int{1, 2, 5} {
		var buf bytes.Buffer
		if err := Write(context.Background(), &buf, g, Options{Block: 7, Workers: workers}); err != nil {
			t.Fatal(err)
		}
		files = append(files, buf.Bytes())
	}
	for i := 1; i < len(files); i++ {
		if !bytes.Equal(files[0], files[i]) {
			t.Errorf("file written with worker count #%d differs", i)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	g := gaussian(t, 10, 2)
	if err := Write(context.Background(), new(bytes.Buffer), g, Options{Meta: map[string]string{"n": "3"}}); err == nil {
		t.Error("reserved metadata key: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Write(ctx, new(bytes.Buffer), g, Options{}); err == nil {
		t.Error("canceled context: no error")
	}
}

// batch is one record batch of a hand-made tile file.
type batch struct {
	tile  string // ssnmf.tile metadata; "" leaves it out
	vals  []float64
	nulls bool
}

// raw writes a tile file with the given schema metadata and batches.
func raw(t testing.TB, meta map[string]string, typ arrow.DataType, batches []batch, opts ...ipc.Option) []byte {
	t.Helper()
	var keys, vals []string
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		keys = append(keys, k)
		vals = append(vals, meta[k])
	}
	md := arrow.NewMetadata(keys, vals)
	schema := arrow.NewSchema([]arrow.Field{{Name: "p", Type: typ, Nullable: true}}, &md)
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, append(opts, ipc.WithSchema(schema))...)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewGoAllocator()
	for _, b := range batches {
		var arr arrow.Array
		switch typ.ID() {
		case arrow.FLOAT64:
			bl := array.NewFloat64Builder(mem)
			for i, v := range b.vals {
				if b.nulls && i == 0 {
					bl.AppendNull()
				} else {
					bl.Append(v)
				}
			}
			arr = bl.NewArray()
		case arrow.FLOAT32:
			bl := array.NewFloat32Builder(mem)
			for _, v := range b.vals {
				bl.Append(float32(v))
			}
			arr = bl.NewArray()
		case arrow.INT32:
			bl := array.NewInt32Builder(mem)
			for _, v := range b.vals {
				bl.Append(int32(v))
			}
			arr = bl.NewArray()
		}
		var bm arrow.Metadata
		if b.tile != "" {
			bm = arrow.NewMetadata([]string{"ssnmf.tile"}, []string{b.tile})
		}
		rec := array.NewRecordBatchWithMetadata(schema, []arrow.Array{arr}, int64(arr.Len()), bm)
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		arr.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func goodMeta(n, b int) map[string]string {
	return map[string]string{"ssnmf.magic": Magic, "ssnmf.version": "1", "ssnmf.n": strconv.Itoa(n), "ssnmf.block": strconv.Itoa(b)}
}

// goodBatches returns the tiles of a valid 3×3 P in blocks of 2:
// tiles (0,0) 2×2, (0,1) 2×1, (1,1) 1×1.
func goodBatches() []batch {
	return []batch{
		{tile: "0,0", vals: []float64{1, 0.5, 0.5, 1}},
		{tile: "0,1", vals: []float64{0.25, 0.125}},
		{tile: "1,1", vals: []float64{1}},
	}
}

func with(meta map[string]string, k, v string) map[string]string {
	m := make(map[string]string)
	for a, b := range meta {
		m[a] = b
	}
	if v == "" {
		delete(m, k)
	} else {
		m[k] = v
	}
	return m
}

func TestOpenErrors(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	good := goodBatches()
	replace := func(i int, b batch) []batch {
		out := append([]batch(nil), good...)
		out[i] = b
		return out
	}
	valid := raw(t, goodMeta(3, 2), f64, good)
	tests := []struct {
		name string
		data []byte
		want string // substring of the error
	}{
		{name: "empty", data: nil, want: "not an Arrow IPC file"},
		{name: "truncated", data: valid[:len(valid)-20], want: "not an Arrow IPC file, or truncated"},
		{name: "not arrow", data: []byte("label,x\n1,2\n"), want: "not an Arrow IPC file"},
		{name: "no magic", data: raw(t, with(goodMeta(3, 2), "ssnmf.magic", ""), f64, good), want: `ssnmf.magic = ""`},
		{name: "version", data: raw(t, with(goodMeta(3, 2), "ssnmf.version", "2"), f64, good), want: `ssnmf.version = "2"`},
		{name: "bad n", data: raw(t, with(goodMeta(3, 2), "ssnmf.n", "x"), f64, good), want: `ssnmf.n = "x"`},
		{name: "zero n", data: raw(t, with(goodMeta(3, 2), "ssnmf.n", "0"), f64, good), want: `ssnmf.n = "0"`},
		{name: "block above n", data: raw(t, with(goodMeta(3, 2), "ssnmf.block", "4"), f64, good), want: `ssnmf.block = "4"`},
		{name: "wrong n", data: raw(t, goodMeta(4, 2), f64, good), want: "tile 0,1: 2 values, want 2×2 = 4"},
		{name: "wrong block", data: raw(t, goodMeta(3, 1), f64, good), want: "tile 0,0: 4 values, want 1×1 = 1"},
		{name: "int column", data: raw(t, goodMeta(3, 2), arrow.PrimitiveTypes.Int32, good), want: "want float32 or float64"},
		{name: "missing tile", data: raw(t, goodMeta(3, 2), f64, good[:2]), want: "tile 1,1 is missing"},
		{name: "duplicated tile", data: raw(t, goodMeta(3, 2), f64, append(good, good[1])), want: "tile 0,1 is duplicated (also record batch 1)"},
		{name: "swapped for duplicate", data: raw(t, goodMeta(3, 2), f64, replace(2, batch{tile: "0,1", vals: []float64{1}})), want: "tile 0,1 is duplicated"},
		{name: "no tile metadata", data: raw(t, goodMeta(3, 2), f64, replace(1, batch{vals: []float64{0.25, 0.125}})), want: "record batch 1: no ssnmf.tile metadata"},
		{name: "bad tile metadata", data: raw(t, goodMeta(3, 2), f64, replace(1, batch{tile: "0;1", vals: []float64{0.25, 0.125}})), want: `ssnmf.tile = "0;1"`},
		{name: "lower triangle", data: raw(t, goodMeta(3, 2), f64, replace(1, batch{tile: "1,0", vals: []float64{0.25, 0.125}})), want: "tile 1,0 is not in the upper triangle"},
		{name: "outside grid", data: raw(t, goodMeta(3, 2), f64, replace(1, batch{tile: "0,2", vals: []float64{0.25, 0.125}})), want: "tile 0,2 is not in the upper triangle of a 2×2"},
		{name: "short tile", data: raw(t, goodMeta(3, 2), f64, replace(1, batch{tile: "0,1", vals: []float64{0.25}})), want: "tile 0,1: 1 values, want 2×1 = 2"},
		{name: "null", data: raw(t, goodMeta(3, 2), f64, replace(1, batch{tile: "0,1", vals: []float64{0.25, 0.125}, nulls: true})), want: "tile 0,1: 1 null values"},
		{name: "NaN", data: raw(t, goodMeta(3, 2), f64, replace(1, batch{tile: "0,1", vals: []float64{0.25, math.NaN()}})), want: "tile 0,1: P[1,2] = NaN"},
		{name: "Inf", data: raw(t, goodMeta(3, 2), f64, replace(2, batch{tile: "1,1", vals: []float64{math.Inf(1)}})), want: "tile 1,1: P[2,2] = +Inf"},
		{name: "negative", data: raw(t, goodMeta(3, 2), f64, replace(1, batch{tile: "0,1", vals: []float64{-0.25, 0.125}})), want: "tile 0,1: P[0,2] = -0.25"},
		{name: "not symmetric", data: raw(t, goodMeta(3, 2), f64, replace(0, batch{tile: "0,0", vals: []float64{1, 0.5, 0.4, 1}})), want: "tile 0,0: not symmetric: P[0,1] = 0.5 but P[1,0] = 0.4"},
		{name: "compressed", data: raw(t, goodMeta(3, 2), f64, good, ipc.WithLZ4()), want: "compressed record batches are not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tf, err := Decode(tc.data, 2)
			if err == nil {
				tf.Close()
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
	tf, err := Decode(valid, 1)
	if err != nil {
		t.Fatalf("valid file: %v", err)
	}
	defer tf.Close()
	got := make([]float64, 9)
	if err := tf.Tile(got, 0, 3, 0, 3); err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 0.5, 0.25, 0.5, 1, 0.125, 0.25, 0.125, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("P = %v, want %v", got, want)
		}
	}
}

// The error of Open names the file.
func TestOpenNamesFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "bad.arrow")
	if err := os.WriteFile(name, []byte("not arrow"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(name, 1)
	if err == nil || !strings.Contains(err.Error(), name) {
		t.Fatalf("error %v does not name %s", err, name)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "absent.arrow"), 1); err == nil {
		t.Fatal("absent file: no error")
	}
}

// Values are used in place: every tile's slice points into the mapping.
func TestZeroCopy(t *testing.T) {
	tf, err := Open(writeFile(t, gaussian(t, 30, 2), Options{Block: 8}), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	for i, v := range tf.v64 {
		if !within(unsafe.Pointer(unsafe.SliceData(v)), tf.mapped) {
			t.Fatalf("tile %d is not in the mapping", i)
		}
	}
}

func TestDump(t *testing.T) {
	name := writeFile(t, gaussian(t, 10, 2), Options{Block: 4, Float32: true, Meta: map[string]string{"gamma": "0.3"}})
	var out bytes.Buffer
	if err := Dump(&out, name); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"n 10, block 4, 3×3 tile grid, 6 tiles stored, values float32", "ssnmf.gamma = 0.3", "tile 2,2  rows [8:10) cols [8:10)  min"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dump lacks %q:\n%s", want, out.String())
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(raw(f, goodMeta(3, 2), arrow.PrimitiveTypes.Float64, goodBatches()))
	f.Add(raw(f, goodMeta(3, 2), arrow.PrimitiveTypes.Float32, goodBatches()))
	var buf bytes.Buffer
	if err := Write(context.Background(), &buf, gaussian(f, 7, 2), Options{Block: 3}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		// Decode needs 8-byte aligned data, as a mapping is.
		aligned := store.AsBytes(make([]uint64, (len(data)+7)/8))[:len(data)]
		copy(aligned, data)
		tf, err := Decode(aligned, 1)
		if err != nil {
			return
		}
		defer tf.Close()
		n := tf.N()
		if n > 1000 {
			return
		}
		p := make([]float64, n*n)
		if err := tf.Tile(p, 0, n, 0, n); err != nil {
			t.Fatalf("valid file, Tile: %v", err)
		}
		for i := range n {
			for j := range n {
				if v := p[i*n+j]; !(v >= 0) || math.IsInf(v, 0) || v != p[j*n+i] {
					t.Fatalf("P[%d,%d] = %v, P[%d,%d] = %v after validation", i, j, v, j, i, p[j*n+i])
				}
			}
		}
	})
}

// TestTruncatedUnderRead cuts the file short after Open: reading the lost
// pages faults (SIGBUS), which Tile returns as an error naming the file
// rather than crashing.
func TestTruncatedUnderRead(t *testing.T) {
	const n = 600
	name := writeFile(t, gaussian(t, n, 2), Options{Block: 300})
	tf, err := Open(name, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	if err := os.Truncate(name, 4096); err != nil {
		t.Fatal(err)
	}
	dst := make([]float64, n*n)
	err = tf.Tile(dst, 0, n, 0, n)
	if err == nil || !strings.Contains(err.Error(), "tile file "+name+": a read of the mapped file faulted") {
		t.Fatalf("error %v, want a fault naming %s", err, name)
	}
}
