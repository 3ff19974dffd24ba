package model

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/ssnmf/ssnmf/store"
)

// Model is a saved clustering, opened read-only from its directory: its
// file is memory-mapped, so that many processes may open the same model
// at once, without a lock, and share its pages.
type Model struct {
	meta Meta
	a    Arrays
	path string
	data []byte // the mapping; nil for a model decoded from bytes
	f    *os.File
	st   os.FileInfo // f when it was opened, for Unchanged
}

// Open opens the model in the directory dir (written by Save, as ssnmf
// solve -model does), checking its format version and every checksum.
// Errors name the file.
func Open(dir string) (*Model, error) {
	path := filepath.Join(dir, FileName)
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		path = dir // the model file itself
	}
	// Checked before the open, which would wait for a writer of a named pipe.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("model %s: is a %s, not a model file", path, fileKind(st.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	m, err := openMapped(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return m, nil
}

// openMapped maps and decodes the model file f named path.
func openMapped(f *os.File, path string) (m *Model, err error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if st.Size() < headerFixed || st.Size() > 1<<46 {
		return nil, fmt.Errorf("model %s: %d bytes, not a model file", path, st.Size())
	}
	data, err := store.MapReadOnly(f, int(st.Size()))
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			store.UnmapReadOnly(data)
		}
	}()
	defer store.CatchFault("model "+path, f, data, &err)() // cut short while decoded
	meta, a, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	return &Model{meta: *meta, a: *a, path: path, data: data, f: f, st: st}, nil
}

// Unchanged reports an error naming the file if the model's file was
// written to since Open (its length or modification time differ): a copy
// over the file while a predict read it, which may have mixed the two
// models' bytes without a fault. A model replaced by renaming a new one
// into place (as solve -model does) is not a change: the open file is
// still the old one.
func (m *Model) Unchanged() error {
	if m.f == nil {
		return nil
	}
	st, err := m.f.Stat()
	if err != nil {
		return fmt.Errorf("model %s: %w", m.path, err)
	}
	if st.Size() != m.st.Size() || !st.ModTime().Equal(m.st.ModTime()) {
		return fmt.Errorf("model %s: the file was written to while in use (%d bytes modified %s, was %d bytes modified %s): its memberships may mix two models; keep it unchanged while a predict reads it, and run again",
			m.path, st.Size(), st.ModTime().Format(time.RFC3339Nano), m.st.Size(), m.st.ModTime().Format(time.RFC3339Nano))
	}
	return nil
}

// fileKind names the kind of a file that is not a regular file.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// Close unmaps the model; it must not be used after.
func (m *Model) Close() error {
	if m.data == nil {
		return nil
	}
	err := store.UnmapReadOnly(m.data)
	m.data, m.a = nil, Arrays{}
	if m.f != nil {
		err = errors.Join(err, m.f.Close())
		m.f = nil
	}
	return err
}

// Meta returns the model's settings.
func (m *Model) Meta() Meta { return m.meta }

// Path returns the model's file.
func (m *Model) Path() string { return m.path }

// K returns the number of clusters, the columns of a prediction.
func (m *Model) K() int { return m.meta.K }

// Features returns the names of the feature columns a new row must have,
// in order.
func (m *Model) Features() []string { return m.meta.Features }

// Save writes the model of meta and a into the directory dir, atomically:
// it is built in a new directory beside dir and renamed into place, so
// that a reader sees the old model or the new one, never a part (on Linux
// an existing model directory is exchanged with the new one in one step;
// elsewhere it is moved aside first). An existing dir that is not a
// model directory is refused.
func Save(dir string, meta *Meta, a *Arrays) error {
	dir = filepath.Clean(dir)
	if err := CanSave(dir); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return fmt.Errorf("model directory %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	f, err := os.Create(filepath.Join(tmp, FileName))
	if err != nil {
		return err
	}
	err = encode(f, meta, a)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o755)
	}
	if err == nil {
		err = syncDir(tmp)
	}
	if err == nil {
		err = replaceDir(tmp, dir)
	}
	if err == nil {
		err = syncDir(filepath.Dir(dir))
	}
	if err != nil {
		return fmt.Errorf("model directory %s: %w", dir, err)
	}
	return nil
}

// CanSave reports, as an error, why Save could not write a model at dir:
// it is a symbolic link, or exists and is not a directory, or holds
// anything but a model file, or does not exist and neither does the
// directory it would go in (Save makes dir, not its parents).
// A command checks it before the work whose model it saves.
func CanSave(dir string) error {
	dir = filepath.Clean(dir)
	if st, err := os.Lstat(dir); err == nil && st.Mode()&os.ModeSymlink != 0 {
		to, _ := os.Readlink(dir)
		return fmt.Errorf("model directory %s: is a symbolic link (to %s), which the model would replace; give the directory itself, or a new one", dir, to)
	}
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("model directory %s: exists and is not a directory", dir)
		}
		if err := isModelDir(dir); err != nil {
			return fmt.Errorf("model directory %s: %w; give a new directory or a model's", dir, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("model directory %s: %w", dir, err)
	} else if st, err := os.Stat(filepath.Dir(dir)); err != nil {
		return fmt.Errorf("model directory %s: the directory it goes in: %w", dir, err)
	} else if !st.IsDir() {
		return fmt.Errorf("model directory %s: the directory it goes in, %s, is not a directory", dir, filepath.Dir(dir))
	}
	return nil
}

// isModelDir reports, as an error, whether dir is not empty and holds
// anything but a model file.
func isModelDir(dir string) error {
	es, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range es {
		if e.Name() != FileName {
			return fmt.Errorf("holds %s, which is no part of a model", e.Name())
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && runtime.GOOS != "windows" {
		return err
	}
	return nil
}
