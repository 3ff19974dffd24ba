package figure_test

import (
	"fmt"
	"strings"

	"github.com/ssnmf/ssnmf/figure"
	"github.com/ssnmf/ssnmf/trace"
)

// A trace as "ssnmf solve -trace" writes it, read and turned into the
// curve of the paper's Fig. 3: f - f* against seconds.
func ExampleTraceSeries() {
	const run = `iter,seconds,objective,gap,step_size,passes,start
0,0.5,120,30,0.1,2,0
1,1.0,105,12,0.2,3,0
2,1.5,101,4,0,4,0
`
	tr, err := trace.Read(strings.NewReader(run), "run.csv")
	if err != nil {
		panic(err)
	}
	s, err := figure.TraceSeries(tr, trace.Seconds, trace.Excess)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Label, s.X, s.Y)
	// Output: run.csv [0.5 1 1.5] [19 4 0]
}
