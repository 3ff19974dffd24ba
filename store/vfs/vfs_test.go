package vfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// OS creates, writes, syncs, renames and removes real files.
func TestOS(t *testing.T) {
	dir := t.TempDir()
	var fsys FS = OS{}
	f, err := fsys.CreateTemp(dir, ".out.tmp*")
	if err != nil {
		t.Fatal(err)
	}
	if got := filepath.Dir(f.Name()); got != dir || !strings.HasPrefix(filepath.Base(f.Name()), ".out.tmp") {
		t.Fatalf("CreateTemp made %s, want .out.tmp* in %s", f.Name(), dir)
	}
	if n, err := f.Write([]byte("hello")); n != 5 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"chmod", func() error { return f.Chmod(0o640) }},
		{"sync", f.Sync},
		{"close", f.Close},
		{"rename", func() error { return fsys.Rename(f.Name(), filepath.Join(dir, "out")) }},
		{"syncdir", func() error { return fsys.SyncDir(dir) }},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
	}
	fi, err := fsys.Stat(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 5 || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o640) {
		t.Errorf("out: %d bytes, mode %v, want 5 bytes, mode 0640", fi.Size(), fi.Mode().Perm())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out")); err != nil || string(b) != "hello" {
		t.Errorf("out holds %q (%v), want hello", b, err)
	}
	if _, err := os.Stat(f.Name()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the temporary file is still there after the rename: %v", err)
	}
	if err := fsys.Remove(filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("after Remove the directory holds %v (%v)", entries, err)
	}
}

// The errors of OS are those of package os, naming the path.
func TestOSErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	fsys := OS{}
	tests := []struct {
		name    string
		do      func() error
		wantErr bool
	}{
		{"create in a missing directory", func() error {
			f, err := fsys.CreateTemp(missing, "x*")
			if f != nil {
				t.Errorf("CreateTemp returned the file %v with the error %v", f, err)
			}
			return err
		}, true},
		{"rename a missing file", func() error { return fsys.Rename(missing, filepath.Join(dir, "y")) }, true},
		{"remove a missing file", func() error { return fsys.Remove(missing) }, true},
		{"stat a missing file", func() error { _, err := fsys.Stat(missing); return err }, true},
		{"open a missing file", func() error {
			f, err := fsys.OpenWrite(context.Background(), missing) // never creates it
			if f != nil {
				t.Errorf("OpenWrite returned the file %v with the error %v", f, err)
			}
			return err
		}, true},
		// Where directories cannot be synced SyncDir does nothing.
		{"sync a missing directory", func() error { return fsys.SyncDir(missing) }, canSyncDir},
		{"sync a directory", func() error { return fsys.SyncDir(dir) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			if !tt.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
				t.Fatalf("error %v, want one that the file does not exist, naming %s", err, missing)
			}
		})
	}
}

// OpenWrite writes an existing file in place, truncated.
func TestOSOpenWrite(t *testing.T) {
	name := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(name, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OS{}.OpenWrite(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("J")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(name); err != nil || string(b) != "J" {
		t.Errorf("file holds %q (%v), want J", b, err)
	}
}
