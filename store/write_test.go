package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/store/vfs"
)

// dirNames returns the names of the entries of dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFileAtomic(t *testing.T) {
	errWrite := errors.New("write failed")
	tests := []struct {
		name     string
		previous string // content of an existing file; "" for none
		write    func(w io.Writer) error
		wantErr  error  // nil for success
		want     string // content of the file afterwards; "" for no file
	}{
		{
			name:  "new file",
			write: func(w io.Writer) error { _, err := io.WriteString(w, "hello\n"); return err },
			want:  "hello\n",
		},
		{
			name:     "replace",
			previous: "old\n",
			write:    func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err },
			want:     "new\n",
		},
		{
			name:     "large",
			previous: "old\n",
			write: func(w io.Writer) error {
				_, err := w.Write(bytes.Repeat([]byte("0123456789abcdef"), 1<<14))
				return err
			},
			want: strings.Repeat("0123456789abcdef", 1<<14),
		},
		{
			name:     "callback fails",
			previous: "old\n",
			write: func(w io.Writer) error {
				io.WriteString(w, "partial")
				return errWrite
			},
			wantErr: errWrite,
			want:    "old\n",
		},
		{
			name:    "callback fails without previous file",
			write:   func(w io.Writer) error { return errWrite },
			wantErr: errWrite,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.csv")
			if tt.previous != "" {
				if err := os.WriteFile(path, []byte(tt.previous), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := WriteFileAtomic(path, tt.write)
			if tt.wantErr == nil && err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), path) {
					t.Errorf("error %q does not name %s", err, path)
				}
			}

			var wantNames []string
			if tt.want != "" {
				wantNames = []string{"out.csv"}
			}
			if got := dirNames(t, dir); !slices.Equal(got, wantNames) {
				t.Errorf("directory holds %q, want %q", got, wantNames)
			}
			if tt.want == "" {
				return
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("file holds %q, want %q", got, tt.want)
			}
			if fi, err := os.Stat(path); err != nil {
				t.Fatal(err)
			} else if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o644 {
				t.Errorf("mode %v, want 0644", fi.Mode().Perm())
			}
		})
	}
}

func TestWriteFileAtomicMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "out.csv")
	err := WriteFileAtomic(path, func(w io.Writer) error { return nil })
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v, want one naming %s", err, path)
	}
}

func TestWriteMembershipCSV(t *testing.T) {
	tests := []struct {
		name    string
		W       []float64
		n, k    int
		want    string
		wantErr string
	}{
		{
			name: "argmax and ties",
			W:    []float64{0.1, 0.7, 0.2, 0.5, 0.5, 0, 0, 0, 0, 1.0 / 3, math.Copysign(0, -1), 1e-300},
			n:    4, k: 3,
			want: "id,w1,w2,w3,cluster,confidence\n" +
				"0,0.1,0.7,0.2,1,0.7\n" +
				"1,0.5,0.5,0,0,0.5\n" +
				"2,0,0,0,0,0\n" +
				"3,0.3333333333333333,-0,1e-300,0,0.3333333333333333\n",
		},
		{name: "no rows", W: nil, n: 0, k: 2, want: "id,w1,w2,cluster,confidence\n"},
		{name: "zero clusters", W: nil, n: 0, k: 0, wantErr: "invalid dimensions 0×0"},
		{name: "negative rows", W: nil, n: -1, k: 2, wantErr: "invalid dimensions -1×2"},
		{name: "length mismatch", W: []float64{1, 2, 3}, n: 2, k: 2, wantErr: "3 values for 2×2"},
		{name: "overflow", W: []float64{1}, n: math.MaxInt / 2, k: 3, wantErr: "values for"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := WriteMembershipCSV(&buf, tt.W, tt.n, tt.k)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := buf.String(); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestWriteMembershipCSVRoundTrip writes a membership matrix atomically and
// reads it back through ReadCSV, bit for bit.
func TestWriteMembershipCSVRoundTrip(t *testing.T) {
	const n, k = 50, 4
	W := make([]float64, n*k)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range W {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		W[i] = float64(x>>11) / (1 << 53) // uniform in [0, 1) with full precision
	}
	copy(W, []float64{math.SmallestNonzeroFloat64, 1.0 / 3, math.Nextafter(1, 0), math.Copysign(0, -1)})
	copy(W[k:], []float64{0.25, 0.25, 0.25, 0.25})

	path := filepath.Join(t.TempDir(), "membership.csv")
	if err := WriteFileAtomic(path, func(w io.Writer) error { return WriteMembershipCSV(w, W, n, k) }); err != nil {
		t.Fatal(err)
	}
	tab, err := ReadCSV(path, CSVOptions{Features: []string{"w1", "w2", "w3", "w4"}, Label: "cluster"})
	if err != nil {
		t.Fatal(err)
	}
	if tab.N != n || tab.P != k {
		t.Fatalf("read %d×%d, want %d×%d", tab.N, tab.P, n, k)
	}
	if want := []string{"w1", "w2", "w3", "w4"}; !slices.Equal(tab.Names, want) {
		t.Errorf("names %q, want %q", tab.Names, want)
	}
	for i, v := range tab.Features {
		if math.Float64bits(v) != math.Float64bits(W[i]) {
			t.Errorf("element %d read back as %v, wrote %v", i, v, W[i])
		}
	}
	ids, err := ReadCSV(path, CSVOptions{Features: []string{"id"}, Label: "cluster"})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range ids.Features {
		if v != float64(i) {
			t.Errorf("row %d has id %v", i, v)
		}
	}
	for i, c := range tab.Labels {
		got, err := strconv.Atoi(tab.Classes[c])
		if err != nil {
			t.Fatal(err)
		}
		if want := Argmax(W[i*k : (i+1)*k]); got != want {
			t.Errorf("row %d: cluster %d, want %d", i, got, want)
		}
	}
}

func TestArgmax(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		row  []float64
		want int
	}{
		{name: "empty", row: nil, want: -1},
		{name: "single", row: []float64{3}, want: 0},
		{name: "last", row: []float64{1, 2, 3}, want: 2},
		{name: "first", row: []float64{3, 2, 1}, want: 0},
		{name: "tie takes lowest", row: []float64{1, 3, 2, 3}, want: 1},
		{name: "all equal", row: []float64{0, 0, 0}, want: 0},
		{name: "negative", row: []float64{-3, -1, -2}, want: 1},
		{name: "signed zeros tie", row: []float64{math.Copysign(0, -1), 0}, want: 0},
		{name: "infinity", row: []float64{math.MaxFloat64, math.Inf(1)}, want: 1},
		{name: "NaN skipped", row: []float64{nan, 1, nan, 2}, want: 3},
		{name: "all NaN", row: []float64{nan, nan}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Argmax(tt.row); got != tt.want {
				t.Errorf("Argmax(%v) = %d, want %d", tt.row, got, tt.want)
			}
		})
	}
}

func TestAtomicFile(t *testing.T) {
	dir := t.TempDir()
	listing := func() []string { return dirNames(t, dir) }
	// Abort leaves nothing behind and keeps an earlier file.
	old := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(old, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := CreateAtomic(old)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(a, "new")
	a.Abort()
	a.Abort()
	if got := listing(); len(got) != 1 || got[0] != "out.csv" {
		t.Fatalf("after Abort the directory holds %v, want [out.csv]", got)
	}
	if b, _ := os.ReadFile(old); string(b) != "old" {
		t.Fatalf("Abort changed the earlier file to %q", b)
	}
	// Commit replaces it; a later Abort does nothing, a second Commit fails.
	a, err = CreateAtomic(old)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(a, "new")
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	a.Abort()
	if b, _ := os.ReadFile(old); string(b) != "new" {
		t.Fatalf("after Commit the file holds %q, want new", b)
	}
	if err := a.Commit(); err == nil {
		t.Error("a second Commit succeeded")
	}
	// Bad paths fail at creation, before anything is written.
	for _, tc := range []struct {
		name, path, want string
	}{
		{name: "missing directory", path: filepath.Join(dir, "nope", "w.csv"), want: "no such file"},
		{name: "path is a directory", path: dir, want: "is a directory"},
		{name: "parent is a file", path: filepath.Join(old, "w.csv"), want: "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CreateAtomic(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Fatalf("CreateAtomic(%s) = %v, want an error naming the path and %q", tc.path, err, tc.want)
			}
		})
	}
	if got := listing(); len(got) != 1 {
		t.Fatalf("directory holds %v after failed creations", got)
	}
}

// TestAtomicFileStopped checks that once the context of an output is done
// its writes fail with the context's cause, nothing more reaches the file,
// and Commit fails and leaves the earlier file as it was; for a file
// renamed into place and for standard output (CreateOutput).
func TestAtomicFileStopped(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "edges.csv")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	for _, target := range []string{path, StdoutPath} {
		t.Run(filepath.Base(target), func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			a, err := CreateOutput(ctx, vfs.OS{}, target, &stdout)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Abort()
			big := bytes.Repeat([]byte("x"), 100<<10) // more than the buffer
			if _, err := a.Write(big); err != nil {
				t.Fatalf("a write before the stop: %v", err)
			}
			cause := errors.New("stopped by a signal")
			cancel(cause)
			if _, err := a.Write(big); !errors.Is(err, cause) {
				t.Errorf("a write after the stop: %v, want the cause", err)
			}
			if err := a.Commit(); !errors.Is(err, cause) {
				t.Errorf("Commit after the stop: %v, want the cause", err)
			}
		})
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("the earlier file holds %d bytes, want it untouched", len(b))
	}
	if got := dirNames(t, dir); len(got) != 1 {
		t.Errorf("the directory holds %v, want only the earlier file", got)
	}
	if stdout.Len() != 100<<10 {
		t.Errorf("standard output got %d bytes, want the %d written before the stop", stdout.Len(), 100<<10)
	}
}
