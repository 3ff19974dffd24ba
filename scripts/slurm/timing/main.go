// Command timing measures the passes of -engine slurm against -engine
// local and prints a table: for a generated data set, the seconds of a
// pass of Frank-Wolfe on the dense Gaussian kernel (a step of -tasks
// tasks, from the input's write to the parts' read), and of the kNN
// search (one step), each against the local engine in the same run; and
// the overhead of a step, from a run so small that its tiles cost nothing;
// and, on a larger generated set, the approximate kNN search, whose rounds
// of leaf pairs are steps (its s/pass is the search's seconds).
//
//	go run ./scripts/slurm/timing -ssnmf BIN [-n 20000] [-p 16] [-tasks 1,2,4] [-approx-n 200000]
//
// It runs salloc itself, so it needs a Slurm cluster that takes jobs
// (scripts/slurm/local-cluster.sh start), and the binary on storage that
// every node sees.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
)

// result is what the table needs of a run's -summary.
type result struct {
	Passes      int     `json:"passes"`
	PassSeconds float64 `json:"pass_seconds"`
	Steps       int     `json:"steps"`
	StepSeconds float64 `json:"step_seconds"`
	Seconds     float64 `json:"seconds"`
	Objective   float64 `json:"objective"`
	Affinity    float64 `json:"affinity_seconds"`
	KNNRounds   int     `json:"knn_rounds"`
	KNNRecall   float64 `json:"knn_recall"`
}

func main() {
	bin := flag.String("ssnmf", "", "the ssnmf binary (required)")
	n := flag.Int("n", 20000, "rows of the generated data set")
	p := flag.Int("p", 16, "its features")
	iters := flag.Int("iters", 4, "Frank-Wolfe iterations of each dense run")
	tasksFlag := flag.String("tasks", "1,2,4", "the task counts to time")
	approxN := flag.Int("approx-n", 200000, "rows of the generated data set of the approximate kNN search; 0: not timed")
	flag.Parse()
	if *bin == "" {
		log.Fatal("timing: -ssnmf BIN is required")
	}
	var tasks []int
	for _, f := range strings.Split(*tasksFlag, ",") {
		t, err := strconv.Atoi(f)
		if err != nil || t < 1 {
			log.Fatalf("timing: -tasks %q: want positive integers", *tasksFlag)
		}
		tasks = append(tasks, t)
	}
	dir, err := os.MkdirTemp(".", "ssnmf-timing-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	data, tiny := filepath.Join(dir, "data.parquet"), filepath.Join(dir, "tiny.parquet")
	run(0, *bin, "gen", "-q", "-n", fmt.Sprint(*n), "-p", fmt.Sprint(*p), "-k", "10", "-seed", "1", "-o", data)
	run(0, *bin, "gen", "-q", "-n", "64", "-p", fmt.Sprint(*p), "-k", "10", "-seed", "1", "-o", tiny)
	dense := []string{"solve", "-q", "-k", "10", "-affinity", "gaussian", "-method", "fw", "-max-iter", fmt.Sprint(*iters)}
	knn := []string{"solve", "-q", "-k", "10", "-max-iter", "1"}

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "work\tengine\ttasks\tpasses\ts/pass\tvs local\tentries/s\t\n")
	entries := float64(*n) * float64(*n)
	line := func(work, engine string, t int, r result, local float64) {
		ts := "-"
		if t > 0 {
			ts = fmt.Sprint(t)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.3f\t%.2f×\t%.3g\t\n", work, engine, ts, r.Passes, r.PassSeconds, r.PassSeconds/local, entries/r.PassSeconds)
	}
	lo := summary(dir, "dense-local", 0, *bin, append(dense, data))
	line(fmt.Sprintf("fw pass, n=%d", *n), "local", 0, lo, lo.PassSeconds)
	var objective = lo.Objective
	for _, t := range tasks {
		r := summary(dir, fmt.Sprintf("dense-%d", t), t, *bin, append(dense, "-engine", "slurm", data))
		line(fmt.Sprintf("fw pass, n=%d", *n), "slurm", t, r, lo.PassSeconds)
		if r.Objective != objective {
			log.Fatalf("timing: %d tasks: objective %v, local %v", t, r.Objective, objective)
		}
	}
	// The kNN search is one step; its time is that of setting P up, the
	// input's load included, in both engines.
	kl := summary(dir, "knn-local", 0, *bin, append(knn, data))
	fmt.Fprintf(tw, "kNN search, n=%d\tlocal\t-\t-\t%.3f\t1.00×\t%.3g\t\n", *n, kl.Affinity, entries/kl.Affinity)
	for _, t := range tasks {
		r := summary(dir, fmt.Sprintf("knn-%d", t), t, *bin, append(knn, "-engine", "slurm", data))
		fmt.Fprintf(tw, "kNN search, n=%d\tslurm\t%d\t%d\t%.3f\t%.2f×\t%.3g\t\n", *n, t, r.Steps, r.Affinity, r.Affinity/kl.Affinity, entries/r.Affinity)
	}
	for _, t := range tasks {
		r := summary(dir, fmt.Sprintf("tiny-%d", t), t, *bin, append(dense, "-engine", "slurm", tiny))
		fmt.Fprintf(tw, "step overhead (n=64)\tslurm\t%d\t%d\t%.3f\t\t\t\n", t, r.Passes, r.PassSeconds)
	}
	if *approxN > 0 {
		approx(tw, dir, *bin, *approxN, *p, tasks)
	}
	tw.Flush()
}

// approx times the approximate kNN search of a generated set of n rows
// here and with its rounds of leaf pairs as steps: the seconds of setting
// P up (the input's load, the partition, every round and the assembly),
// the rounds (the steps of the slurm runs) and the sampled recall, which
// must be the same.
func approx(tw io.Writer, dir, bin string, n, p int, tasks []int) {
	data := filepath.Join(dir, "approx.parquet")
	run(0, bin, "gen", "-q", "-n", fmt.Sprint(n), "-p", fmt.Sprint(p), "-k", "10", "-seed", "1", "-o", data)
	knn := []string{"solve", "-q", "-k", "10", "-max-iter", "1", "-knn", "approx"}
	what := fmt.Sprintf("approx kNN, n=%d", n)
	lo := summary(dir, "approx-local", 0, bin, append(knn, data))
	fmt.Fprintf(tw, "%s\tlocal\t-\t%d\t%.3f\t1.00×\trecall %.4f\t\n", what, lo.KNNRounds, lo.Affinity, lo.KNNRecall)
	for _, t := range tasks {
		r := summary(dir, fmt.Sprintf("approx-%d", t), t, bin, append(knn, "-engine", "slurm", data))
		if r.KNNRecall != lo.KNNRecall || r.KNNRounds != lo.KNNRounds {
			log.Fatalf("timing: approx kNN, %d tasks: %d rounds to recall %v, local %d to %v", t, r.KNNRounds, r.KNNRecall, lo.KNNRounds, lo.KNNRecall)
		}
		fmt.Fprintf(tw, "%s\tslurm\t%d\t%d\t%.3f\t%.2f×\trecall %.4f\t\n", what, t, r.Steps, r.Affinity, r.Affinity/lo.Affinity, r.KNNRecall)
	}
}

// summary runs ssnmf with args and -summary in dir, inside salloc with
// tasks tasks if tasks > 0, and returns the summary.
func summary(dir, name string, tasks int, bin string, args []string) result {
	path := filepath.Join(dir, name+".json")
	args = append(args[:len(args)-1:len(args)-1], "-summary", path, args[len(args)-1])
	run(tasks, bin, args...)
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var r result
	if err := json.Unmarshal(b, &r); err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	return r
}

func run(tasks int, bin string, args ...string) {
	cmd := exec.Command(bin, args...)
	if tasks > 0 {
		cmd = exec.Command("salloc", append([]string{"--quiet", "--overcommit", "--ntasks", fmt.Sprint(tasks), bin}, args...)...)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("%s: %v", strings.Join(cmd.Args, " "), err)
	}
}
