package trace_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/trace"
)

// A Writer records the iterates of a solver (its Record is the solver's
// recorder): a row per iterate, the last one the iterate the solver
// stopped at.
func ExampleWriter() {
	w := trace.NewWriter(os.Stdout)
	w.Record(fw.Iteration{Iter: 0, Objective: 120, Gap: 30, Step: 0.25, Passes: 2, Moved: 12, Model: 25, Elapsed: 500 * time.Millisecond})
	w.Record(fw.Iteration{Iter: 1, Objective: 101, Gap: 4, Passes: 3, Final: true, Model: 26, Elapsed: time.Second})
	// Output:
	// iter,seconds,objective,gap,step_size,passes,start,moved,model
	// 0,0.5,120,30,0.25,2,0,12,25
	// 1,1,101,4,0,3,0,0,26
}

// A trace in the older format, without the start column, read and turned
// into f - f*.
func ExampleRead() {
	const old = `iter,seconds,objective,gap,step_size,passes
0,0.5,120,30,0.1,2
1,1.0,105,12,0.2,3
2,1.5,101,4,0,4
`
	tr, err := trace.Read(strings.NewReader(old), "run.csv")
	if err != nil {
		panic(err)
	}
	excess, _ := tr.Column(trace.Excess)
	start, _ := tr.Column(trace.Start)
	fmt.Println(tr.Len(), excess, start)
	// Output: 3 [19 4 0] [0 0 0]
}
