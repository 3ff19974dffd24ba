package figure_test

import (
	"fmt"
	"strings"

	"github.com/ssnmf/ssnmf/figure"
)

// A trace as "ssnmf solve -trace" writes it, read and turned into the
// curve of the paper's Fig. 3: f - f* against seconds.
func ExampleTraceSeries() {
	const trace = `iter,seconds,objective,gap,step_size,passes
0,0.5,120,30,0.1,2
1,1.0,105,12,0.2,3
2,1.5,101,4,0,4
`
	tr, err := figure.ReadTrace(strings.NewReader(trace), "run.csv")
	if err != nil {
		panic(err)
	}
	s, err := figure.TraceSeries(tr, "seconds", figure.Excess)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.X, s.Y)
	// Output: [0.5 1 1.5] [19 4 0]
}
