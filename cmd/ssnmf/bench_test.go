package main

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/tile"
)

func TestBenchQuick(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := bench(context.Background(), []string{"-quick", "-workers", "2"}, &out, &errOut); err != nil {
		t.Fatalf("bench -quick: %v\n%s", err, errOut.String())
	}
	s := out.String()
	for _, want := range []string{"n=300", "cpu: ", tile.CPUFeatures(), "FMA peak", "entries/s", " gen ", " P·S ", " P·W ", " kNN ", " screen ", "p=4: kNN build at "} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	// Every family the CPU runs has its probe's peak and a row for each
	// pass: a measured rate, or "-*" and a footnote where it has no kernel
	// for the pass in this build; the portable kernel has every pass.
	for _, k := range tile.SupportedISAs() {
		peak := regexp.MustCompile(`(?m)^` + k.String() + ` +[0-9.]+e\+[0-9]+ +(scalar|` + k.String() + `) float32`)
		if !peak.MatchString(s) {
			t.Errorf("no FMA peak of %s:\n%s", k, s)
		}
		for _, pass := range []string{"gen", "P·S", "P·W", "kNN"} {
			row := regexp.MustCompile(`(?m)^ +4 +[-0-9]+ +` + pass + ` +` + k.String() + ` +(\S+) `)
			m := row.FindStringSubmatch(s)
			switch {
			case m == nil:
				t.Errorf("no %s row of %s:\n%s", pass, k, s)
			case m[1] == "-*":
				if k == tile.ISAGo || pass != "kNN" && tile.DenseVectorKernel(k) {
					t.Errorf("%s of %s not measured:\n%s", pass, k, s)
				}
				if !strings.Contains(s, "-* "+k.String()+": ") {
					t.Errorf("no footnote for %s:\n%s", k, s)
				}
			default:
				if v, err := strconv.ParseFloat(m[1], 64); err != nil || v <= 0 {
					t.Errorf("%s rate of %s: %q:\n%s", pass, k, m[1], s)
				}
			}
		}
	}
}

func TestBenchFlags(t *testing.T) {
	testCmdUsage(t, bench, []usageCase{
		{name: "bad n", args: []string{"-n", "1"}, want: "-n 1"},
		{name: "bad p list", args: []string{"-p", "4,x"}, want: "-p:"},
		{name: "bad k", args: []string{"-k", "0"}, want: "-k:"},
		{name: "bad precision", args: []string{"-precision", "float16"}, want: "-precision"},
		{name: "bad reps", args: []string{"-reps", "0"}, want: "-reps 0"},
		{name: "argument", args: []string{"data.csv"}, want: "takes no arguments"},
		{name: "unknown flag", args: []string{"-zap"}, want: "zap"},
	}, false)
	var out bytes.Buffer
	if err := bench(context.Background(), []string{"-h"}, &out, &out); !errors.Is(err, errHelp) || !strings.Contains(out.String(), "Usage: ssnmf bench") {
		t.Fatalf("-h: err = %v, output %q", err, out.String())
	}
}
