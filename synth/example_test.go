package synth_test

import (
	"context"
	"log"
	"os"

	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/synth"
)

// Example writes three rows of a mixture of two components in two
// dimensions as CSV, as ssnmf gen -n 3 -p 2 -k 2 -seed 1 -o FILE.csv does.
func Example() {
	s := synth.Settings{N: 3, P: 2, K: 2, Sep: 2, Seed: 1}
	if err := synth.Write(context.Background(), os.Stdout, input.CSV, s); err != nil {
		log.Fatal(err)
	}
	// Output:
	// x1,x2,label
	// 2.588964943644932,-3.0891522071096613,1
	// -5.235891688891755,-2.897307323919982,0
	// -3.7182773025762135,-1.8964524512997412,0
}
