package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestBenchQuick(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := bench(context.Background(), []string{"-quick", "-workers", "2"}, &out, &errOut); err != nil {
		t.Fatalf("bench -quick: %v\n%s", err, errOut.String())
	}
	s := out.String()
	for _, want := range []string{"n=300", "FMA peak", "fallback entries/s", " gen ", " P·S ", " P·W ", " kNN ", "p=4: kNN build at "} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	// Four passes, each with a measured fallback rate.
	if got := strings.Count(s, "e+"); got < 4 {
		t.Errorf("only %d figures in the output:\n%s", got, s)
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
