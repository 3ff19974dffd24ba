package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"

	"github.com/ssnmf/ssnmf/cluster"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/model"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/checkpoint"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/store/tilefile"
)

// dump prints a work-directory matrix, a graph's CSR file, a checkpoint, a
// tile file or a block file of -engine slurm's run directory for debugging, telling them apart by their first bytes.
func dump(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ssnmf dump", flag.ContinueOnError)
	rows := fs.Int("rows", 10, "number of matrix rows to print")
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("dump: want exactly one FILE, have %d arguments", len(pos))
	}
	if checkOnly(ctx) {
		return nil
	}
	name := pos[0]
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		return model.Dump(stdout, filepath.Join(name, model.FileName), *rows)
	} else if err == nil && !st.Mode().IsRegular() {
		// Its magic would be read, and the file opened again past it.
		return usageError{input.RequireFile(name, "dump reads a file at the offsets its header gives")}
	}
	head := make([]byte, 8)
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	n, _ := io.ReadFull(f, head)
	f.Close()
	switch head = head[:n]; {
	case bytes.HasPrefix(head, []byte("SSNMFCKP")):
		return checkpoint.Dump(stdout, name)
	case bytes.HasPrefix(head, []byte("ARROW1")):
		return tilefile.Dump(stdout, name)
	case bytes.HasPrefix(head, []byte("SSNMFCSR")):
		return graph.DumpFile(stdout, name, *rows)
	case bytes.HasPrefix(head, []byte(model.Magic)):
		return model.Dump(stdout, name, *rows)
	case bytes.HasPrefix(head, []byte(cluster.Magic)):
		return cluster.Dump(stdout, name)
	case bytes.HasPrefix(head, []byte(store.MatrixMagic)):
		return store.DumpMatrix(stdout, name, *rows)
	}
	return usagef("dump: %s begins with %q, not a file dump reads: a work-directory matrix (%s), checkpoint (SSNMFCKP), tile file (ARROW1), graph (SSNMFCSR) or block file (%s)",
		name, head, store.MatrixMagic, cluster.Magic)
}
