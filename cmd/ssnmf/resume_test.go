package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/solver"
	"github.com/ssnmf/ssnmf/store/checkpoint"
)

// TestMain lets a test run the command as a separate process: with
// SSNMF_TEST_MAIN=1 in its environment the test binary is ssnmf itself.
func TestMain(m *testing.M) {
	if os.Getenv("SSNMF_TEST_MAIN") == "1" {
		os.Args = append([]string{"ssnmf"}, os.Args[1:]...)
		main()
	}
	os.Exit(m.Run())
}

// command returns ssnmf with args as a child process.
func command(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SSNMF_TEST_MAIN=1")
	return cmd
}

// resumeArgs is a run of the built-in yeast data with a checkpoint at
// every iteration and refreshes that fall between checkpoints.
func resumeArgs(work string) []string {
	return []string{"solve", "-affinity", "gaussian", "-frtol", "0", "-mtol", "0", "-k", "4", "-gamma", "1", "-standardize", "-max-iter", "70", "-refresh", "9",
		"-tile", "200", "-checkpoint-every", "1", "-workdir", work, "-q"}
}

// checkpointIter returns the iteration of the checkpoint in work, or -1.
func checkpointIter(t *testing.T, work string) int {
	ck, err := checkpoint.Load(filepath.Join(work, solver.CheckpointFile), func(n, k int) ([]float64, []float64, error) {
		return make([]float64, n*k), make([]float64, n*k), nil
	})
	if os.IsNotExist(err) {
		return -1
	}
	if err != nil {
		t.Fatalf("checkpoint damaged after a kill: %v", err)
	}
	return ck.State.Iter
}

// rowcdResumeArgs is a row-CD run of the built-in yeast data with a
// checkpoint at every sweep, refreshes that fall between checkpoints and
// strips of 200 rows (8 blocks, so that pending changes are saved).
func rowcdResumeArgs(work string) []string {
	return []string{"solve", "-affinity", "gaussian", "-frtol", "0", "-mtol", "0", "-method", "rowcd", "-k", "4", "-gamma", "1", "-standardize", "-max-iter", "25", "-refresh", "7",
		"-tile", "200", "-moves", "2", "-checkpoint-every", "1", "-workers", "2", "-workdir", work, "-q"}
}

// A run killed with SIGKILL at random moments, several times, and resumed
// each time ends with the same bits as a run never interrupted.
func TestKillAndResume(t *testing.T) {
	killAndResume(t, resumeArgs, nil)
}

// A row-CD run killed with SIGKILL at random moments and resumed each time,
// with -workers 1, 2 or 3, ends with the same bits as a run never
// interrupted.
func TestKillAndResumeRowCD(t *testing.T) {
	killAndResume(t, rowcdResumeArgs, func(kill int) []string { return []string{"-workers", strconv.Itoa(1 + kill%3)} })
}

// killAndResume runs args to the end, then kills the same run with SIGKILL
// five times at random moments, resuming it each time (with the flags
// resumeFlags gives, if not nil), and compares the memberships and the
// trace.
func killAndResume(t *testing.T, runArgs func(work string) []string, resumeFlags func(kill int) []string) {
	if testing.Short() {
		t.Skip("runs ssnmf as child processes")
	}
	dir := t.TempDir()
	refOut, refTrace := filepath.Join(dir, "ref.csv"), filepath.Join(dir, "ref-trace.csv")
	if code, _, stderr := ssnmf(t, append(runArgs(filepath.Join(dir, "ref")), "-out", refOut, "-trace", refTrace)...); code != exitOK {
		t.Fatalf("uninterrupted run: exit %d: %s", code, stderr)
	}

	work := filepath.Join(dir, "work")
	out, trace := filepath.Join(dir, "out.csv"), filepath.Join(dir, "trace.csv")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var killedAt []int
	for kill := 0; ; kill++ {
		args := append(runArgs(work), "-out", out, "-trace", trace)
		if checkpointIter(t, work) >= 0 {
			args = []string{"solve", "-resume", work, "-q", "-out", out, "-trace", trace}
			if resumeFlags != nil {
				args = append(args, resumeFlags(kill)...)
			}
		}
		cmd := command(args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if kill < 5 {
			time.Sleep(time.Duration(50+rng.IntN(250)) * time.Millisecond)
			cmd.Process.Signal(syscall.SIGKILL)
		}
		err := cmd.Wait()
		if kill < 5 {
			if err == nil {
				t.Logf("kill %d came after the run ended", kill)
				break
			}
			killedAt = append(killedAt, checkpointIter(t, work))
			continue
		}
		if err != nil {
			t.Fatalf("final resumed run: %v: %s", err, stderr.String())
		}
		break
	}
	t.Logf("killed with the last checkpoint at iterations %v", killedAt)
	for _, f := range [][2]string{{refOut, out}} {
		want, _ := os.ReadFile(f[0])
		got, err := os.ReadFile(f[1])
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("memberships after %d kills differ from the uninterrupted run's (%v)", len(killedAt), err)
		}
	}
	// The trace is the same but for the seconds column.
	_, wantRows := readCSV(t, refTrace)
	_, gotRows := readCSV(t, trace)
	if len(gotRows) != len(wantRows) {
		t.Fatalf("trace has %d rows, uninterrupted %d", len(gotRows), len(wantRows))
	}
	for i := range wantRows {
		gotRows[i][1], wantRows[i][1] = "", ""
		if strings.Join(gotRows[i], ",") != strings.Join(wantRows[i], ",") {
			t.Fatalf("trace row %d: %v, uninterrupted %v", i, gotRows[i], wantRows[i])
		}
	}
}

// SIGINT stops a run at the end of a pass with a checkpoint; the resumed
// run ends as the uninterrupted one.
func TestInterruptAndResume(t *testing.T) {
	interruptAndResume(t, resumeArgs)
}

// SIGINT stops a row-CD run whose sweeps take two passes (-strip-memory
// below a strip of 32 rows) at the end of a pass with a checkpoint; the run
// resumed with another -workers ends as the uninterrupted one.
func TestInterruptAndResumeRowCD(t *testing.T) {
	interruptAndResume(t, func(work string) []string {
		return append(rowcdResumeArgs(work), "-strip-memory", "100000", "-max-iter", "15")
	}, "-workers", "1")
}

// interruptAndResume runs args to the end, then runs them again, stops the
// run by SIGINT, resumes it (with the extra flags resumeFlags) and compares
// the memberships.
func interruptAndResume(t *testing.T, runArgs func(work string) []string, resumeFlags ...string) {
	if testing.Short() {
		t.Skip("runs ssnmf as child processes")
	}
	dir := t.TempDir()
	refOut := filepath.Join(dir, "ref.csv")
	if code, _, stderr := ssnmf(t, append(runArgs(filepath.Join(dir, "ref")), "-out", refOut)...); code != exitOK {
		t.Fatalf("uninterrupted run: exit %d: %s", code, stderr)
	}
	work, out := filepath.Join(dir, "work"), filepath.Join(dir, "out.csv")
	// -checkpoint-every 0: only the signal makes a checkpoint. -mem 400kB
	// puts the workspace in files, whose PS.mat says it exists; the resumed
	// run holds it in memory.
	cmd := command(append(runArgs(work), "-checkpoint-every", "0", "-mem", "400kB", "-out", out)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(work, "PS.mat")); err == nil || time.Now().After(deadline) {
			break
		}
	}
	// The signal goes as soon as the workspace exists (the handler is in
	// place from the start of main): a run of a few hundred milliseconds
	// could otherwise end before a later signal is seen, and exit 0.
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitFailure {
		t.Fatalf("interrupted run: %v, want exit code %d: %s", err, exitFailure, stderr.String())
	}
	if !strings.Contains(stderr.String(), "continue with: ssnmf solve -resume "+work) {
		t.Fatalf("interrupted run does not say how to resume: %s", stderr.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("interrupted run wrote -out (%v)", err)
	}
	stopped := checkpointIter(t, work)
	if code, _, stderr := ssnmf(t, append([]string{"solve", "-resume", work, "-out", out, "-q"}, resumeFlags...)...); code != exitOK {
		t.Fatalf("resumed run: exit %d: %s", code, stderr)
	}
	want, _ := os.ReadFile(refOut)
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, want) {
		t.Fatalf("stopped at iteration %d and resumed: memberships differ from the uninterrupted run's", stopped)
	}
	t.Logf("stopped by SIGINT at iteration %d", stopped)
}

func TestResumeRefusesChanges(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	if code, _, stderr := ssnmf(t, append(resumeArgs(work), "-max-iter", "5")...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	other := filepath.Join(dir, "other.csv")
	if err := os.WriteFile(other, []byte("a,b\n1,2\n3,4\n5,6\n7,8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testUsage(t, []string{"solve", "-resume", work, "-q"}, []usageCase{
		{name: "k", args: []string{"-k", "5"}, want: "-k 5 differs from the checkpoint's -k 4"},
		{name: "gamma", args: []string{"-gamma", "2"}, want: "-gamma 2 differs from the checkpoint's -gamma 1"},
		{name: "seed", args: []string{"-seed", "3"}, want: "-seed 3 differs"},
		{name: "workdir", args: []string{"-workdir", dir}, want: "-workdir cannot be given"},
		{name: "input", args: []string{other}, want: "differs from the checkpoint's"},
		{name: "no checkpoint", args: []string{"-resume", dir}, want: "holds no checkpoint (checkpoint.ssnmf)"},
	})
	// Mutable settings may change: a higher -max-iter goes on.
	code, stdout, stderr := ssnmf(t, "solve", "-resume", work, "-max-iter", "8", "-workers", "1", "-q")
	if code != exitOK || !strings.Contains(stdout, "max-iter after 8 iterations") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
}

// A row-CD run's -moves, -strip-memory and -tile shape its sweeps and may
// not change on resume; -workers and -max-iter may.
func TestResumeRefusesChangesRowCD(t *testing.T) {
	work := filepath.Join(t.TempDir(), "work")
	if code, _, stderr := ssnmf(t, append(rowcdResumeArgs(work), "-max-iter", "3")...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args: []string{"-moves", "3"}, want: "-moves 3 differs from the checkpoint's -moves 2"},
		{args: []string{"-strip-memory", "100000"}, want: "-strip-memory 100000 differs from the checkpoint's -strip-memory 536870912"},
		{args: []string{"-tile", "100"}, want: "-tile 100 differs from the checkpoint's -tile 200"},
		{args: []string{"-method", "fw"}, want: "-method fw differs from the checkpoint's -method rowcd"},
	} {
		code, _, stderr := ssnmf(t, append([]string{"solve", "-resume", work, "-q"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
	code, stdout, stderr := ssnmf(t, "solve", "-resume", work, "-max-iter", "5", "-workers", "1", "-q")
	if code != exitOK || !strings.Contains(stdout, "max-iter after 5 iterations") || !strings.Contains(stdout, "method rowcd") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
}

// A run that reaches -max-time ends with its outputs and a checkpoint, and
// the run resumed from it without the limit ends as the uninterrupted run.
func TestMaxTimeAndResume(t *testing.T) {
	dir := t.TempDir()
	refOut := filepath.Join(dir, "ref.csv")
	if code, _, stderr := ssnmf(t, append(rowcdResumeArgs(filepath.Join(dir, "ref")), "-out", refOut)...); code != exitOK {
		t.Fatalf("uninterrupted run: exit %d: %s", code, stderr)
	}
	work, out, sum := filepath.Join(dir, "work"), filepath.Join(dir, "out.csv"), filepath.Join(dir, "s.json")
	code, _, stderr := ssnmf(t, append(rowcdResumeArgs(work), "-checkpoint-every", "0", "-max-time", "1ns", "-out", out, "-summary", sum)...)
	if code != exitOK || !strings.Contains(stderr, "continue with: ssnmf solve -resume "+work) {
		t.Fatalf("run with -max-time: exit %d: %s", code, stderr)
	}
	var s solver.Summary
	if b, err := os.ReadFile(sum); err != nil || json.Unmarshal(b, &s) != nil || s.StopReason != "max-time" {
		t.Fatalf("summary %+v (%v), want stop_reason max-time", s, err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("-out after -max-time: %v", err)
	}
	if code, _, stderr := ssnmf(t, "solve", "-resume", work, "-max-time", "0", "-out", out, "-q"); code != exitOK {
		t.Fatalf("resumed run: exit %d: %s", code, stderr)
	}
	want, _ := os.ReadFile(refOut)
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, want) {
		t.Fatal("stopped by -max-time and resumed: memberships differ from the uninterrupted run's")
	}
}

// A resumed run writes one consistent set of outputs: given -out alone, it
// writes -out and leaves the earlier run's summary and trace alone (the
// issue's a.w.csv, a.json, a.trace.csv after -max-time, then -resume
// -out b.w.csv); given no output flag, it rewrites every output of the
// checkpoint, all from its final state. The two resumes are of the same
// stopped run, the second from a copy of its work directory: a run that
// has finished is not resumed again (TestResumeFinished).
func TestResumeWritesOneSet(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	work := at("work")
	code, _, stderr := ssnmf(t, append(rowcdResumeArgs(work), "-checkpoint-every", "0", "-max-time", "1ns",
		"-out", at("a.w.csv"), "-summary", at("a.json"), "-trace", at("a.trace.csv"))...)
	if code != exitOK || !strings.Contains(stderr, "-resume "+work) {
		t.Fatalf("run with -max-time: exit %d: %s", code, stderr)
	}
	read := func(names ...string) map[string][]byte {
		m := map[string][]byte{}
		for _, name := range names {
			b, err := os.ReadFile(at(name))
			if err != nil {
				t.Fatal(err)
			}
			m[name] = b
		}
		return m
	}
	partial := read("a.w.csv", "a.json", "a.trace.csv")
	copyWork := at("work-copy")
	if err := os.Mkdir(copyWork, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(work)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		copyFile(t, filepath.Join(work, e.Name()), filepath.Join(copyWork, e.Name()))
	}
	if code, _, stderr := ssnmf(t, "solve", "-resume", work, "-max-time", "0", "-out", at("b.w.csv"), "-q"); code != exitOK {
		t.Fatalf("resume -out b.w.csv: exit %d: %s", code, stderr)
	}
	for name, b := range read("a.w.csv", "a.json", "a.trace.csv") {
		if !bytes.Equal(b, partial[name]) {
			t.Errorf("resume -out b.w.csv rewrote %s", name)
		}
	}
	if s := readSummary(t, at("a.json")); s.StopReason != "max-time" {
		t.Errorf("a.json: stop_reason %q, want the first run's max-time", s.StopReason)
	}
	// No output flag: the checkpoint's outputs, all of them, from the end.
	if code, _, stderr := ssnmf(t, "solve", "-resume", copyWork, "-max-time", "0", "-q"); code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	final := read("a.w.csv", "a.json", "a.trace.csv", "b.w.csv")
	if !bytes.Equal(final["a.w.csv"], final["b.w.csv"]) {
		t.Error("resume without outputs: a.w.csv is not the final W of b.w.csv")
	}
	s := readSummary(t, at("a.json"))
	if s.StopReason == "max-time" || bytes.Equal(final["a.trace.csv"], partial["a.trace.csv"]) {
		t.Errorf("resume without outputs: a.json (stop_reason %q) or a.trace.csv left from the stopped run", s.StopReason)
	}
	if _, rows := readCSV(t, at("a.trace.csv")); startRows(rows, s.BestStart) != s.Iterations+1 {
		t.Errorf("a.trace.csv has %d rows of start %d, a.json %d iterations", startRows(rows, s.BestStart), s.BestStart, s.Iterations)
	}
}

// genCSV writes ssnmf gen's data of n rows (3 features, 3 classes) to
// name in dir and returns its path.
func genCSV(t *testing.T, dir, name string, n int) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if code, _, stderr := ssnmf(t, "gen", "-q", "-n", strconv.Itoa(n), "-p", "3", "-k", "3", "-seed", "1", "-o", path); code != exitOK {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	return path
}

// readFiles returns the contents of the files at paths.
func readFiles(t *testing.T, paths ...string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m[p] = b
	}
	return m
}

// A -resume of a run that has finished says so, exits 0 and rewrites
// nothing (issue 34, item 5: the third step rewrote the converged outputs
// with the W of iteration 0, -max-time 1ns being the checkpoint's); an
// output it did not write is refused.
func TestResumeFinished(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	x, work := genCSV(t, dir, "x.csv", 300), at("D")
	code, _, stderr := ssnmf(t, "solve", "-q", "-workdir", work, "-max-time", "1ns", "-model", at("m"), "-out", at("o.csv"), "-summary", at("s.json"), x)
	if code != exitOK {
		t.Fatalf("run with -max-time 1ns: exit %d: %s", code, stderr)
	}
	if code, _, stderr := ssnmf(t, "solve", "-q", "-resume", work, "-max-time", "0"); code != exitOK {
		t.Fatalf("resume to the end: exit %d: %s", code, stderr)
	}
	outs := []string{at("o.csv"), at("s.json"), filepath.Join(at("m"), "model.ssnmf")}
	final := readFiles(t, outs...)
	if s := readSummary(t, at("s.json")); s.StopReason == "max-time" {
		t.Fatalf("the resume to the end stopped on %s", s.StopReason)
	}
	code, stdout, stderr := ssnmf(t, "solve", "-q", "-resume", work)
	if code != exitOK || stdout != "" || !strings.Contains(stderr, "-resume "+work+": the run has finished") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("resume of the finished run: exit %d, stdout %q, stderr %q; want exit 0 and one line saying it has finished", code, stdout, stderr)
	}
	for p, b := range readFiles(t, outs...) {
		if !bytes.Equal(b, final[p]) {
			t.Errorf("the resume of the finished run rewrote %s", p)
		}
	}
	testUsage(t, []string{"solve", "-q", "-resume", work}, []usageCase{
		{name: "another -out", args: []string{"-out", at("other.csv")}, want: "-out " + at("other.csv") + " is not one of the outputs it wrote"},
	})
	if _, err := os.Stat(at("other.csv")); !os.IsNotExist(err) {
		t.Errorf("other.csv: %v, want none", err)
	}
	// Its own outputs given again are not a clash.
	if code, _, stderr := ssnmf(t, "solve", "-q", "-resume", work, "-out", at("o.csv")); code != exitOK {
		t.Errorf("resume -out of its own output: exit %d: %s", code, stderr)
	}
}

// A run that ended on -max-iter is finished too, but goes on when the
// resume raises -max-iter (docs/guide/long-jobs.md's example).
func TestResumeFinishedMaxIter(t *testing.T) {
	work := filepath.Join(t.TempDir(), "work")
	if code, _, stderr := ssnmf(t, append(rowcdResumeArgs(work), "-max-iter", "3")...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, stderr := ssnmf(t, "solve", "-resume", work, "-q")
	if code != exitOK || stdout != "" || !strings.Contains(stderr, "the run has finished (it stopped on max-iter after 3 iterations)") || !strings.Contains(stderr, "a -max-iter above 3 goes on") {
		t.Fatalf("resume: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = ssnmf(t, "solve", "-resume", work, "-max-iter", "5", "-q")
	if code != exitOK || !strings.Contains(stdout, "max-iter after 5 iterations") {
		t.Fatalf("resume -max-iter 5: exit %d: %s%s", code, stdout, stderr)
	}
}

// A new run in a work directory that holds an earlier run's checkpoint
// removes it and the best W it names, so that a later -resume never finds
// the earlier run (issue 34, item 9: it failed on best-0.mat, which the
// new run had removed).
func TestFreshRunClearsCheckpoint(t *testing.T) {
	dir := t.TempDir()
	x, work := genCSV(t, dir, "x.csv", 300), filepath.Join(dir, "D")
	if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "3", "-starts", "2", "-workdir", work, "-checkpoint-every", "1", x); code != exitOK {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	if !fileExists(filepath.Join(work, "best-0.mat")) || !fileExists(filepath.Join(work, solver.CheckpointFile)) {
		t.Fatal("the first run left no checkpoint naming best-0.mat")
	}
	code, _, stderr := ssnmf(t, "solve", "-k", "3", "-starts", "2", "-workdir", work, x)
	if code != exitOK || !strings.Contains(stderr, "removed the checkpoint of an earlier run") {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	for _, name := range []string{solver.CheckpointFile, "best-0.mat", "best-1.mat"} {
		if fileExists(filepath.Join(work, name)) {
			t.Errorf("the new run left the earlier run's %s", name)
		}
	}
	testUsage(t, []string{"solve", "-q", "-resume", work}, []usageCase{{name: "resume", want: "holds no checkpoint"}})
}

// An input edited before -resume is named as such, before P is built
// (issue 34, item 16a: the Gaussian kernel's bandwidth from the edited
// features was reported instead).
func TestResumeInputChanged(t *testing.T) {
	dir := t.TempDir()
	x, work := genCSV(t, dir, "x.csv", 300), filepath.Join(dir, "D")
	if code, _, stderr := ssnmf(t, "solve", "-q", "-affinity", "gaussian", "-k", "3", "-workdir", work, "-max-time", "1ns", x); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(x)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	edit := func(t *testing.T, lines []string) {
		if err := os.WriteFile(x, []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("one value", func(t *testing.T) {
		edited := slices.Clone(lines)
		edited[1] = "7" + edited[1][strings.Index(edited[1], ","):] // the first feature of row 1
		edit(t, edited)
		testUsage(t, []string{"solve", "-q", "-resume", work}, []usageCase{{name: "resume", want: "-resume: the input changed since the checkpoint (checksum of the features as read"}})
	})
	t.Run("rows", func(t *testing.T) {
		edit(t, lines[:len(lines)-2])
		testUsage(t, []string{"solve", "-q", "-resume", work}, []usageCase{{name: "resume", want: "-resume: the input changed since the checkpoint (it has 299 rows, the checkpoint 300)"}})
	})
	edit(t, lines)
	if code, _, stderr := ssnmf(t, "solve", "-q", "-resume", work, "-max-time", "0"); code != exitOK {
		t.Fatalf("resume with the input restored: exit %d: %s", code, stderr)
	}
}

// A relative -model is kept absolute in the checkpoint, as the other
// outputs are, so that a resume from another directory saves the model
// where the run was asked to (issue 34, item 8: it went to the resuming
// directory).
func TestResumeModelPath(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	mkdir(t, a)
	mkdir(t, b)
	genCSV(t, a, "x.csv", 300)
	t.Chdir(a)
	if code, _, stderr := ssnmf(t, "solve", "-q", "-workdir", "W", "-max-time", "1ns", "-model", "m", "-out", "o.csv", "x.csv"); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	raw, err := checkpoint.ReadSettings(filepath.Join(a, "W", solver.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	var s solver.Saved
	if err := json.Unmarshal(raw, &s); err != nil || !slices.Contains(s.Args, "-model="+filepath.Join(a, "m")) {
		t.Fatalf("the checkpoint's command line %q (%v) lacks -model=%s", s.Args, err, filepath.Join(a, "m"))
	}
	t.Chdir(b)
	if code, _, stderr := ssnmf(t, "solve", "-q", "-resume", filepath.Join(a, "W"), "-max-time", "0"); code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if fileExists(filepath.Join(b, "m")) || !fileExists(filepath.Join(a, "m", "model.ssnmf")) {
		t.Errorf("the resumed run from %s saved its model in its own directory, not in %s", b, filepath.Join(a, "m"))
	}
}
