package store

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Reserve makes the open file f, empty or shorter, size bytes long with
// every byte allocated on its file system, so that a mapping of it can
// never fault for want of space: a file grown by Truncate is sparse, and a
// store into a page that a full disk cannot back ends the program with
// SIGBUS. Where the file system can (fallocate on Linux) the space is
// reserved without writing it; elsewhere the zeros are written out. A full
// file system is an error naming the file and the bytes it needed.
func Reserve(f *os.File, size int64) error {
	err := allocate(f, size)
	if errors.Is(err, errors.ErrUnsupported) {
		err = writeZeros(f, size)
	}
	if err != nil {
		return fmt.Errorf("%s: reserving the %d bytes (%s) the file needs: %w", f.Name(), size, humanBytes(size), err)
	}
	return nil
}

// writeZeros writes zeros from the end of f up to size bytes.
func writeZeros(f *os.File, size int64) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	zero := make([]byte, 1<<20)
	w := io.NewOffsetWriter(f, st.Size())
	for left := size - st.Size(); left > 0; {
		k, err := w.Write(zero[:min(left, int64(len(zero)))])
		if err != nil {
			return err
		}
		left -= int64(k)
	}
	return nil
}

// humanBytes is b in the largest binary unit that keeps it at least 1.
func humanBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	v, i := float64(b), -1
	for v >= unit && i < 5 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[i])
}
