// Package diskio measures the bytes a process reads from and writes to
// storage, and splits them into the phases of a run.
//
// Linux counts, for each process, the bytes it caused to be fetched from
// storage (read_bytes in /proc/self/io) and sent to it (write_bytes). Both
// include the pages of memory-mapped files: a page fault that reads a page
// of a mapped file counts as read, a page the process dirties counts as
// written when it is dirtied, whichever thread later writes it back. Reads
// that the page cache serves are not counted, so the figures are what the
// disk (or the network file system) had to deliver: for a run whose data
// fit in memory they stay near the size of its input, for one that runs
// out of core they show how often it went back to the disk.
//
// Where /proc/self/io does not exist (other systems, or a kernel without
// task I/O accounting), Read reports false and a Meter records nothing.
package diskio

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Counts are the process's storage I/O totals since it started.
type Counts struct {
	Read    int64 // bytes fetched from storage (read_bytes)
	Written int64 // bytes sent to storage, less those whose write was cancelled by truncation (write_bytes - cancelled_write_bytes)
}

// Sub returns c - o.
func (c Counts) Sub(o Counts) Counts {
	return Counts{Read: c.Read - o.Read, Written: c.Written - o.Written}
}

// procFile is where Linux keeps the counters of the calling process.
const procFile = "/proc/self/io"

// Read returns the process's counts now, and whether they could be read.
func Read() (Counts, bool) {
	b, err := os.ReadFile(procFile)
	if err != nil {
		return Counts{}, false
	}
	return parse(b)
}

// parse reads the counts from the text of /proc/self/io: lines of
// "name: value". It reports false unless read_bytes and write_bytes are
// both there.
func parse(b []byte) (Counts, bool) {
	var c Counts
	var cancelled int64
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, val, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		v, err := strconv.ParseInt(string(bytes.TrimSpace(val)), 10, 64)
		if err != nil || v < 0 {
			continue
		}
		switch string(name) {
		case "read_bytes":
			c.Read, found = v, found+1
		case "write_bytes":
			c.Written, found = v, found+1
		case "cancelled_write_bytes":
			cancelled = v
		}
	}
	if found != 2 {
		return Counts{}, false
	}
	c.Written = max(c.Written-cancelled, 0)
	return c, true
}

// Phase is the I/O and the time of one phase of a run.
type Phase struct {
	Name    string  `json:"phase"`
	Seconds float64 `json:"seconds"`
	Read    int64   `json:"read_bytes"`
	Written int64   `json:"written_bytes"`
}

// A Meter splits a run into phases: each call of End closes the phase
// that began at the last call (or at Start) and records its bytes and
// seconds. The zero Meter, or one where the counters cannot be read,
// records nothing and ends phases with zero counts. A Meter is not safe
// for concurrent use.
type Meter struct {
	ok     bool
	last   Counts
	at     time.Time
	phases []Phase
}

// Start returns a Meter whose first phase begins now.
func Start() *Meter {
	c, ok := Read()
	return &Meter{ok: ok, last: c, at: time.Now()}
}

// OK reports whether the meter reads the counters.
func (m *Meter) OK() bool { return m != nil && m.ok }

// End closes the phase that began at the previous End (or at Start),
// names it, records it and returns it. Without counters, it returns the
// phase with its seconds and records nothing.
func (m *Meter) End(name string) Phase {
	if m == nil {
		return Phase{Name: name}
	}
	now := time.Now()
	p := Phase{Name: name, Seconds: now.Sub(m.at).Seconds()}
	m.at = now
	if !m.ok {
		return p
	}
	c, ok := Read()
	if !ok {
		return p
	}
	d := c.Sub(m.last)
	m.last = c
	p.Read, p.Written = d.Read, d.Written
	m.phases = append(m.phases, p)
	return p
}

// Phases returns the phases recorded so far, in order.
func (m *Meter) Phases() []Phase {
	if m == nil {
		return nil
	}
	return m.phases
}

// Total returns the sums of the phases recorded so far.
func (m *Meter) Total() Phase {
	t := Phase{Name: "total"}
	for _, p := range m.Phases() {
		t.Seconds += p.Seconds
		t.Read += p.Read
		t.Written += p.Written
	}
	return t
}

// String formats the phase as "NAME: read SIZE, wrote SIZE in S s".
func (p Phase) String() string {
	return fmt.Sprintf("%s: read %s, wrote %s in %.1fs", p.Name, Size(p.Read), Size(p.Written), p.Seconds)
}

// Size formats a byte count with a decimal unit: "0 B", "512 B", "1.5 kB",
// "23 MB", "2.83 TB", three significant digits at most.
func Size(b int64) string {
	const units = "kMGTPE"
	if b < 1000 && b > -1000 {
		return fmt.Sprintf("%d B", b)
	}
	v, u := float64(b), -1
	for (v >= 999.5 || v <= -999.5) && u < len(units)-1 {
		v /= 1000
		u++
	}
	return fmt.Sprintf("%.3g %cB", v, units[u])
}
