package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/solver"
)

// TestCSVRules runs solve on CSV inputs that the reader used to take
// wrongly (issue 34, items 13, 16c, 16g, 17c, 17d) and checks the exit
// code and the error line, or the rows read.
func TestCSVRules(t *testing.T) {
	dir := t.TempDir()
	rows := "3,1\n2,4\n5,6\n7,8\n9,9\n"
	for _, tc := range []struct {
		name, content string
		flags         []string
		wantErr       string // the error line, without its newline; "" for a run that succeeds
		wantN         int    // the rows of a run that succeeds
	}{
		{name: "CR line ends", content: strings.ReplaceAll("a,b\n"+rows, "\n", "\r"), wantN: 5},
		{name: "no header", content: rows, wantErr: `ssnmf: in.csv:1: the first line holds numbers, not column names ("3", "1"): the file seems to have no header; add a first line of column names`},
		{name: "Go digit separator", content: "a,b\n1_000,2\n" + rows, wantErr: `ssnmf: in.csv:2: column "a": "1_000" is not a decimal number ` + "(digits with an optional sign, point and exponent, such as 12, -0.5 or 1.5e-3; not Go's forms such as 1_000 or 0x1p3)"},
		{name: "Go hexadecimal float", content: "a,b\n2,0x1p3\n" + rows, wantErr: `ssnmf: in.csv:2: column "b": "0x1p3" is not a decimal number ` + "(digits with an optional sign, point and exponent, such as 12, -0.5 or 1.5e-3; not Go's forms such as 1_000 or 0x1p3)"},
		{name: "10 MB field", content: "a,b\n1," + strings.Repeat("z", 10<<20) + "\n" + rows, wantErr: `ssnmf: in.csv:2: column "b": "` + strings.Repeat("z", 60) + `"…(10485760 bytes) is not a number`},
		{name: "binary with -format csv", content: "a\x00,b\x00\n" + rows, flags: []string{"-format", "csv"}, wantErr: "ssnmf: in.csv: NUL bytes in the first 26 bytes: the text is UTF-16 or binary, not UTF-8 CSV: save it as UTF-8"},
		{name: "binary, format guessed", content: "a\x00,b\x00\n" + rows, wantErr: "ssnmf: in.csv: NUL bytes in the first 26 bytes: the text is UTF-16 or binary, not UTF-8 CSV: save it as UTF-8, or give -format arrow or -format parquet if it is one of those"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub := t.TempDir()
			in, sum := filepath.Join(sub, "in.csv"), filepath.Join(dir, "s.json")
			if err := os.WriteFile(in, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Remove(sum)
			args := append(append([]string{"solve", "-q", "-k", "2", "-summary", sum}, tc.flags...), in)
			code, _, stderr := ssnmf(t, args...)
			stderr = strings.ReplaceAll(stderr, in, "in.csv")
			if tc.wantErr != "" {
				if code != exitUsage || stderr != tc.wantErr+"\n" {
					t.Fatalf("exit %d, stderr %.300q; want exit %d and %.300q", code, stderr, exitUsage, tc.wantErr)
				}
				return
			}
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var s solver.Summary
			raw, _ := os.ReadFile(sum)
			if err := json.Unmarshal(raw, &s); err != nil || s.N != tc.wantN {
				t.Fatalf("summary %s (%v): want n = %d", raw, err, tc.wantN)
			}
		})
	}
}
