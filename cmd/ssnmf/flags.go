package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/internal/enum"
	"github.com/ssnmf/ssnmf/solver"
)

// errHelp reports that -h was given and the usage printed.
var errHelp = errors.New("help requested")

// newFlagSet returns the flag set of the command name, whose usage (-h)
// prints head, then the flags.
func newFlagSet(name, head string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		io.WriteString(fs.Output(), head+"\n\nFlags:\n")
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, allowing flags after positional arguments (as in
// "ssnmf solve data.csv -k 10"), and returns the positional arguments. A bad
// flag is a one-line usage error; -h prints the usage on stdout and returns
// errHelp.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(stdout)
				fs.Usage()
				return nil, errHelp
			}
			return nil, usagef("%v (run \"%s -h\" for the flags)", err, fs.Name())
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// gammaFlag is -gamma: a positive number, a rule of the bandwidth by name,
// or "auto" for the default rule.
type gammaFlag struct {
	auto  bool
	rule  affinity.Rule // the named rule, if not auto and value is 0
	value float64
}

func (g *gammaFlag) String() string {
	switch {
	case g.auto:
		return "auto"
	case g.value == 0:
		return g.rule.String()
	}
	return strconv.FormatFloat(g.value, 'g', -1, 64)
}

func (g *gammaFlag) Set(s string) error {
	if s == "auto" {
		*g = gammaFlag{auto: true}
		return nil
	}
	if r, err := affinity.ParseRule(s); err == nil {
		*g = gammaFlag{rule: r}
		return nil
	}
	v, ok := positive(s)
	if !ok {
		return fmt.Errorf("want a positive number, auto, neighbor or mass, have %q", s)
	}
	*g = gammaFlag{value: v}
	return nil
}

// scaleFlag is -scale, a solver.Scale (solver.ParseScale).
type scaleFlag struct{ solver.Scale }

func (f *scaleFlag) String() string {
	if f.Factor != 0 {
		return strconv.FormatFloat(f.Factor, 'g', -1, 64)
	}
	rule := cmp.Or(f.Rule, solver.ScaleMass)
	if f.Times != 0 && f.Times != 1 {
		rule += ":" + strconv.FormatFloat(f.Times, 'g', -1, 64)
	}
	return rule
}

func (f *scaleFlag) Set(s string) error {
	v, err := solver.ParseScale(s)
	if err != nil {
		return err
	}
	f.Scale = v
	return nil
}

// durationFlag is a time.Duration flag whose errors say what a duration
// is and how long one may be, where the flag package says "parse error".
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return "0s"
	}
	return f.d.String()
}

func (f durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as 90s, 30m or 12h, up to %dh (Go's time.Duration)", math.MaxInt64/int64(time.Hour))
	}
	*f.d = d
	return nil
}

// positive parses s as a finite number > 0.
func positive(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && v > 0 && !math.IsInf(v, 0)
}

// flagMarks records what the definitions of solve's flags say about them
// beyond the flag package. A definition marks its flag by passing the name
// through a method:
//
//	fs.IntVar(&c.maxIter, marks.mutable("max-iter"), 1000, "stop after this many iterations")
//
// A nil *flagMarks marks nothing. The marks of what a flag applies to
// (needs, applies.go) serve every command that shares the definition.
type flagMarks struct {
	mutables []string          // may change on resume, in the order defined
	files    []string          // name a file
	optional []string          // left out of a checkpoint when empty
	applies  map[string]need   // apply only to runs with the need
	mins     []flagMin         // at least a value, in the order defined
	options  map[string]string // the flag of a field of solver.Options
}

// flagMin is a flag's smallest value (flagMarks.atLeast).
type flagMin struct {
	name string
	min  float64
}

// atLeast marks the flag name, of a number, as one whose value must be at
// least min (checkRanges).
func (m *flagMarks) atLeast(min float64, name string) string {
	if m != nil {
		m.mins = append(m.mins, flagMin{name, min})
	}
	return name
}

// checkRanges refuses the first value of fs, in the order the flags were
// defined, below its flag's smallest (atLeast), or not a number:
//
//	-moves must be >= 1, have 0
func (m *flagMarks) checkRanges(fs *flag.FlagSet) error {
	for _, f := range m.mins {
		s := fs.Lookup(f.name).Value.String()
		if v, err := strconv.ParseFloat(s, 64); err != nil || !(v >= f.min) {
			return usagef("-%s must be >= %v, have %s", f.name, f.min, s)
		}
	}
	return nil
}

// option marks the flag name as the one that sets field of
// solver.Options, whose range solver.Options.Check checks
// (checkOptions): the flag needs no range of its own.
func (m *flagMarks) option(field, name string) string {
	if m != nil {
		if m.options == nil {
			m.options = map[string]string{}
		}
		m.options[field] = name
	}
	return name
}

// checkOptions refuses the first field of o out of range
// (solver.Options.Check), named by the flag marked as its option, with
// the message of the field:
//
//	-starts must be >= 0, have -1
func (m *flagMarks) checkOptions(o solver.Options) error {
	err := o.Check()
	var fe *solver.FieldError
	if errors.As(err, &fe) {
		if name, ok := m.options[fe.Field]; ok {
			return usagef("-%s%s", name, fe.Msg)
		}
	}
	if err != nil {
		return usageError{err}
	}
	return nil
}

// mutable marks the flag name as one that may differ between a run and its
// resumption: it changes neither the iterates nor the answer.
func (m *flagMarks) mutable(name string) string {
	if m != nil {
		m.mutables = append(m.mutables, name)
	}
	return name
}

// mutableList lists the mutable flags in prose: "-a, -b and -c".
func (m *flagMarks) mutableList() string {
	dashed := make([]string, len(m.mutables))
	for i, name := range m.mutables {
		dashed[i] = "-" + name
	}
	return enum.Join(dashed, "and")
}

// file marks the flag name as naming a file: a checkpoint records it as an
// absolute path, or leaves it out when it names no file.
func (m *flagMarks) file(name string) string {
	if m != nil {
		m.files = append(m.files, name)
	}
	return m.optionalFlag(name)
}

// optionalFlag marks the flag name as one that a checkpoint leaves out when
// it is empty: the run goes without what it names.
func (m *flagMarks) optionalFlag(name string) string {
	if m != nil {
		m.optional = append(m.optional, name)
	}
	return name
}
