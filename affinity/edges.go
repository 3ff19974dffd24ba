package affinity

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/store/parquetio"
)

// InputOrder returns the sparse P of b with its rows in the input's
// order: b's graph, or, where the approximate kNN search moved the rows
// (b.Order), the graph renumbered into the file file, which the caller
// closes (and which is then not b's graph). It stops with ctx's error once
// ctx is done.
func (b *Built) InputOrder(ctx context.Context, file string) (*graph.CSR, error) {
	if b.Order == nil {
		return b.graph, nil
	}
	return b.graph.Renumber(ctx, b.Order, file, 0)
}

// WriteEdges writes the graph g to w as an edge list in format
// (input.Parquet, Arrow or CSV), which Build reads back (Spec.File) to
// the same bits.
func WriteEdges(w io.Writer, g *graph.CSR, format string) error {
	if format == input.CSV {
		return g.WriteEdgesCSV(w)
	}
	var rw interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	var err error
	if format == input.Parquet {
		rw, err = parquetio.NewWriter(w, graph.EdgeSchema())
	} else {
		rw, err = ipc.NewFileWriter(w, ipc.WithSchema(graph.EdgeSchema()))
	}
	if err != nil {
		return err
	}
	if err := g.EdgeBatches(rw.Write); err != nil {
		return err
	}
	return rw.Close()
}
