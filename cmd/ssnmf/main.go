package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/ssnmf/ssnmf/internal/enum"
	"github.com/ssnmf/ssnmf/internal/fault"
	"github.com/ssnmf/ssnmf/solver"
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

// main runs the command line. The first SIGINT or SIGTERM asks a solve to
// stop at the end of the current pass of its solver (within 65,536 rows of
// a row-CD sweep), leaving a checkpoint
// to resume from, and ends at once the work that saves none (the set-up of
// P, the other commands); a second one aborts at once.
func main() {
	// The memory cgroup's budget, until a command's -mem says otherwise.
	if b, err := newMemoryBudget(0); err == nil {
		b.Apply()
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	var stopping atomic.Bool
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		stopping.Store(true)
		fmt.Fprintln(os.Stderr, stoppingLine(os.Args[1:]))
		<-sigs
		cancel(errAborted)
	}()
	code := runStop(ctx, os.Args[1:], os.Stdout, os.Stderr, stopping.Load)
	signal.Stop(sigs)
	cancel(nil)
	os.Exit(code)
}

// errAborted is the cause of the cancellation of main's context by a
// second signal, which runStop names instead of a bare "context canceled".
var errAborted = errors.New("aborted by a second signal")

// headline is the first line of the usage text and of the package doc.
const headline = "ssnmf clusters data by simplicial symmetric NMF of their affinity matrix, P ≈ W Wᵀ."

// about follows the headline in the package doc.
const about = `P is the affinity matrix of the rows of a data set, and each row of W
(n×k, nonnegative, rows summing to 1) is a point's soft membership in k
clusters. By default P is the self-tuning kNN graph of the rows, built
exactly and kept sparse; -affinity gaussian makes it the Gaussian kernel,
never stored but generated tile by tile in every pass; P may also be read
from a tile file or an edge list. With no INPUT, solve clusters the yeast
data set built into the binary.`

// footer ends the usage text and the package doc.
const footer = `Run "ssnmf solve -h" for the solver's flags; docs/guide/usage-and-flags.md in the source tree has every command's flags, and docs/guide/README.md the rest of the guide.`

// A subcommand is one of ssnmf's commands. The command table, commands, makes
// the usage text, the dispatch of runStop and the package doc (doc.go,
// which TestDocUpToDate checks and rewrites).
type subcommand struct {
	name  string
	usage []usageLine // the ways to run it, each a line of the usage text
	run   func(ctx context.Context, args []string, stdout, stderr io.Writer, stop func() bool) error
	// stopping says what the command does on a first signal, for the line
	// main prints then; "" for a command that saves no checkpoint and ends
	// at once (noStop).
	stopping string
}

// stoppingLine is the line main prints on the first signal to the command
// line args: what the command does on it.
func stoppingLine(args []string) string {
	name := "ssnmf"
	if len(args) > 0 {
		if i := slices.IndexFunc(commands, func(c subcommand) bool { return c.name == args[0] }); i >= 0 {
			if commands[i].stopping != "" {
				return "ssnmf: stopping: " + commands[i].stopping + " (signal again to abort)"
			}
			name += " " + args[0]
		}
	}
	return "ssnmf: stopping: " + name + " saves no checkpoint, and ends now without writing its output (signal again to abort)"
}

// usageLine is a way to run a command: the arguments after "ssnmf NAME",
// and what it does.
type usageLine struct {
	args, short string
}

// commands are the commands, in the order of the usage text.
var commands = []subcommand{
	{name: "solve", usage: []usageLine{
		{"[flags] [INPUT]", "cluster the rows of a CSV file (built-in yeast data if none)"},
		{"-resume DIR", "continue a run from its checkpoint"},
	}, run: solve, stopping: "a solve stops with a checkpoint after its current pass or block of rows, work with no checkpoint ends now"},
	{name: "predict", usage: []usageLine{{"-model DIR [flags] INPUT -out FILE", "memberships of new rows in the clusters of a saved model (solve -model)"}}, run: noStop(predictCmd)},
	{name: "gen", usage: []usageLine{{"-n N [flags] -o FILE", "write a seeded Gaussian mixture (Parquet, Arrow or CSV)"}}, run: noStop(gen)},
	{name: "tiles", usage: []usageLine{{"[flags] -o FILE", "write P of an input as an Arrow tile file (for solve -affinity)"}}, run: noStop(tiles)},
	{name: "graph", usage: []usageLine{{"[flags] -o EDGES [INPUT]", "write the kNN graph of an input as an edge list (for solve -affinity)"}}, run: noStop(graphCmd)},
	{name: "worker", usage: []usageLine{{"-run DIR -pass N", "one task of a job step of solve -engine slurm (launched by srun)"}}, run: noStop(worker)},
	{name: "bench", usage: []usageLine{{"[flags]", "time the tile kernels against this machine's FMA peak"}}, run: noStop(bench)},
	{name: "plot", usage: []usageLine{{"[flags] -o FILE TRACE.csv...", "plot traces (objective, gap against seconds, passes)"}}, run: noStop(plotCmd)},
	{name: "dump", usage: []usageLine{{"FILE", "print a work-directory matrix, checkpoint, tile file, block file or model for debugging"}},
		run: func(ctx context.Context, args []string, stdout, _ io.Writer, _ func() bool) error {
			return dump(ctx, args, stdout)
		}},
}

// guarded runs the command on this goroutine under fault.Catch: a fault
// of a mapped file (cut short under the run) is its error, naming the
// file, and the command's deferred clean-ups (its temporary work
// directory, its unfinished outputs) run as for any error. The workers it
// starts guard themselves (fault.Guard).
func (c subcommand) guarded(ctx context.Context, args []string, stdout, stderr io.Writer, stop func() bool) (err error) {
	defer fault.Catch(&err)()
	return c.run(ctx, args, stdout, stderr, stop)
}

// noStop makes the run function of a command that saves no checkpoint:
// asked to stop, it is canceled at once (solver.StopContext).
func noStop(run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) func(context.Context, []string, io.Writer, io.Writer, func() bool) error {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer, stop func() bool) error {
		ctx, cancel := solver.StopContext(ctx, stop)
		defer cancel()
		err := run(ctx, args, stdout, stderr)
		if err != nil && stop != nil && stop() {
			return errors.New("stopped by a signal before the end; no output was written")
		}
		return err
	}
}

// usageLines returns the lines of the usage text that list the commands,
// the descriptions aligned.
func usageLines() []string {
	var lines []string
	for _, c := range commands {
		for _, u := range c.usage {
			lines = append(lines, fmt.Sprintf("%-28s  %s", "ssnmf "+c.name+" "+u.args, u.short))
		}
	}
	return lines
}

// usage returns the usage text of ssnmf.
func usage() string {
	var b strings.Builder
	b.WriteString(headline + "\n\nUsage:\n")
	for _, l := range usageLines() {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("\n" + footer + "\n")
	return b.String()
}

// checkOnlyKey is the context key of checkOnly.
type checkOnlyKey struct{}

// withCheckOnly returns a context under which every command parses and
// checks its command line and then returns nil without doing its work. It
// is not reachable from the command line: TestDocCommands uses it to check
// the documented commands it cannot afford to run (a Slurm allocation, a
// worker's run directory, a timing run).
func withCheckOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, checkOnlyKey{}, true)
}

// checkOnly reports whether ctx asks a command to stop once its command
// line is checked (withCheckOnly).
func checkOnly(ctx context.Context) bool {
	v, _ := ctx.Value(checkOnlyKey{}).(bool)
	return v
}

// run executes the command line args and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runStop(ctx, args, stdout, stderr, nil)
}

// runStop is run with a function that asks a solve to stop; nil never does.
func runStop(ctx context.Context, args []string, stdout, stderr io.Writer, stop func() bool) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return exitUsage
	}
	var err error
	switch name := args[0]; name {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage())
		return exitOK
	default:
		i := slices.IndexFunc(commands, func(c subcommand) bool { return c.name == name })
		if i < 0 {
			names := make([]string, len(commands))
			for j, c := range commands {
				names[j] = c.name
			}
			err = usagef("unknown command %q (want %s)", name, enum.Join(names, "or"))
			break
		}
		err = commands[i].guarded(ctx, args[1:], stdout, stderr, stop)
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		return exitOK
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && errors.Is(err, context.Canceled) {
		err = fmt.Errorf("%w (%v)", cause, err)
	}
	fmt.Fprintf(stderr, "ssnmf: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailure
}
