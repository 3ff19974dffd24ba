// Command ssnmf clusters data by simplicial symmetric NMF: it factors the
// Gaussian affinity matrix P of a data set's rows as W Wᵀ, with each row of W
// a probability vector, the point's soft membership in k clusters. P is
// never stored; it is generated tile by tile in every pass.
//
// Usage:
//
//	ssnmf solve [flags] [INPUT.csv | INPUT.csv.gz]
//	ssnmf dump [-rows N] FILE.mat
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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `ssnmf clusters data by simplicial symmetric NMF (Frank-Wolfe).

Usage:
  ssnmf solve [flags] [INPUT]   cluster the rows of a CSV file (built-in yeast data if none)
  ssnmf dump [-rows N] FILE     print the header and first rows of a work-directory matrix file

Run "ssnmf solve -h" for the solver's flags.
`

// run executes the command line args and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "solve":
		err = solve(ctx, args[1:], stdout, stderr)
	case "dump":
		err = dump(args[1:], stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		err = usagef("unknown command %q (want solve or dump)", args[0])
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
