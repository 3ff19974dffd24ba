package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// RunDir is the name of the run directory of a solve's coordinator in
// its work directory.
const RunDir = "cluster"

// NewSrun returns the coordinator of a solve whose work directory is
// workdir, with tasks tasks a step and up to retries retries of a failed
// one: its run directory is RunDir there, as an absolute path, which the
// tasks on other nodes see, and its steps are launched by srun running
// this binary as the worker. The caller sets Log, FS and Kernel.
func NewSrun(workdir string, tasks, retries int) (*Coordinator, error) {
	dir, err := filepath.Abs(workdir)
	if err != nil {
		return nil, err
	}
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("the path of this binary, for the tasks: %w", err)
	}
	return &Coordinator{Path: filepath.Join(dir, RunDir), Tasks: tasks, Retries: retries, Launcher: Srun{Binary: bin}}, nil
}

// Srun launches a step with Slurm's srun, inside the allocation (salloc or
// sbatch) that the coordinator runs in: srun starts the tasks on the
// allocation's nodes, gives each its index in SLURM_PROCID, and exits when
// all have ended, non-zero if any failed, after killing the others
// (--kill-on-bad-exit).
type Srun struct {
	// Binary is the ssnmf executable, at a path that every node sees.
	Binary string
	// Command is srun itself; "srun" if empty.
	Command string
	// Args are more options of srun, such as --cpus-per-task.
	Args []string
}

// Launch runs the step and waits for srun to exit.
func (s Srun) Launch(ctx context.Context, st Step) error {
	cmd := s.Command
	if cmd == "" {
		cmd = "srun"
	}
	args := []string{"--ntasks=" + strconv.Itoa(st.Tasks), "--kill-on-bad-exit=1", "--job-name=" + st.Name,
		"--output=" + st.Stderr} // stderr goes with stdout
	// Since Slurm 22.05 srun does not take --cpus-per-task from the
	// allocation; a task's goroutines follow it.
	if c := os.Getenv("SLURM_CPUS_PER_TASK"); c != "" {
		args = append(args, "--cpus-per-task="+c)
	}
	args = append(args, s.Args...)
	args = append(args, s.Binary, "worker", "-run", st.Dir, "-pass", strconv.FormatUint(st.Pass, 10))
	var out bytes.Buffer
	c := exec.CommandContext(ctx, cmd, args...)
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		if msg := strings.TrimSpace(out.String()); msg != "" {
			lines := strings.Split(msg, "\n")
			return fmt.Errorf("%s: %w: %s", cmd, err, strings.TrimSpace(lines[len(lines)-1]))
		}
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return nil
}
