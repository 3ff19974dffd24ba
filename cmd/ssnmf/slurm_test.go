package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/solver"
)

// slurmOrSkip skips the test when no Slurm cluster answers (start one with
// scripts/slurm/local-cluster.sh start), unless SSNMF_REQUIRE_SLURM is set,
// as .ci/run sets it: then a missing cluster fails the test.
func slurmOrSkip(t *testing.T) {
	t.Helper()
	why := ""
	if _, err := exec.LookPath("salloc"); err != nil {
		why = "salloc is not installed"
	} else if out, err := exec.Command("sinfo", "-h", "-o", "%t").CombinedOutput(); err != nil {
		why = "sinfo: " + strings.TrimSpace(string(out))
	} else if !strings.Contains(string(out), "idle") && !strings.Contains(string(out), "mix") {
		why = "no node takes jobs: " + strings.TrimSpace(string(out))
	}
	if why == "" {
		return
	}
	if os.Getenv("SSNMF_REQUIRE_SLURM") != "" {
		t.Fatalf("SSNMF_REQUIRE_SLURM is set, but no Slurm cluster answers: %s", why)
	}
	t.Skipf("no Slurm cluster (%s); start one with scripts/slurm/local-cluster.sh start", why)
}

// slurmInput is a shared data set if ../shared is beside the repository,
// else the repository's copy of yeast (the built-in data set).
func slurmInput(name string) string {
	if p := filepath.Join("..", "..", "..", "shared", "data", name); fileExists(p) {
		return p
	}
	return filepath.Join("data", "yeast.csv")
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// selfBinary returns the path of the test binary, which runs as ssnmf
// with SSNMF_TEST_MAIN=1 in its environment (TestMain): the coordinator
// that runBin starts passes it to srun for the tasks, and srun passes the
// environment on.
func selfBinary(t *testing.T) string {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// runBin runs the binary as ssnmf with args in dir, inside salloc with
// tasks tasks if tasks > 0, and returns its stderr.
func runBin(t *testing.T, ctx context.Context, dir, bin string, tasks int, args ...string) string {
	t.Helper()
	cmd := slurmCommand(ctx, dir, bin, tasks, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	return stderr.String()
}

// slurmCommand returns the command of runBin.
func slurmCommand(ctx context.Context, dir, bin string, tasks int, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	if tasks > 0 {
		cmd = exec.CommandContext(ctx, "salloc", append([]string{"--ntasks", strconv.Itoa(tasks), "--overcommit", "--quiet", bin}, args...)...)
	}
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SSNMF_TEST_MAIN=1")
	return cmd
}

func sameFile(t *testing.T, what, got, want string) {
	t.Helper()
	a, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("%s: %s differs from %s", what, got, want)
	}
}

func readSummary(t *testing.T, path string) solver.Summary {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s solver.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSlurmSameBits solves a shared data set with -engine slurm on 2 and 4
// tasks, the dense kernel's passes and the kNN search as job steps of a
// real Slurm cluster, builds its kNN graph the same way, and checks that
// every output has the bits of -engine local.
func TestSlurmSameBits(t *testing.T) {
	slurmOrSkip(t)
	bin, dir := selfBinary(t), t.TempDir()
	ctx := context.Background()
	in, _ := filepath.Abs(slurmInput("yeast.csv"))
	dense := []string{"solve", "-affinity", "gaussian", "-method", "fw", "-max-iter", "15", "-q"}
	knn := []string{"solve", "-q"}
	graph := []string{"graph", "-q"}
	runBin(t, ctx, dir, bin, 0, append(dense, "-out", "dense-local.csv", in)...)
	runBin(t, ctx, dir, bin, 0, append(knn, "-out", "knn-local.csv", in)...)
	runBin(t, ctx, dir, bin, 0, append(graph, "-o", "graph-local.csv", in)...)
	for _, tasks := range []int{2, 4} {
		name := func(s string) string { return s + "-slurm" + strconv.Itoa(tasks) + ".csv" }
		runBin(t, ctx, dir, bin, tasks, append(dense, "-engine", "slurm", "-out", name("dense"), "-summary", name("dense")+".json", in)...)
		runBin(t, ctx, dir, bin, tasks, append(knn, "-engine", "slurm", "-out", name("knn"), in)...)
		runBin(t, ctx, dir, bin, tasks, append(graph, "-engine", "slurm", "-o", name("graph"), in)...)
		sameFile(t, "dense W", filepath.Join(dir, name("dense")), filepath.Join(dir, "dense-local.csv"))
		sameFile(t, "kNN W", filepath.Join(dir, name("knn")), filepath.Join(dir, "knn-local.csv"))
		sameFile(t, "kNN graph", filepath.Join(dir, name("graph")), filepath.Join(dir, "graph-local.csv"))
		s := readSummary(t, filepath.Join(dir, name("dense")+".json"))
		if s.Engine != engineSlurm || s.Tasks != tasks || s.Steps != s.Passes {
			t.Fatalf("%d tasks: summary says engine %q, %d tasks, %d steps for %d passes", tasks, s.Engine, s.Tasks, s.Steps, s.Passes)
		}
		t.Logf("-engine slurm, %d tasks: dense fw (%d steps, objective %.10g), kNN solve and kNN graph: same bits as -engine local", tasks, s.Steps, s.Objective)
	}
}

// TestSlurmApproxSameBits builds the approximate kNN graph of a shared data
// set (pendigits, 22 leaves, several rounds at -knn-probes 2) with
// -engine slurm on 2 and 3 tasks, its rounds of leaf pairs as job steps of
// a real Slurm cluster, alone and with rounds of neighbour descent (run on
// the coordinator) between them, and solves on it, and checks that every
// output has the bits of -engine local and that the steps were the rounds
// of leaf pairs.
func TestSlurmApproxSameBits(t *testing.T) {
	slurmOrSkip(t)
	bin, dir := selfBinary(t), t.TempDir()
	ctx := context.Background()
	in, _ := filepath.Abs(slurmInput("pendigits.csv"))
	approx := []string{"-q", "-knn", "approx", "-knn-probes", "2", "-knn-recall", "0.999"}
	runs := []struct {
		name string
		args []string
	}{
		{"solve", slices.Concat([]string{"solve"}, approx, []string{"-max-iter", "20"})},
		{"graph", slices.Concat([]string{"graph"}, approx)},
		{"graph-descent", slices.Concat([]string{"graph"}, approx, []string{"-knn-descent", "1"})},
	}
	out := func(name string, tasks int) (string, []string) {
		f := fmt.Sprintf("%s-%d.csv", name, tasks)
		if name == "solve" {
			return f, []string{"-out", f, "-summary", f + ".json"}
		}
		return f, []string{"-o", f}
	}
	for _, r := range runs {
		f, o := out(r.name, 0)
		runBin(t, ctx, dir, bin, 0, slices.Concat(r.args, o, []string{in})...)
		local := readSummaryIf(t, filepath.Join(dir, f+".json"))
		for _, tasks := range []int{2, 3} {
			g, o := out(r.name, tasks)
			runBin(t, ctx, dir, bin, tasks, slices.Concat(r.args, []string{"-engine", "slurm"}, o, []string{in})...)
			sameFile(t, r.name, filepath.Join(dir, g), filepath.Join(dir, f))
			if local == nil {
				continue
			}
			s := readSummary(t, filepath.Join(dir, g+".json"))
			if s.Engine != engineSlurm || s.KNN != "approx" || s.KNNRounds != local.KNNRounds || s.Steps-s.StepRetries != s.KNNRounds {
				t.Fatalf("%d tasks: summary says engine %q, search %q, %d rounds (%d here), %d steps (%d retried): want a step a round",
					tasks, s.Engine, s.KNN, s.KNNRounds, local.KNNRounds, s.Steps, s.StepRetries)
			}
			t.Logf("-engine slurm, %d tasks: %d rounds of leaf pairs as %d steps, sampled recall %.4f", tasks, s.KNNRounds, s.Steps, *s.KNNRecall)
		}
		t.Logf("%s: the bits of -engine local on 2 and 3 tasks", strings.Join(r.args, " "))
	}
}

// readSummaryIf reads the summary at path if there is one.
func readSummaryIf(t *testing.T, path string) *solver.Summary {
	if !fileExists(path) {
		return nil
	}
	s := readSummary(t, path)
	return &s
}

// killStep kills, with scancel --signal=KILL, the first step of pass
// minPass or later that it sees, once it has run a moment, and sends its
// id on the channel it returns (closed without one if none was seen
// before ctx ended).
func killStep(t *testing.T, ctx context.Context, minPass int) <-chan string {
	killed := make(chan string, 1)
	go func() {
		defer close(killed)
		for ctx.Err() == nil {
			out, _ := exec.Command("squeue", "-h", "-s", "-o", "%i %j").Output()
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				f := strings.Fields(line)
				if len(f) != 2 || !strings.HasPrefix(f[1], "ssnmf-pass-") {
					continue
				}
				if pass, err := strconv.Atoi(strings.TrimPrefix(f[1], "ssnmf-pass-")); err != nil || pass < minPass {
					continue
				}
				time.Sleep(100 * time.Millisecond)
				if msg, err := exec.Command("scancel", "--signal=KILL", f[0]).CombinedOutput(); err != nil {
					t.Logf("scancel %s: %v %s", f[0], err, msg)
					continue
				}
				killed <- f[0] + " (" + f[1] + ")"
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return killed
}

// killAttempts is how many runs TestSlurmKillRetry makes until its kill
// lands while a step's tasks still work.
const killAttempts = 3

// TestSlurmKillRetry kills the tasks of a step of a running solve with
// scancel --signal=KILL. With retries, the coordinator launches the step
// again and ends with the bits of -engine local. Without, the run stops
// with one line naming the task, keeping its last checkpoint, and the run
// resumed from it ends with the same bits.
func TestSlurmKillRetry(t *testing.T) {
	slurmOrSkip(t)
	bin, dir := selfBinary(t), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	in, _ := filepath.Abs(slurmInput("pendigits.csv"))
	args := []string{"solve", "-affinity", "gaussian", "-method", "fw", "-max-iter", "6", "-tile", "128", "-checkpoint-every", "2"}
	runBin(t, ctx, dir, bin, 0, append(args, "-q", "-out", "local.csv", in)...)

	// A kill can land after a step's tasks wrote their parts (on a loaded
	// machine squeue may list a step late), and the run then rightly needs
	// no retry: such an attempt must still give local's bits, and is made
	// again, up to killAttempts times.
	var s solver.Summary
	var step, retry string
	for attempt := 1; ; attempt++ {
		killed := killStep(t, ctx, 1)
		stderr := runBin(t, ctx, dir, bin, 2, append(args, "-engine", "slurm", "-out", "slurm.csv", "-summary", "slurm.json", in)...)
		var ok bool
		if step, ok = <-killed; !ok {
			t.Fatal("no step of the run was seen to kill")
		}
		s, retry = readSummary(t, filepath.Join(dir, "slurm.json")), ""
		for _, l := range strings.Split(stderr, "\n") {
			if strings.Contains(l, "launching the step again") {
				retry = l
			}
		}
		if s.StepRetries >= 1 && retry != "" {
			break
		}
		if attempt == killAttempts {
			t.Fatalf("killed a step in each of %d runs, the last %s, but no run reported a retry; the last one's stderr:\n%s", killAttempts, step, stderr)
		}
		sameFile(t, "W after a step killed once its parts were written", filepath.Join(dir, "slurm.csv"), filepath.Join(dir, "local.csv"))
		t.Logf("attempt %d: killed step %s once its parts were written: no retry was needed; again", attempt, step)
	}
	sameFile(t, "W after a killed step", filepath.Join(dir, "slurm.csv"), filepath.Join(dir, "local.csv"))
	t.Logf("killed step %s with scancel --signal=KILL; the run said %q; %d steps, %d retried; W has the bits of -engine local", step, strings.TrimSpace(retry), s.Steps, s.StepRetries)

	// No retries: the run stops at the killed step, after the checkpoint
	// of iteration 2 or 4, and is resumed.
	work := filepath.Join(dir, "work")
	var msg string
	for attempt := 1; ; attempt++ {
		killed := killStep(t, ctx, 5)
		cmd := slurmCommand(ctx, dir, bin, 2, append(args, "-q", "-engine", "slurm", "-retries", "0", "-workdir", work, "-out", "slurm2.csv", in)...)
		out, err := cmd.CombinedOutput()
		var ok bool
		if step, ok = <-killed; !ok {
			t.Fatal("no step of pass 5 or later was seen to kill")
		}
		msg = strings.TrimSpace(string(out))
		if err == nil && attempt < killAttempts {
			sameFile(t, "W after a step killed once its parts were written", filepath.Join(dir, "slurm2.csv"), filepath.Join(dir, "local.csv"))
			t.Logf("attempt %d without retries: killed step %s once its parts were written; again", attempt, step)
			for _, f := range []string{work, filepath.Join(dir, "slurm2.csv")} {
				if err := os.RemoveAll(f); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		if err == nil || strings.Count(msg, "\n") > 0 || !strings.Contains(msg, "has no part after 1 tries") || !strings.Contains(msg, "ssnmf solve -resume "+work) {
			t.Fatalf("killed step %s without retries: %v, output %q; want one line naming the task and how to resume", step, err, msg)
		}
		break
	}
	if fileExists(filepath.Join(dir, "slurm2.csv")) {
		t.Fatal("a failed run wrote -out")
	}
	t.Logf("killed step %s with -retries 0: %s", step, msg)
	// Resumed in an allocation of 4 tasks, it takes them.
	runBin(t, ctx, dir, bin, 4, "solve", "-q", "-resume", work, "-out", "slurm2.csv", "-summary", "slurm2.json")
	sameFile(t, "W resumed after a failed step", filepath.Join(dir, "slurm2.csv"), filepath.Join(dir, "local.csv"))
	if s := readSummary(t, filepath.Join(dir, "slurm2.json")); s.Tasks != 4 {
		t.Fatalf("resumed in an allocation of 4 tasks: ran %d", s.Tasks)
	}
	t.Logf("resumed with -resume %s in an allocation of 4 tasks: W has the bits of -engine local", work)
}

// TestEngineUsage checks the refusals of -engine and of ssnmf worker,
// which need no cluster.
func TestEngineUsage(t *testing.T) {
	t.Setenv("SLURM_JOB_ID", "")
	t.Setenv("SLURM_NTASKS", "")
	testUsage(t, []string{"solve"}, []usageCase{
		{name: "unknown engine", args: []string{"-engine", "mpi"}, want: `-engine "mpi": want local or slurm`},
		{name: "outside an allocation", args: []string{"-engine", "slurm"}, want: "SLURM_JOB_ID is not set"},
	})
	testUsage(t, []string{"graph", "-o", "x.csv"}, []usageCase{
		{name: "graph outside an allocation", args: []string{"-engine", "slurm"}, want: "SLURM_JOB_ID is not set"},
	})
	t.Setenv("SLURM_JOB_ID", "7")
	testUsage(t, []string{"solve", "-engine", "slurm"}, []usageCase{
		{name: "no tasks", args: nil, want: "-tasks is 0"},
		{name: "negative retries", args: []string{"-tasks", "2", "-retries", "-1"}, want: "-retries must be >= 0"},
		{name: "rowcd on the dense kernel", args: []string{"-tasks", "2", "-affinity", "gaussian", "-method", "rowcd"}, want: "-method rowcd needs row sweeps"},
	})
	testUsage(t, []string{"worker"}, []usageCase{
		{name: "no run", args: nil, want: "worker needs -run DIR and -pass N"},
		{name: "no task", args: []string{"-run", "x", "-pass", "1"}, want: "give -task and -tasks, or run it under srun"},
		{name: "task past the tasks", args: []string{"-run", "x", "-pass", "1", "-task", "2", "-tasks", "2"}, want: "task 2 of 2"},
	})
	// A run directory that is not there is an error naming it.
	code, _, stderr := ssnmf(t, "worker", "-run", filepath.Join(t.TempDir(), "none"), "-pass", "1", "-task", "0", "-tasks", "1")
	if code != exitFailure || !strings.Contains(stderr, "run.json") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("worker on no run directory: exit %d, %q", code, stderr)
	}
}
