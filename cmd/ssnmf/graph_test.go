package main

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// TestStoppable checks that the edge list's writer writes until its
// context is done, and then fails with the context's cause.
func TestStoppable(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	var b bytes.Buffer
	w := stoppable{ctx, &b}
	if n, err := w.Write([]byte("edges")); n != 5 || err != nil || b.String() != "edges" {
		t.Fatalf("a write before the stop: %d, %v, %q", n, err, b.String())
	}
	cause := errors.New("stopped by a signal")
	cancel(cause)
	if n, err := w.Write([]byte("more")); n != 0 || !errors.Is(err, cause) || b.String() != "edges" {
		t.Errorf("a write after the stop: %d, %v, %q; want 0 and the cause, nothing written", n, err, b.String())
	}
}
