package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/ssnmf/ssnmf/cluster"
	"github.com/ssnmf/ssnmf/store/vfs"
)

// worker is the worker command: one task of a job step that solve -engine
// slurm launches with srun. Its task index and count come from Slurm's
// environment unless the flags give them.
func worker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ssnmf worker", "Usage: ssnmf worker -run DIR -pass N [-task I -tasks T] [-workers W]\n\n"+
		"Does task I of T of pass N of the run directory DIR: the rows of its part of a\n"+
		"P·W or P·S pass, of a kNN search, or of a round of leaf pairs of the\n"+
		"approximate one, written to DIR/pass-N.part-I under a\n"+
		"temporary name and renamed. A part already there for the same input is kept, so\n"+
		"running a task again is harmless. solve -engine slurm launches it with srun;\n"+
		"it is not meant to be run by hand, but for debugging.")
	run := fs.String("run", "", "the run directory `DIR` (the work directory's cluster/)")
	pass := fs.Uint64("pass", 0, "the pass `N`")
	task := fs.Int("task", envIntOr("SLURM_PROCID", -1), "the task `I` ($SLURM_PROCID under srun)")
	tasks := fs.Int("tasks", envIntOr("SLURM_STEP_NUM_TASKS", envInt("SLURM_NTASKS")), "the tasks `T` of the step ($SLURM_STEP_NUM_TASKS under srun)")
	workers := fs.Int("workers", envIntOr("SLURM_CPUS_PER_TASK", runtime.GOMAXPROCS(0)), "goroutines ($SLURM_CPUS_PER_TASK under srun, else GOMAXPROCS)")
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usagef("worker takes no arguments, have %q", pos)
	case *run == "" || *pass == 0:
		return usagef("worker needs -run DIR and -pass N")
	case *tasks < 1 || *task < 0 || *task >= *tasks:
		return usagef("worker: task %d of %d: give -task and -tasks, or run it under srun", *task, *tasks)
	case *workers < 1:
		return usagef("-workers must be >= 1, have %d", *workers)
	}
	if checkOnly(ctx) {
		return nil
	}
	d, err := cluster.Open(*run)
	if err != nil {
		return err
	}
	if note := d.KernelNote(); note != "" {
		fmt.Fprintln(stderr, "ssnmf worker: "+note)
	}
	return cluster.Work(ctx, vfs.OS{}, d, *pass, *task, *tasks, *workers)
}
