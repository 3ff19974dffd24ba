package main

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testTrace reads the trace package's sample trace (six columns, three
// rows, objective 100, 50, 40).
func testTrace(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "trace", "testdata", "six-columns.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeTestTrace(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPlot(t *testing.T) {
	dir := t.TempDir()
	sample := testTrace(t)
	a := writeTestTrace(t, dir, "fw.csv", sample)
	b := writeTestTrace(t, dir, "pgd.csv", strings.ReplaceAll(sample, ",40,", ",45,"))
	for _, tc := range []struct {
		name string
		args []string
		out  string
	}{
		{name: "png", args: []string{a, b}, out: "f.png"},
		{name: "svg excess vs passes", args: []string{"-x", "passes", "-y", "excess", a, b}, out: "f.svg"},
		{name: "linear gap vs iter, flags after the files", args: []string{a, "-linear", "-x", "iter", "-y", "gap", "-title", "run"}, out: "g.png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.out)
			var stdout, stderr bytes.Buffer
			args := append([]string{"-o", out}, tc.args...)
			if err := plotCmd(context.Background(), args, &stdout, &stderr); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(out, ".png") {
				if _, err := png.Decode(bytes.NewReader(data)); err != nil {
					t.Fatalf("not a PNG: %v", err)
				}
			} else if !bytes.Contains(data, []byte("<svg")) || !bytes.Contains(data, []byte("pgd")) {
				t.Fatal("not an SVG with the trace's label")
			}
			if !strings.Contains(stderr.String(), tc.out) {
				t.Errorf("stderr %q does not name the output", stderr.String())
			}
		})
	}
}

func TestPlotBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeTestTrace(t, dir, "good.csv", testTrace(t))
	bad := writeTestTrace(t, dir, "bad.csv", "iter,seconds,objective,gap,step_size,passes\n0,0.1,x,1,0,1\n")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{name: "no output", args: []string{good}, want: []string{"-o"}},
		{name: "no traces", args: []string{"-o", filepath.Join(dir, "x.png")}, want: []string{"no TRACE"}},
		{name: "unknown format", args: []string{"-o", filepath.Join(dir, "x.gif"), good}, want: []string{"x.gif", ".png or .svg"}},
		{name: "unknown x", args: []string{"-o", filepath.Join(dir, "x.png"), "-x", "time", good}, want: []string{"-x", "time"}},
		{name: "unknown y", args: []string{"-o", filepath.Join(dir, "x.png"), "-y", "loss", good}, want: []string{"-y", "loss"}},
		{name: "missing trace", args: []string{"-o", filepath.Join(dir, "x.png"), filepath.Join(dir, "none.csv")}, want: []string{"none.csv"}},
		{name: "bad cell", args: []string{"-o", filepath.Join(dir, "x.png"), good, bad}, want: []string{"bad.csv", "line 2", `"objective"`}},
		{name: "bad flag", args: []string{"-o", filepath.Join(dir, "x.png"), "-width", "3", good}, want: []string{"width"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := plotCmd(context.Background(), tc.args, new(bytes.Buffer), new(bytes.Buffer))
			var ue usageError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want a usage error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) || strings.Contains(err.Error(), "\n") {
					t.Errorf("err = %q, want one line with %q", err, w)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "x.png")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed plot left x.png behind: %v", err)
	}
	var stdout bytes.Buffer
	if err := plotCmd(context.Background(), []string{"-h"}, &stdout, new(bytes.Buffer)); !errors.Is(err, errHelp) || !strings.Contains(stdout.String(), "ssnmf plot") {
		t.Errorf("-h: err = %v, usage %q", err, stdout.String())
	}
}
