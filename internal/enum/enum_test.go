package enum

import "testing"

type color int

var colors = []string{"red", "green", "blue"}

func TestNameAndParse(t *testing.T) {
	for i, want := range colors {
		if got := Name(colors, color(i), "color"); got != want {
			t.Errorf("Name(%d) = %q, want %q", i, got, want)
		}
		if got, err := Parse[color](colors, want, "color"); err != nil || got != color(i) {
			t.Errorf("Parse(%q) = %v, %v", want, got, err)
		}
	}
	for _, tc := range []struct {
		v    color
		want string
	}{{v: -1, want: "color(-1)"}, {v: 3, want: "color(3)"}} {
		if got := Name(colors, tc.v, "color"); got != tc.want {
			t.Errorf("Name(%d) = %q, want %q", tc.v, got, tc.want)
		}
	}
	if _, err := Parse[color](colors, "mauve", "color"); err == nil || err.Error() != `unknown color "mauve" (want red, green or blue)` {
		t.Errorf("Parse(mauve): %v", err)
	}
	if got := List(colors[:1]); got != "red" {
		t.Errorf("List of one = %q", got)
	}
}

// TestJoin checks the prose lists of none, one, two and three words.
func TestJoin(t *testing.T) {
	for n, want := range []string{"", "red", "red and green", "red, green and blue"} {
		if got := Join(colors[:n], "and"); got != want {
			t.Errorf("Join of %d = %q, want %q", n, got, want)
		}
	}
}
