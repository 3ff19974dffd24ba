package main

import (
	"strings"
	"testing"
)

// TestPick checks that -shape picks one shape, all when empty, and refuses
// a name that is none (it wrote nothing and exited 0 before).
func TestPick(t *testing.T) {
	for _, tc := range []struct {
		only string
		want int
		err  string
	}{
		{"", len(shapes), ""},
		{"rings", 1, ""},
		{"nested", 1, ""},
		{"elongated", 1, ""},
		{"ring", 0, "-shape ring: no such shape; want one of rings, moons, spirals, nested, elongated"},
	} {
		got, err := pick(tc.only)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("pick(%q): err %v, want %q", tc.only, err, tc.err)
		case tc.err == "" && (err != nil || len(got) != tc.want):
			t.Errorf("pick(%q): %d shapes, err %v; want %d", tc.only, len(got), err, tc.want)
		case tc.err == "" && tc.only != "" && got[0].name != tc.only:
			t.Errorf("pick(%q): shape %s", tc.only, got[0].name)
		}
	}
}
