package tilefile

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ssnmf/ssnmf/internal/ordered"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/tile"
)

// Format identifiers in a tile file's schema metadata.
const (
	Magic   = "ssnmf-tiles"
	Version = 1
)

// Metadata keys.
const (
	keyMagic   = "ssnmf.magic"
	keyVersion = "ssnmf.version"
	keyN       = "ssnmf.n"
	keyBlock   = "ssnmf.block"
	keyTile    = "ssnmf.tile"
	keyPrefix  = "ssnmf."
	column     = "p"
)

// Options control Write. The zero value writes float64 tiles of
// tile.DefaultBlockSize on GOMAXPROCS goroutines.
type Options struct {
	Block   int  // tile edge B, capped at n; tile.DefaultBlockSize if 0
	Float32 bool // store float32 values instead of float64
	Workers int  // goroutines generating tiles; GOMAXPROCS if 0

	// Meta is provenance recorded in the schema metadata, each key
	// prefixed with "ssnmf." (for example "kernel" or "gamma"). Keys may
	// not clash with the format's own.
	Meta map[string]string

	// Progress, if not nil, is called after each tile is written with the
	// numbers of tiles written and in all.
	Progress func(done, total int)
}

// Write computes every upper-triangular tile of src and writes them to w as
// a tile file. Tiles are generated on several goroutines and written in
// row-major order, so the output has the same bytes for every worker count.
func Write(ctx context.Context, w io.Writer, src tile.Source, opt Options) error {
	n := src.N()
	if n < 1 {
		return fmt.Errorf("tile file: n = %d, want n >= 1", n)
	}
	b := opt.Block
	if b <= 0 {
		b = tile.DefaultBlockSize
	}
	b = min(b, n)
	g := newGrid(n, b)
	typ := arrow.DataType(arrow.PrimitiveTypes.Float64)
	if opt.Float32 {
		typ = arrow.PrimitiveTypes.Float32
	}
	keys := []string{keyMagic, keyVersion, keyN, keyBlock}
	vals := []string{Magic, strconv.Itoa(Version), strconv.Itoa(n), strconv.Itoa(b)}
	for _, k := range slices.Sorted(maps.Keys(opt.Meta)) {
		key := keyPrefix + k
		switch key {
		case keyMagic, keyVersion, keyN, keyBlock, keyTile:
			return fmt.Errorf("tile file: metadata key %q is reserved", k)
		}
		keys = append(keys, key)
		vals = append(vals, opt.Meta[k])
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: column, Type: typ}}, ptrMeta(arrow.NewMetadata(keys, vals)))
	fw, err := ipc.NewFileWriter(w, ipc.WithSchema(schema))
	if err != nil {
		return fmt.Errorf("tile file: %w", err)
	}
	type buf struct {
		f64 []float64
		f32 []float32
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = defaultWorkers()
	}
	total := g.tiles()
	err = ordered.Run(ctx, workers, total,
		func() *buf { return &buf{f64: make([]float64, b*b), f32: make([]float32, b*b)} },
		func(_ context.Context, t int, bf *buf) error {
			r0, r1, c0, c1 := g.bounds(t)
			v := bf.f64[:(r1-r0)*(c1-c0)]
			if err := src.Tile(v, r0, r1, c0, c1); err != nil {
				I, J := g.coords(t)
				return fmt.Errorf("tile %d,%d: %w", I, J, err)
			}
			if opt.Float32 {
				for i, x := range v {
					bf.f32[i] = float32(x)
				}
			}
			return nil
		},
		func(t int, bf *buf) error {
			r0, r1, c0, c1 := g.bounds(t)
			m := (r1 - r0) * (c1 - c0)
			raw := store.AsBytes(bf.f64[:m])
			if opt.Float32 {
				raw = store.AsBytes(bf.f32[:m])
			}
			I, J := g.coords(t)
			data := array.NewData(typ, m, []*memory.Buffer{nil, memory.NewBufferBytes(raw)}, nil, 0, 0)
			arr := array.MakeFromData(data)
			rec := array.NewRecordBatchWithMetadata(schema, []arrow.Array{arr}, int64(m),
				arrow.NewMetadata([]string{keyTile}, []string{strconv.Itoa(I) + "," + strconv.Itoa(J)}))
			err := fw.Write(rec)
			rec.Release()
			arr.Release()
			data.Release()
			if err != nil {
				return fmt.Errorf("write tile %d,%d: %w", I, J, err)
			}
			if opt.Progress != nil {
				opt.Progress(t+1, total)
			}
			return nil
		})
	if err != nil {
		fw.Close()
		return fmt.Errorf("tile file: %w", err)
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("tile file: %w", err)
	}
	return nil
}

func ptrMeta(m arrow.Metadata) *arrow.Metadata { return &m }
