//go:build unix

package vfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// pipePoll is how often openPipe tries again to open a named pipe that
// has no reader.
const pipePoll = 50 * time.Millisecond

// openPipe opens the named pipe name for writing without blocking in the
// open: with O_NONBLOCK it fails (ENXIO) until a reader has the pipe open,
// so it tries again every pipePoll until one has, or until ctx is done.
// The file is nonblocking, written through the runtime's poller.
func openPipe(ctx context.Context, name string) (File, error) {
	t := time.NewTicker(pipePoll)
	defer t.Stop()
	for {
		f, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.ENXIO) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("open %s: gave up waiting for a reader of the named pipe: %w", name, context.Cause(ctx))
		case <-t.C:
		}
	}
}
