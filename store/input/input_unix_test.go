//go:build unix

package input

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRequireFile: a regular file passes; a directory, a pipe and a
// character device are named with what they are.
func TestRequireFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.csv")
	if err := os.WriteFile(file, []byte("a\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct{ path, want string }{
		{file, ""},
		{dir, dir + " is a directory, not a file"},
		{"/dev/fd/" + strconv.Itoa(int(r.Fd())), " is a pipe, which can be read only once, front to back, but it is read twice: write it to a file first and give that file"},
		{os.DevNull, os.DevNull + " is a terminal or character device, which can be read only once"},
		{filepath.Join(dir, "none"), "no such file"},
	} {
		err := RequireFile(tc.path, "it is read twice")
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RequireFile(%s) = %v, want an error containing %q", tc.path, err, tc.want)
		}
	}
}
