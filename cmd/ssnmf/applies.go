package main

import (
	"flag"
	"slices"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/internal/enum"
	"github.com/ssnmf/ssnmf/methods"
	"github.com/ssnmf/ssnmf/solver"
)

// A flag given explicitly must apply to the run: -gamma to the Gaussian
// kernel, -neighbors to the kNN graph, -moves to rowcd. A flag that does
// not is an error naming it and what it needs, never silently ignored:
//
//	-gamma applies to -affinity gaussian (the affinity is knn); add -affinity gaussian
//
// The table of what each flag needs is made where the flags are defined:
// a definition passes its name through flagMarks.needs with one of the
// needs below, as it marks a flag that may change on resume:
//
//	fs.Var(&kc.gamma, marks.needs("gamma", needGaussian), ...)
//
// A flag defined without a need applies to every run of its command.

// scope is what decides which flags apply to a run.
type scope struct {
	affinity string          // affinityGaussian, affinityKNN, kindTiles, kindEdges, or kindFile if unread
	input    bool            // an INPUT is given
	knn      graph.KNNMethod // -knn
	method   string          // -method; "" for the commands without one
	init     string          // the start, resolved: kmeans, random or corners
	engine   string          // -engine
}

// The kinds of an -affinity file.
const (
	kindTiles = affinity.TileFile
	kindEdges = affinity.EdgeList
	kindFile  = "a file" // not read yet: the run's open says what is wrong with it
)

// affinityKind returns the kind of -affinity: knn, gaussian, a tile file
// (an Arrow file without a src column) or an edge list.
func (kc *kernelConfig) affinityKind() string {
	switch {
	case kc.gaussian():
		return affinityGaussian
	case !kc.fromFile():
		return affinityKNN
	}
	if _, kind, err := affinity.FileKind(kc.affinity); err == nil {
		return kind
	}
	return kindFile
}

// features reports whether the run has feature rows: an INPUT, the
// built-in data set, or both, unless P is read from a file without INPUT.
func (s scope) features() bool { return s.input || !s.fromFile() }

func (s scope) fromFile() bool {
	return s.affinity == kindTiles || s.affinity == kindEdges || s.affinity == kindFile
}

// need is what a flag needs to apply to a run.
type need struct {
	want  string               // what it needs, in the user's words: "-affinity gaussian"
	holds func(s scope) bool   // whether the run has it
	have  func(s scope) string // what the run has instead
	fix   string               // what to do; "" for "add " + want
	fixes func(s scope) string // what to do, when it depends on the run; overrides fix
}

func theAffinity(s scope) string { return "the affinity is " + s.affinity }

// The needs of the flags.
var (
	needGaussian = need{want: "-affinity gaussian", holds: func(s scope) bool { return s.affinity == affinityGaussian }, have: theAffinity}
	needKNN      = need{want: "-affinity knn", holds: func(s scope) bool { return s.affinity == affinityKNN }, have: theAffinity}
	needApprox   = need{want: "-affinity knn with -knn approx or auto",
		holds: func(s scope) bool { return s.affinity == affinityKNN && s.knn != graph.Exact },
		have: func(s scope) string {
			if s.affinity != affinityKNN {
				return theAffinity(s)
			}
			return "the search is -knn exact"
		}, fix: "drop it, or use -knn approx"}
	needSparse = need{want: "a sparse P (-affinity knn or an edge list)",
		holds: func(s scope) bool {
			return s.affinity == affinityKNN || s.affinity == kindEdges || s.affinity == kindFile
		},
		have: theAffinity, fix: "drop it, or use -affinity knn"}
	needFeatures = need{want: "feature rows (an INPUT)", holds: scope.features,
		have: func(scope) string { return "P is read from -affinity and no INPUT is given" },
		fix:  "give the INPUT the affinity was made from, or drop it"}
	needInput = need{want: "an INPUT file", holds: func(s scope) bool { return s.input },
		have: func(scope) string { return "no INPUT is given" }, fix: "give INPUT, or drop it"}
	needEdgesAlone = need{want: "an edge list without INPUT (-affinity EDGES)",
		holds: func(s scope) bool { return (s.affinity == kindEdges || s.affinity == kindFile) && !s.input },
		have: func(s scope) string {
			if s.input {
				return "INPUT gives the rows"
			}
			return theAffinity(s)
		}, fix: "drop it"}
	// needModel is what a saved model needs (solver.ModelNeeds): the
	// features to measure a new row against, and a W on the simplex.
	needModel = need{want: "-affinity knn or gaussian and " + feasibleMethods(),
		holds: func(s scope) bool { return solver.ModelNeeds(s.method, s.fromFile()) == nil },
		have: func(s scope) string {
			if s.fromFile() {
				return "P is read from the file of -affinity, so a new row's affinity cannot be computed"
			}
			return "the W of -method " + s.method + " may leave the simplex, with negative entries, which predict refuses"
		},
		fixes: func(s scope) string {
			if s.fromFile() {
				return "drop it, or use -affinity knn or gaussian"
			}
			return "drop it, or use another -method"
		}}
	needRowCD = needMethod("rowcd")
	// needDenseRowCD is rowcd on a P read in tiles, whose sweeps read
	// strips of P; the sweep of a sparse P has no strips.
	needDenseRowCD = need{want: "-method rowcd on a dense P (-affinity gaussian or a tile file)",
		holds: func(s scope) bool {
			return s.method == "rowcd" && (s.affinity == affinityGaussian || s.affinity == kindTiles || s.affinity == kindFile)
		},
		have: func(s scope) string {
			if s.method != "rowcd" {
				return "the method is " + s.method
			}
			return theAffinity(s) + ", whose sweep reads no strips"
		}, fix: "drop it"}
	// needApproxRowCD is rowcd on the rows of the approximate search.
	needApproxRowCD = need{want: "-method rowcd with -knn approx or auto",
		holds: func(s scope) bool { return needApprox.holds(s) && s.method == "rowcd" },
		have: func(s scope) string {
			if !needApprox.holds(s) {
				return needApprox.have(s)
			}
			return "the method is " + s.method
		}, fix: "drop it"}
	needFW      = needMethod("fw")
	needRefresh = needMethod("fw", "rowcd")
	needKMStart = need{want: "-init kmeans", holds: func(s scope) bool { return s.init == solver.InitKMeans && !ownStart(s.method) },
		have: func(s scope) string {
			if ownStart(s.method) {
				return "-method " + s.method + " makes its own start"
			}
			return "the start is " + s.init
		}}
	needStart = need{want: "a method that starts from a W (any -method but kmeans and spectral)", holds: func(s scope) bool { return !ownStart(s.method) },
		have: func(s scope) string { return "-method " + s.method + " makes its own start" }, fix: "drop it"}
	needSlurm = need{want: "-engine slurm", holds: func(s scope) bool { return s.engine == engineSlurm },
		have: func(s scope) string { return "the engine is " + s.engine }}
)

// feasibleMethods names the methods whose W may leave the simplex, as
// "any -method but penalty".
func feasibleMethods() string {
	return "any -method but " + enum.Join(methods.With(func(m methods.Method) bool { return m.Infeasible }), "or")
}

// ownStart reports whether the method named name makes its own W from a
// clustering (methods.Method.OwnStart).
func ownStart(name string) bool {
	m, err := methods.Lookup(name)
	return err == nil && m.OwnStart
}

// needMethod is the need of a flag of the methods given.
func needMethod(names ...string) need {
	dashed := make([]string, len(names))
	for i, m := range names {
		dashed[i] = "-method " + m
	}
	return need{want: enum.Join(dashed, "or"), holds: func(s scope) bool { return slices.Contains(names, s.method) },
		have: func(s scope) string { return "the method is " + s.method }}
}

// needs marks the flag name as one that applies only to runs with nd.
func (m *flagMarks) needs(name string, nd need) string {
	if m != nil {
		if m.applies == nil {
			m.applies = map[string]need{}
		}
		m.applies[name] = nd
	}
	return name
}

// checkApplies refuses a flag in given (the flags given on the command
// line) that does not apply to a run of scope s.
func (m *flagMarks) checkApplies(given []string, s scope) error {
	for _, name := range given {
		nd, ok := m.applies[name]
		if !ok || nd.holds(s) {
			continue
		}
		fix := nd.fix
		if nd.fixes != nil {
			fix = nd.fixes(s)
		}
		if fix == "" {
			fix = "add " + nd.want
		}
		return usagef("-%s applies to %s (%s); %s", name, nd.want, nd.have(s), fix)
	}
	return nil
}

// givenFlags returns the names of the flags set on fs's command line, in
// lexical order.
func givenFlags(fs *flag.FlagSet) []string {
	var names []string
	fs.Visit(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// scope returns the scope of a solve run of c.
func (c *config) scope() scope {
	s := scope{affinity: c.affinityKind(), input: c.input != "", knn: c.knn.KNNMethod, method: c.run.Method, init: c.run.Init, engine: c.engine}
	if s.init == solver.InitAuto {
		s.init = c.start.String()
		if s.features() {
			s.init = solver.InitKMeans
		}
	}
	return s
}
