package affinity

import (
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/internal/fault"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/store/parquetio"
)

// WriteEdges writes the sparse P of b as an edge list to w in format
// (input.Parquet, Arrow or CSV), its rows named in the input's order,
// which Build reads back (Spec.File) to the same bits. Rows the
// approximate kNN search moved (b.Order) are renumbered in the file
// renumbered, removed after.
func (b *Built) WriteEdges(w io.Writer, format, renumbered string) (err error) {
	g := b.graph
	if b.Order != nil {
		if g, err = g.Renumber(b.Order, renumbered, 0); err != nil {
			return err
		}
		defer g.Close()
		defer fault.Catch(&err)() // names a fault before g.Close unmaps the file
	}
	if format == input.CSV {
		return g.WriteEdgesCSV(w)
	}
	var rw interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
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
