package store

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

// RunFiles are the files of an out-of-core permutation: a scan of the
// input in its order appends each record to the file of the run of the
// output it belongs to, and each run is then assembled in memory from its
// file alone, so that the output is written in order, once, and the input
// read once, whatever the number of runs (PermuteRows; graph's Renumber).
// The files are scratch in a directory, removed by Close.
type RunFiles struct {
	files []*os.File
	out   []*bufio.Writer
}

// NewRunFiles returns runs empty files in dir, each written through a
// buffer of a share of bufferBytes (64 KiB to 1 MiB a file).
func NewRunFiles(dir string, runs, bufferBytes int) (*RunFiles, error) {
	rf := &RunFiles{out: make([]*bufio.Writer, runs)}
	size := min(1<<20, max(64<<10, bufferBytes/max(1, runs)))
	for r := range runs {
		f, err := os.CreateTemp(dir, "runs-*.tmp")
		if err != nil {
			rf.Close()
			return nil, fmt.Errorf("store: run files: %w", err)
		}
		rf.files, rf.out[r] = append(rf.files, f), bufio.NewWriterSize(f, size)
	}
	return rf, nil
}

// Append appends b to the file of run r.
func (rf *RunFiles) Append(r int, b []byte) error {
	if _, err := rf.out[r].Write(b); err != nil {
		return fmt.Errorf("store: run files: %s: %w", rf.files[r].Name(), err)
	}
	return nil
}

// Rewind ends the appends: every file is written out and read back from
// its start by Reader.
func (rf *RunFiles) Rewind() error {
	for r, w := range rf.out {
		if err := w.Flush(); err != nil {
			return fmt.Errorf("store: run files: %s: %w", rf.files[r].Name(), err)
		}
		if _, err := rf.files[r].Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("store: run files: %s: %w", rf.files[r].Name(), err)
		}
	}
	return nil
}

// Reader returns the contents of run r's file, after Rewind, and its name
// for errors.
func (rf *RunFiles) Reader(r int) (io.Reader, string) {
	return bufio.NewReaderSize(rf.files[r], 1<<20), rf.files[r].Name()
}

// Close closes and removes the files. It may be called more than once.
func (rf *RunFiles) Close() {
	for _, f := range rf.files {
		f.Close()
		os.Remove(f.Name())
	}
	rf.files = nil
}
