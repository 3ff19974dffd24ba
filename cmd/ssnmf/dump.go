package main

import (
	"flag"
	"io"

	"github.com/ssnmf/ssnmf/store"
)

// dump prints a work-directory matrix file for debugging.
func dump(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ssnmf dump", flag.ContinueOnError)
	rows := fs.Int("rows", 10, "number of rows to print")
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("dump: want exactly one FILE, have %d arguments", len(pos))
	}
	return store.DumpMatrix(stdout, pos[0], *rows)
}
