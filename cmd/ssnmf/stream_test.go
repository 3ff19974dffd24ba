//go:build unix

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/ssnmf/ssnmf/model"
	"github.com/ssnmf/ssnmf/store/input"
)

// feed returns a path from which data is read as from a pipe: kind "pipe"
// is /dev/fd/N of an os.Pipe, as /dev/stdin is when the input is piped;
// "fifo" is a named pipe in dir. A goroutine writes data and closes its
// end; done, called after the read, releases the pipe and waits for it.
func feed(t *testing.T, dir, kind string, data []byte) (path string, done func()) {
	t.Helper()
	written := make(chan struct{})
	switch kind {
	case "pipe":
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer close(written)
			w.Write(data) // EPIPE when the reader refuses the input unread
			w.Close()
		}()
		return fmt.Sprintf("/dev/fd/%d", r.Fd()), func() { r.Close(); <-written }
	case "fifo":
		path = filepath.Join(dir, fmt.Sprintf("fifo%d", len(dir)+len(data)))
		os.Remove(path)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		go func() {
			defer close(written)
			w, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for the reader
			if err != nil {
				return
			}
			w.Write(data)
			w.Close()
		}()
		return path, func() {
			// A reader that never opened the FIFO leaves the writer
			// waiting in its open: open it without blocking to let it
			// go, and drain what it writes.
			if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
				io.Copy(io.Discard, r)
				<-written
				r.Close()
			} else {
				<-written
			}
		}
	}
	t.Fatalf("unknown kind %q", kind)
	return "", nil
}

// arrowFileToStream writes the record batches of the Arrow IPC file from
// as an IPC stream at to.
func arrowFileToStream(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	fr, err := ipc.NewFileReader(in)
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(fr.Schema()))
	for i := range fr.NumRecords() {
		rec, err := fr.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// streamData writes one data set in every format into dir and returns the
// paths by format name: csv, csv.gz, arrow (an IPC file), arrows (an IPC
// stream) and parquet.
func streamData(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, ext := range []string{"csv", "csv.gz", "arrow", "parquet"} {
		files[ext] = filepath.Join(dir, "d."+ext)
		runGen(t, "-n", "300", "-p", "2", "-k", "3", "-seed", "1", "-q", "-o", files[ext])
	}
	files["arrows"] = filepath.Join(dir, "d.arrows")
	arrowFileToStream(t, files["arrow"], files["arrows"])
	return files
}

// TestStreamInputs runs solve, graph and predict on inputs read from a
// pipe (/dev/fd/N, as /dev/stdin) and from a FIFO, in every format: each
// writes the same bytes as from the file, and Parquet, which is read from
// its end, is refused with one line that names the input and says to write
// it to a file. The format sniff used to read the first bytes and open the
// input again: a piped CSV lost its first 6 bytes (n = 299 of 300, and the
// first row became the header), and a FIFO waited for a second writer.
func TestStreamInputs(t *testing.T) {
	dir := t.TempDir()
	files := streamData(t, dir)
	mdir := filepath.Join(dir, "model")
	want := map[string][]byte{}
	commands := map[string]func(in, out string) []string{
		"solve": func(in, out string) []string {
			return []string{"solve", "-q", "-k", "3", "-seed", "0", "-out", out, in}
		},
		"graph":   func(in, out string) []string { return []string{"graph", "-q", "-o", out, in} },
		"predict": func(in, out string) []string { return []string{"predict", "-q", "-model", mdir, "-out", out, in} },
	}
	if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "3", "-seed", "0", "-model", mdir, files["csv"]); code != exitOK {
		t.Fatalf("solve -model: exit %d: %s", code, stderr)
	}
	for _, name := range []string{"solve", "graph", "predict"} {
		out := filepath.Join(dir, name+".csv")
		if code, _, stderr := ssnmf(t, commands[name](files["csv"], out)...); code != exitOK {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		want[name], _ = os.ReadFile(out)
	}
	for _, kind := range []string{"pipe", "fifo"} {
		for _, format := range []string{"csv", "csv.gz", "arrow", "arrows", "parquet"} {
			for _, name := range []string{"solve", "graph", "predict"} {
				if name != "solve" && format != "csv" && format != "parquet" {
					continue // the commands share the reading; solve covers every format
				}
				t.Run(kind+"/"+format+"/"+name, func(t *testing.T) {
					data, err := os.ReadFile(files[format])
					if err != nil {
						t.Fatal(err)
					}
					in, done := feed(t, dir, kind, data)
					out := filepath.Join(dir, kind+"."+format+"."+name+".csv")
					code, _, stderr := ssnmf(t, commands[name](in, out)...)
					done()
					if format == "parquet" {
						wantErr := fmt.Sprintf("ssnmf: %s is a pipe, which can be read only once, front to back, but Parquet is read from its footer, at the end of the file: write it to a file first and give that file\n", in)
						if code != exitUsage || stderr != wantErr {
							t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitUsage, wantErr)
						}
						return
					}
					if code != exitOK {
						t.Fatalf("exit %d: %s", code, stderr)
					}
					if got, _ := os.ReadFile(out); !bytes.Equal(got, want[name]) {
						t.Fatalf("output from the %s differs from the file's (%d bytes, want %d)", kind, len(got), len(want[name]))
					}
				})
			}
		}
	}
}

// TestDevStdin runs solve as a child process with its input on /dev/stdin,
// a pipe, as in "cat d.csv | ssnmf solve ... /dev/stdin": CSV and an Arrow
// IPC stream give the file's memberships.
func TestDevStdin(t *testing.T) {
	dir := t.TempDir()
	files := streamData(t, dir)
	want := filepath.Join(dir, "want.csv")
	if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "3", "-seed", "0", "-out", want, files["csv"]); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	wantBytes, _ := os.ReadFile(want)
	for _, format := range []string{"csv", "arrows"} {
		data, err := os.ReadFile(files[format])
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, format+".out.csv")
		cmd := command("solve", "-q", "-k", "3", "-seed", "0", "-out", out, "/dev/stdin")
		cmd.Stdin = bytes.NewReader(data) // not an *os.File: exec makes a pipe
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s on /dev/stdin: %v: %s", format, err, stderr.String())
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, wantBytes) {
			t.Errorf("%s on /dev/stdin: memberships differ from the file's", format)
		}
	}
}

// TestStreamAffinity: an -affinity file must be a regular file (a tile
// file is mapped; an edge list is told from one by its first bytes), so a
// pipe is refused with one line; Detect refuses it without reading it.
func TestStreamAffinity(t *testing.T) {
	dir := t.TempDir()
	edges := filepath.Join(dir, "e.csv")
	if code, _, stderr := ssnmf(t, "graph", "-q", "-o", edges, filepath.Join("testdata", "small.csv")); code != exitOK {
		t.Fatalf("graph: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(edges)
	if err != nil {
		t.Fatal(err)
	}
	in, done := feed(t, dir, "pipe", data)
	if _, err := input.Detect(in); err == nil || !strings.Contains(err.Error(), "is a pipe") {
		t.Errorf("Detect of a pipe: error %v, want one saying it is a pipe", err)
	}
	code, _, stderr := ssnmf(t, "solve", "-q", "-k", "2", "-affinity", in, filepath.Join("testdata", "small.csv"))
	done()
	wantErr := "ssnmf: -affinity: " + in + " is a pipe, which can be read only once, front to back, but a tile file is mapped, and an edge list is told from one by its first bytes: write it to a file first and give that file\n"
	if code == exitOK || stderr != wantErr {
		t.Errorf("exit %d, stderr %q; want %q", code, stderr, wantErr)
	}
}

// TestStreamDump: dump reads its file at offsets, so a pipe is refused
// with one line. It used to read the magic, open the pipe again and print
// thousands of lines of sections read from the wrong bytes.
func TestStreamDump(t *testing.T) {
	dir := t.TempDir()
	mdir := filepath.Join(dir, "m")
	if code, _, stderr := ssnmf(t, "solve", "-q", "-model", mdir, filepath.Join("testdata", "small.csv")); code != exitOK {
		t.Fatalf("solve: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(mdir, model.FileName))
	if err != nil {
		t.Fatal(err)
	}
	in, done := feed(t, dir, "pipe", data)
	code, stdout, stderr := ssnmf(t, "dump", in)
	done()
	wantErr := "ssnmf: " + in + " is a pipe, which can be read only once, front to back, but dump reads a file at the offsets its header gives: write it to a file first and give that file\n"
	if code != exitUsage || stderr != wantErr || stdout != "" {
		t.Errorf("exit %d, stdout %d bytes, stderr %q; want exit %d, nothing on stdout and %q", code, len(stdout), stderr, exitUsage, wantErr)
	}
}
