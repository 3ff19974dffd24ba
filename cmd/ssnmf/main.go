// Command ssnmf clusters data by simplicial symmetric NMF: it factors the
// Gaussian affinity matrix P of a data set's rows as W Wᵀ, with each row of W
// a probability vector, the point's soft membership in k clusters. P is
// never stored; it is generated tile by tile in every pass, or read from a
// tile file.
//
// Usage:
//
//	ssnmf solve [flags] [INPUT]
//	ssnmf solve -resume DIR [flags]
//	ssnmf gen -n N [flags] -o FILE
//	ssnmf tiles [flags] -o FILE.arrow [INPUT]
//	ssnmf bench [flags]
//	ssnmf plot [flags] -o FILE.png TRACE.csv...
//	ssnmf dump FILE
//
// Run "ssnmf solve -h" for the flags. With no INPUT, solve clusters the
// yeast data set built into the binary.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the run failed (I/O, interrupted)
	exitUsage   = 2 // bad flags or bad input
)

// usageError marks errors in the user's flags or input; they exit with
// exitUsage.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// main runs the command line. The first SIGINT or SIGTERM asks a run to
// stop at the end of the current tile pass, leaving a checkpoint to resume
// from; a second one aborts at once.
func main() {
	ctx, cancel := context.WithCancel(context.Background())
	var stopping atomic.Bool
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		stopping.Store(true)
		fmt.Fprintln(os.Stderr, "ssnmf: stopping at the end of the current pass (signal again to abort)")
		<-sigs
		cancel()
	}()
	code := runStop(ctx, os.Args[1:], os.Stdout, os.Stderr, stopping.Load)
	signal.Stop(sigs)
	cancel()
	os.Exit(code)
}

const usage = `ssnmf clusters data by simplicial symmetric NMF (Frank-Wolfe).

Usage:
  ssnmf solve [flags] [INPUT]   cluster the rows of a CSV file (built-in yeast data if none)
  ssnmf solve -resume DIR       continue a run from its checkpoint
  ssnmf gen -n N [flags] -o FILE  write a seeded Gaussian mixture (Parquet, Arrow or CSV)
  ssnmf tiles [flags] -o FILE   write P of an input as an Arrow tile file (for solve -affinity)
  ssnmf bench [flags]           time the tile kernels against this machine's FMA peak
  ssnmf plot [flags] -o FILE TRACE.csv...   plot traces (objective, gap against seconds, passes)
  ssnmf dump FILE               print a work-directory matrix, checkpoint or tile file for debugging

Run "ssnmf solve -h" for the solver's flags.
`

// run executes the command line args and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runStop(ctx, args, stdout, stderr, nil)
}

// runStop is run with a function that asks a solve to stop; nil never does.
func runStop(ctx context.Context, args []string, stdout, stderr io.Writer, stop func() bool) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "solve":
		err = solve(ctx, args[1:], stdout, stderr, stop)
	case "gen":
		err = gen(ctx, args[1:], stdout, stderr)
	case "tiles":
		err = tiles(ctx, args[1:], stdout, stderr)
	case "plot":
		err = plotCmd(ctx, args[1:], stdout, stderr)
	case "bench":
		err = bench(ctx, args[1:], stdout, stderr)
	case "dump":
		err = dump(args[1:], stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		err = usagef("unknown command %q (want solve, gen, tiles, bench, plot or dump)", args[0])
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		return exitOK
	}
	fmt.Fprintf(stderr, "ssnmf: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailure
}
