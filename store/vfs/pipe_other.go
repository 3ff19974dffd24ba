//go:build !unix

package vfs

import (
	"context"
	"os"
)

// openPipe opens the named pipe name for writing; where the open cannot
// be made nonblocking it waits for the reader, whatever ctx.
func openPipe(_ context.Context, name string) (File, error) {
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}
