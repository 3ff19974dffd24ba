package parquetio_test

import (
	"bytes"
	"fmt"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/parquetio"
)

func ExampleWriteMembership() {
	W := []float64{
		0.9, 0.1,
		0.25, 0.75,
		0.5, 0.5,
	}
	var buf bytes.Buffer
	if err := parquetio.WriteMembership(&buf, W, 3, 2); err != nil {
		panic(err)
	}
	// Read it back as a table: w1, w2 as features, cluster as the label.
	tab, err := parquetio.ReadFrom(bytes.NewReader(buf.Bytes()), "w.parquet",
		store.TableOptions{Features: []string{"w1", "w2"}, Label: "cluster"})
	if err != nil {
		panic(err)
	}
	fmt.Println(tab.Features)
	fmt.Println("clusters:", tab.Labels, tab.Classes)
	// Output:
	// [0.9 0.1 0.25 0.75 0.5 0.5]
	// clusters: [0 1 0] [0 1]
}
