// Package solver is a whole ssnmf run as a Go call: from a table of rows
// to the memberships W of simplicial symmetric NMF,
//
//	minimize 1/4 ||P - W Wᵀ||_F^2 over W >= 0 (n×k), every row summing to 1,
//
// with P built from the rows (package affinity: their kNN graph by
// default, or their Gaussian kernel), scaled, and solved from several
// seeded starts (package methods, fw), the least objective kept.
//
// Its one idea: there is one run, and the command "ssnmf solve" and a Go
// program both make it. Run is that run once P is set up: the scale
// rules, the starts and their initial points (k-means, spectral or
// random), the method with its stop rules, the best W kept, the
// checkpoints and the resume from one, each reported to an Observer.
// Solve takes an Input (a [][]float64, an Arrow record, a file or a CSV
// stream, or none for P read from a file alone) and Options whose zero
// value is the command's defaults, builds P and runs Run, and so gives the
// command's bits on the same input; its Result
// holds W in the input's order of the rows, the record of every start and
// the trace. The command adds to Run its flags, its progress lines, the
// summary and the files. The pieces the run is made of live here too: the
// Workspace of n×k matrices (in anonymous memory, or in memory-mapped
// files), the Meter of passes over P, the rules for the number of starts
// (StartsFor) and for the k-means start (KMeansStart), k from the labels
// (Options.Clusters), P's spec of the settings (Options.Spec) and its
// set-up from a table with the caller's hooks (Options.Problem, Setup), or
// from the Input, read into the work directory (Options.Open),
// the making and the lock of a work directory (MakeWorkdir, LockWorkdir),
// the checkpoint's settings (Saved), the summary record (Summary, its
// JSON, NewIOReport, PeakRSS), the parsers of -scale and -mem (ParseScale,
// ParseBytes), and the defaults of the stop rules.
//
// Solve shares memory as the command does (Budget: Options.Memory, or the
// memory cgroup's limit): the kNN search's scratch, then W, P·W and the
// method's scratch, are in anonymous memory when the budget's scratch
// share holds them, else in memory-mapped files of a work directory
// (Options.Workdir, or a temporary one it removes), so its memory grows
// like n·(k+p), not n². In its Workdir it saves checkpoints
// (Options.CheckpointEvery) and resumes from one of its own
// (Options.Resume, which compares the Options the checkpoint keeps) as the
// command does; the Slurm engine, the summary file and the progress lines
// are the command's.
package solver
