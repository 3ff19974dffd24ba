package cluster

import (
	"context"
	"fmt"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/vfs"
)

// Work does task task of tasks of a pass of the run directory d: it reads
// the pass's input, computes the task's share (a part of the rows) and
// writes it to the task's part file, atomically through fsys, on workers
// goroutines (any number gives the same bits). A part already there for
// the same input is kept, so the engine may run a task again at no harm;
// an input of another run or another pass is refused.
func Work(ctx context.Context, fsys vfs.FS, d *Dir, pass uint64, task, tasks, workers int) error {
	if tasks < 1 || task < 0 || task >= tasks {
		return fmt.Errorf("task %d of %d", task, tasks)
	}
	in := d.InputPath(pass)
	ih, err := readHeader(in)
	if err != nil {
		return fmt.Errorf("pass %d: %w", pass, err)
	}
	if ih.Source != d.ID || ih.Pass != pass {
		return fmt.Errorf("%s: input of pass %d of run %016x, want pass %d of run %016x: %w", in, ih.Pass, ih.Source, pass, d.ID, errStale)
	}
	out := d.PartPath(pass, task)
	want := Header{Kind: ih.Kind.part(), Pass: pass, Task: uint32(task), Tasks: uint32(tasks), Source: ih.ID()}
	if h, _, err := readBlock(out, want.Kind); err == nil && h.Pass == want.Pass && h.Task == want.Task && h.Tasks == want.Tasks && h.Source == want.Source {
		return nil // done before
	}
	_, payload, err := readBlock(in, ih.Kind)
	if err != nil {
		return fmt.Errorf("pass %d: %w", pass, err)
	}
	n, k := d.Spec.N, int(ih.Cols)
	switch ih.Kind {
	case KNNInput:
		if d.Spec.Kernel != KNN {
			return fmt.Errorf("%s asks for a kNN search of a %s run", in, d.Spec.Kernel)
		}
		kp, err := graph.KNNRows(ctx, d.X, n, d.Spec.P, d.Spec.knnOptions(workers), task, tasks)
		if err != nil {
			return fmt.Errorf("pass %d task %d: %w", pass, task, err)
		}
		want.Rows, want.Cols = uint64(len(kp.Rows)), uint64(kp.M)
		_, err = writeBlock(fsys, out, want, store.AsBytes(kp.Rows), store.AsBytes(kp.Count), store.AsBytes(kp.Dist), store.AsBytes(kp.Index))
		return err
	case LeafRoundInput:
		if d.Spec.Kernel != KNN {
			return fmt.Errorf("%s asks for a kNN search of a %s run", in, d.Spec.Kernel)
		}
		r, err := leafRoundOf(ih, payload, d.Spec.BlockSize)
		if err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
		kp, err := graph.LeafRoundRows(ctx, d.X, n, d.Spec.P, d.Spec.knnOptions(workers), r, task, tasks)
		if err != nil {
			return fmt.Errorf("pass %d task %d: %w", pass, task, err)
		}
		want.Rows, want.Cols = uint64(len(kp.Rows)), uint64(kp.M)
		_, err = writeBlock(fsys, out, want, store.AsBytes(kp.Rows), store.AsBytes(kp.Count), store.AsBytes(kp.Dist), store.AsBytes(kp.Index))
		return err
	case MulInput, MulSumsInput, OneHotInput:
		if d.Spec.Kernel != Gaussian {
			return fmt.Errorf("%s asks for a product pass of a %s run", in, d.Spec.Kernel)
		}
		e, err := d.Spec.engine(d.X, workers)
		if err != nil {
			return err
		}
		r0, r1 := e.PartRows(task, tasks)
		dst := make([]float64, (r1-r0)*k)
		var rowSums, frob []float64
		switch ih.Kind {
		case OneHotInput:
			if len(payload) != 4*n {
				return fmt.Errorf("%s: %d bytes of assignment, want %d", in, len(payload), 4*n)
			}
			err = e.MulOneHotPart(ctx, task, tasks, dst, int32s(payload), k)
		default:
			if len(payload) != 8*n*k {
				return fmt.Errorf("%s: %d bytes of W, want %d×%d values", in, len(payload), n, k)
			}
			if ih.Kind == MulSumsInput {
				rowSums, frob = make([]float64, r1-r0), make([]float64, e.BlockNorms(task, tasks))
			}
			err = e.MulPart(ctx, task, tasks, dst, float64s(payload), k, rowSums, frob)
		}
		if err != nil {
			return fmt.Errorf("pass %d task %d: %w", pass, task, err)
		}
		want.Rows, want.Cols = uint64(r1-r0), uint64(k)
		_, err = writeBlock(fsys, out, want, store.AsBytes(dst), store.AsBytes(rowSums), store.AsBytes(frob))
		return err
	}
	return fmt.Errorf("%s holds a %v, not an input", in, ih.Kind)
}
