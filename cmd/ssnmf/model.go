package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ssnmf/ssnmf/model"
	"github.com/ssnmf/ssnmf/solver"
	"github.com/ssnmf/ssnmf/store"
)

// checkModel refuses a -model directory that holds other files (the flag
// table refuses -model with P read from a file, which has no features to
// measure a new row against).
func (c *config) checkModel() error {
	if c.run.Model == "" {
		return nil
	}
	if err := model.CanSave(c.run.Model); err != nil {
		return usagef("-model: %v", err)
	}
	return nil
}

// checkModelPaths refuses, before any work, a -model directory that is
// the work directory or holds it, or that holds another output: a model
// directory holds the model alone, which model.Save would refuse only
// after the solve (checkFiles refuses a -model that is an input or the
// same path as another output).
func (c *config) checkModelPaths() error {
	if c.run.Model == "" {
		return nil
	}
	if c.run.Workdir != "" && store.Within(c.run.Model, c.run.Workdir) {
		return usagef("the work directory %s is -model %s or inside it; a model directory holds the model alone: give each its own directory", c.run.Workdir, c.run.Model)
	}
	for _, o := range c.outputs() {
		if o.Name != "-model" && o.Path != "" && o.Path != store.StdoutPath && store.Within(c.run.Model, o.Path) {
			return usagef("%s %s is inside the -model directory %s, which holds the model alone; write it elsewhere", o.Name, o.Path, c.run.Model)
		}
	}
	return nil
}

// saveModel writes the model of the solve r, W (n×k) in P's order, to
// the directory of -model, atomically (package model).
func (c *config) saveModel(ctx context.Context, r *solver.Run, stderr io.Writer) error {
	meta, err := r.SaveModel(ctx, c.run.Model, c.inputName())
	if err != nil {
		return fmt.Errorf("-model: %w", err)
	}
	if !c.quiet {
		fmt.Fprintf(stderr, "ssnmf: model saved in %s (n=%d p=%d k=%d, %s affinity); assign new rows with: ssnmf predict -model %s INPUT -out FILE\n",
			c.run.Model, meta.N, meta.P, meta.K, meta.Affinity, c.run.Model)
	}
	return nil
}
