package store

import (
	"math"
	"strings"
	"testing"
)

// checkRead checks what a reader returned for an input named name: either
// an error of one line that starts with the name, or a table that passes
// checkTable.
func checkRead(t *testing.T, name string, tab *Table, err error) {
	t.Helper()
	if err != nil {
		if msg := err.Error(); !strings.HasPrefix(msg, name+":") || strings.Contains(msg, "\n") {
			t.Fatalf("error %q is not one line starting with the input name", msg)
		}
		return
	}
	checkTable(t, tab)
}

// checkTable checks the invariants of a table returned by a reader.
func checkTable(t *testing.T, tab *Table) {
	t.Helper()
	if tab.N < 1 || tab.P < 1 || len(tab.Features) != tab.N*tab.P || len(tab.Names) != tab.P {
		t.Fatalf("inconsistent table: N=%d P=%d len(Features)=%d len(Names)=%d", tab.N, tab.P, len(tab.Features), len(tab.Names))
	}
	for i, v := range tab.Features {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("feature %d is %v", i, v)
		}
	}
	switch {
	case tab.Labels == nil:
		if tab.Classes != nil || tab.LabelName != "" {
			t.Fatalf("no labels but Classes=%q LabelName=%q", tab.Classes, tab.LabelName)
		}
	case len(tab.Labels) != tab.N:
		t.Fatalf("len(Labels) = %d, want N = %d", len(tab.Labels), tab.N)
	default:
		used := make([]bool, len(tab.Classes))
		for i, c := range tab.Labels {
			if c < 0 || c >= len(tab.Classes) {
				t.Fatalf("label %d is %d, want [0, %d)", i, c, len(tab.Classes))
			}
			used[c] = true
		}
		for c, u := range used {
			if !u || strings.TrimSpace(tab.Classes[c]) == "" {
				t.Fatalf("class %d (%q) is unused or empty", c, tab.Classes[c])
			}
		}
	}
}
