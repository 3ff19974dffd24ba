package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestPassProgress(t *testing.T) {
	for _, tc := range []struct {
		name     string
		quiet    bool
		started  time.Duration // how long ago the pass began
		lastLine time.Duration // how long ago the last line was printed
		want     string        // "" for no line
	}{
		{name: "long pass", started: 10 * time.Second, lastLine: time.Hour, want: "P·S pass  50.0% of 10 tiles  10.0s  5e+04 entries/s  about 10s to go"},
		{name: "quiet", quiet: true, started: 10 * time.Second, lastLine: time.Hour},
		{name: "short pass", started: time.Second, lastLine: time.Hour},
		{name: "recent line", started: 10 * time.Second, lastLine: time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			now := time.Now()
			r := &report{cfg: &config{kernelConfig: kernelConfig{quiet: tc.quiet}}, out: &out, n: 1000,
				passStart: now.Add(-tc.started), lastLine: now.Add(-tc.lastLine)}
			r.passProgress("P·S", 5, 10)
			got := strings.TrimSpace(out.String())
			if got != tc.want {
				t.Errorf("printed %q, want %q", got, tc.want)
			}
		})
	}
}
