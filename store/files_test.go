package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/store/vfs"
)

// CheckFiles refuses an output that is an input or another output, by
// any spelling of its path, a link or a hard link, and lets the others
// be.
func TestCheckFiles(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(at("in.csv"), []byte("x\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(at("in.csv"), at("link.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(at("in.csv"), at("hard.csv")); err != nil {
		t.Fatal(err)
	}
	in := func(path string) []NamedFile { return []NamedFile{{Name: "INPUT", Path: path}} }
	for _, tc := range []struct {
		name string
		ins  []NamedFile
		outs []NamedFile
		want string // in the error; "" for none
	}{
		{"distinct", in(at("in.csv")), []NamedFile{{Name: "-out", Path: at("out.csv")}}, ""},
		{"out is the input", in(at("in.csv")), []NamedFile{{Name: "-out", Path: at("in.csv")}}, "-out " + at("in.csv") + " would overwrite INPUT"},
		{"another spelling", in(at("in.csv")), []NamedFile{{Name: "-out", Path: dir + "/missing/../in.csv"}}, "would overwrite INPUT"},
		{"through a link", in(at("link.csv")), []NamedFile{{Name: "-out", Path: at("in.csv")}}, "would overwrite INPUT " + at("link.csv")},
		{"a hard link", in(at("hard.csv")), []NamedFile{{Name: "-out", Path: at("in.csv")}}, "would overwrite INPUT " + at("hard.csv")},
		{"two outputs", nil, []NamedFile{{Name: "-out", Path: at("s")}, {Name: "-summary", Path: at("s")}}, "are the same file"},
		{"both on stdout", nil, []NamedFile{{Name: "-summary", Path: StdoutPath}, {Name: "-trace", Path: StdoutPath}}, "-summary - and -trace -"},
		{"both on /dev/null", nil, []NamedFile{{Name: "-out", Path: os.DevNull}, {Name: "-trace", Path: os.DevNull}}, ""},
		{"empty paths skipped", in(""), []NamedFile{{Name: "-out", Path: ""}, {Name: "-trace", Path: ""}}, ""},
	} {
		err := CheckFiles(tc.ins, tc.outs)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.want)
		}
	}
}

// Within sees a path in a directory, the directory itself, and not a
// sibling that shares its prefix.
func TestWithin(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		path string
		want bool
	}{
		{dir, true},
		{filepath.Join(dir, "a", "b.csv"), true},
		{dir + "x", false},
		{filepath.Dir(dir), false},
	} {
		if got := Within(dir, tc.path); got != tc.want {
			t.Errorf("Within(%s, %s) = %v, want %v", dir, tc.path, got, tc.want)
		}
	}
}

// Outputs appear together on Commit, and none of them on Abort.
func TestOutputs(t *testing.T) {
	dir := t.TempDir()
	for _, commit := range []bool{true, false} {
		var outs Outputs
		paths := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
		for _, p := range paths {
			a, err := CreateOutput(context.Background(), vfs.OS{}, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			a.Write([]byte("x"))
			outs = append(outs, a, nil)
		}
		if commit {
			if err := outs.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		outs.Abort()
		for _, p := range paths {
			if _, err := os.Stat(p); (err == nil) != commit {
				t.Errorf("commit %v: %s: %v", commit, p, err)
			}
			os.Remove(p)
		}
	}
}

// WritesStdout sees "-" among the paths, and not a regular file or an
// empty path.
func TestWritesStdout(t *testing.T) {
	file := filepath.Join(t.TempDir(), "out.csv")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		paths []string
		want  bool
	}{
		{[]string{"", file}, false},
		{[]string{file, StdoutPath}, true},
		{nil, false},
	} {
		if got := WritesStdout(tc.paths...); got != tc.want {
			t.Errorf("WritesStdout(%q) = %v, want %v", tc.paths, got, tc.want)
		}
	}
}
