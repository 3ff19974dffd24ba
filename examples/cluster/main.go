// Command cluster clusters a slice of rows with package solver and prints
// each row's cluster and memberships.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/ssnmf/ssnmf/solver"
)

func main() {
	var rows [][]float64
	for i := range 30 { // three groups of ten rows, around 0, 10 and 20
		g, d := float64(10*(i/10)), float64(i%10)/10
		rows = append(rows, []float64{g + d, g - d})
	}
	res, err := solver.Solve(context.Background(), solver.Input{Rows: rows}, solver.Options{K: 3})
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < res.N; i += 5 {
		fmt.Printf("row %2d: cluster %d, memberships %.2f\n", i, res.Cluster(i), res.Row(i))
	}
}
