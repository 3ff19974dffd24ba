package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ssnmf/ssnmf/store"
)

func ExampleParseCSV() {
	const data = `height,weight,label
1.62,55,b
1.80,81,a
1.75,70,a
`
	tab, err := store.ParseCSV(strings.NewReader(data), "people.csv", store.CSVOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(tab.N, "rows of", tab.Names)
	fmt.Println("features:", tab.Features)
	fmt.Println("labels:", tab.Labels, "classes:", tab.Classes)

	_, err = store.ParseCSV(strings.NewReader("x,y\n1,2\n3,oops\n"), "bad.csv", store.CSVOptions{})
	fmt.Println(err)
	// Output:
	// 3 rows of [height weight]
	// features: [1.62 55 1.8 81 1.75 70]
	// labels: [1 0 0] classes: [a b]
	// bad.csv:3: column "y": "oops" is not a number
}

func ExampleCreateMatrix() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "W.mat")

	m, err := store.CreateMatrix(path, 2, 3)
	if err != nil {
		panic(err)
	}
	copy(m.Row(1), []float64{0.25, 0.5, 0.25}) // writes go to the mapped file
	if err := m.Close(); err != nil {
		panic(err)
	}

	m, err = store.OpenMatrix(path)
	if err != nil {
		panic(err)
	}
	defer m.Close()
	fmt.Println(m.Rows(), m.Cols(), m.Row(1))
	// Output:
	// 2 3 [0.25 0.5 0.25]
}
