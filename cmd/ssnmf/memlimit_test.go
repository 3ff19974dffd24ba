package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/solver"
)

// TestMemoryLimit runs a real solve with the default settings (the
// approximate kNN graph above graph.ApproxMinRows rows) inside a Linux
// memory cgroup whose limit is a third of what the run leaves in its work
// directory: it must finish, take the same start as unbound (the
// spectral embedding's blocks and coarse graphs go to scratch files), and
// give the same W, to the bit.
// The cgroup counts the page cache of the mapped files, so the run
// finishes only if its heap stays bounded and its files are visited in
// a way that lets the kernel write pages back and drop them. It skips,
// with scripts/memlimit/run.sh's reason, where no memory cgroup can be
// made (not root, no controller). SSNMF_MEMLIMIT_N sets the rows (default
// 300,000).
func TestMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("a solve of 300,000 rows in a memory cgroup: not with -short")
	}
	n := 300_000
	if s := os.Getenv("SSNMF_MEMLIMIT_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("SSNMF_MEMLIMIT_N=%s: %v", s, err)
		}
	}
	dir := t.TempDir()
	data, work, sum, wOut := filepath.Join(dir, "mix.parquet"), filepath.Join(dir, "work"), filepath.Join(dir, "s.json"), filepath.Join(dir, "w.csv")
	if code, _, stderr := ssnmf(t, "gen", "-q", "-n", strconv.Itoa(n), "-p", "16", "-k", "10", "-sep", "6", "-seed", "1", "-o", data); code != exitOK {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	// The limit: a third of the work directory an unbounded run leaves
	// (features 128 bytes a row, the graph about 550, W, P·W, P·S and W
	// in the input's order 320, at p = 16, k = 10, M = 30), besides the
	// lists of the search, in an unlinked scratch file of 368 bytes a row.
	limit := int64(n) * 1000 / 3
	script, err := filepath.Abs("../../scripts/memlimit/run.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script, strconv.FormatInt(limit, 10), os.Args[0],
		"solve", "-q", "-workers", "2", "-workdir", work, "-summary", sum, "-out", wOut, data)
	cmd.Env = append(os.Environ(), "SSNMF_TEST_MAIN=1", "GOMAXPROCS=2")
	out, err := cmd.CombinedOutput()
	text := strings.TrimSpace(string(out))
	if code := cmd.ProcessState.ExitCode(); code == 77 {
		t.Skip(text)
	} else if err != nil {
		t.Fatalf("solve in a memory cgroup of %d bytes: %v:\n%s", limit, err, text)
	}
	var size int64
	filepath.Walk(work, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
		}
		return nil
	})
	readSummary := func(path string) solver.Summary {
		var s solver.Summary
		raw, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(raw, &s)
		}
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := readSummary(sum)
	if s.ARI == nil {
		t.Fatal("the summary has no ARI")
	}
	t.Logf("n=%d: %s; work directory %d bytes (%.1f× the limit); %s search; ARI %.4f", n, text[strings.LastIndex(text, "memlimit:"):], size, float64(size)/float64(limit), s.KNN, *s.ARI)
	// The kernel rounds the limit down to a page.
	if m := s.Memory; m.Source != "cgroup" || m.Bytes > limit || m.Bytes <= limit-1<<16 || m.Heap != m.Bytes/2 || m.Scratch != m.Bytes/4 || m.Heap+m.Scratch+m.Mapped != m.Bytes {
		t.Errorf("summary memory %#v, want the cgroup's limit %d split 1/2, 1/4, 1/4", m, limit)
	}
	if size < 5*limit/2 {
		t.Errorf("the work directory holds %d bytes, not 2.5× the limit %d: the test does not show bounded memory", size, limit)
	}
	if *s.ARI < 0.95 {
		t.Errorf("ARI %.4f, want at least 0.95 on a well separated mixture", *s.ARI)
	}
	if s.KNNParts < 2 {
		t.Errorf("the leaf rounds ran by %d parts of the rows, want the lists out of core, by parts", s.KNNParts)
	}
	// The same run unbound: the same start and the same W.
	freeSum, freeOut := filepath.Join(dir, "free.json"), filepath.Join(dir, "free.csv")
	if code, _, stderr := ssnmf(t, "solve", "-q", "-workers", "2", "-summary", freeSum, "-out", freeOut, data); code != exitOK {
		t.Fatalf("solve unbound: exit %d: %s", code, stderr)
	}
	free := readSummary(freeSum)
	if free.KNNParts != 0 {
		t.Errorf("unbound, the leaf rounds ran by %d parts of the rows, want at once", free.KNNParts)
	}
	var files int64
	if s.Spectral != nil {
		files = s.Spectral.ScratchFileBytes
	}
	t.Logf("init %s (%s) in the cgroup, %d bytes of the spectral embedding in scratch files; unbound %s (%s)", s.Init, s.InitRule, files, free.Init, free.InitRule)
	if s.Init != free.Init {
		t.Errorf("init %s (%s) in the cgroup, %s (%s) unbound", s.Init, s.InitRule, free.Init, free.InitRule)
	}
	if a, b := readFiles(t, wOut)[wOut], readFiles(t, freeOut)[freeOut]; string(a) != string(b) {
		t.Errorf("W in the cgroup differs from W unbound")
	}
}
