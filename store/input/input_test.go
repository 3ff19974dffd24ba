package input

import (
	"testing"
)

func TestParseInputFormat(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      bool
	}{
		{in: "", want: "auto"},
		{in: "auto", want: "auto"},
		{in: "CSV", want: "csv"},
		{in: "arrow", want: "arrow"},
		{in: "ipc", want: "arrow"},
		{in: "feather", want: "arrow"},
		{in: " parquet ", want: "parquet"},
		{in: "json", err: true},
	} {
		got, err := ParseFormat(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}
