package store_test

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ssnmf/ssnmf/store"
)

func ExampleReadArrowStream() {
	// An Arrow IPC stream with an integer and a float feature and a string label.
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "height", Type: arrow.PrimitiveTypes.Float32},
		{Name: "weight", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "label", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Float32Builder).AppendValues([]float32{1.5, 1.75, 1.625}, nil)
	b.Field(1).(*array.Int32Builder).AppendValues([]int32{55, 81, 70}, []bool{true, true, false})
	b.Field(2).(*array.StringBuilder).AppendValues([]string{"b", "a", "a"}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		panic(err)
	}
	w.Close()

	tab, err := store.ReadArrowStream(bytes.NewReader(buf.Bytes()), "people.arrows", store.TableOptions{Features: []string{"height"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(tab.N, "rows of", tab.Names, "features:", tab.Features)
	fmt.Println("labels:", tab.Labels, "classes:", tab.Classes)

	_, err = store.ReadArrowStream(bytes.NewReader(buf.Bytes()), "people.arrows", store.TableOptions{})
	fmt.Println(err)
	// Output:
	// 3 rows of [height] features: [1.5 1.75 1.625]
	// labels: [1 0 0] classes: [a b]
	// people.arrows: row index 2: column "weight": null value, want a number
}
