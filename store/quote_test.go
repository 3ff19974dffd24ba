package store

import (
	"strconv"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	long := strings.Repeat("a", 10<<20)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"short", "abc", `"abc"`},
		{"at the limit", strings.Repeat("x", QuoteLimit), `"` + strings.Repeat("x", QuoteLimit) + `"`},
		{"10 MB", long, `"` + strings.Repeat("a", QuoteLimit) + `"…(10485760 bytes)`},
		{"cut before a whole character", strings.Repeat("a", QuoteLimit-1) + "é" + "zz", `"` + strings.Repeat("a", QuoteLimit-1) + `"…(63 bytes)`},
		{"control characters escaped", "a\nb", `"a\nb"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Quote(tc.in); got != tc.want {
				if len(got) > 200 {
					got = got[:200] + "..."
				}
				t.Errorf("Quote = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestLongFieldsInErrors checks that no error of the CSV reader echoes a
// long field or name whole.
func TestLongFieldsInErrors(t *testing.T) {
	big := strings.Repeat("7x", 5<<20)
	many := make([]string, 1000)
	for j := range many {
		many[j] = "c" + strconv.Itoa(j)
	}
	for _, tc := range []struct {
		name, content string
		opt           TableOptions
		want          string
	}{
		{"10 MB cell", "a,b\n1," + big + "\n", TableOptions{}, `input.csv:2: column "b": "7x7x7x`},
		{"10 MB column name", big + ",b\nx,1\n", TableOptions{}, `input.csv:2: column "7x7x`},
		{"10 MB duplicate name", big + "," + big + "\n1,2\n", TableOptions{}, `duplicate column name "7x7x`},
		{"10 MB unknown -features", "a,b\n1,2\n", TableOptions{Features: []string{big}}, `unknown feature column "7x7x`},
		{"many columns listed", strings.Join(many, ",") + "\n", TableOptions{Label: "nope"}, `… (1000 in all)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCSV(strings.NewReader(tc.content), "input.csv", tc.opt)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %.300s does not contain %q", msg, tc.want)
			}
			if len(msg) > 2000 {
				t.Errorf("error is %d bytes long: %.300s", len(msg), msg)
			}
		})
	}
}
