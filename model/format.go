package model

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"unsafe"

	"github.com/ssnmf/ssnmf/store"
)

// The model file's constants: see the package doc for the layout.
const (
	// Magic begins a model file.
	Magic = "SSNMFMOD"
	// Version is the format version this build writes and reads.
	Version = 1
	// FileName is the model file's name in a model directory.
	FileName = "model.ssnmf"

	headerFixed = 16 // magic, version, section count
	entrySize   = 24 // kind, crc, offset, length
	maxSections = 64
)

// Section kinds, in the order they are written.
const (
	secMeta      = 1  // JSON of Meta
	secMean      = 2  // p float64: the standardization's means
	secStd       = 3  // p float64: its standard deviations (0: the feature is set to 0)
	secFeatures  = 4  // n×p float64: the training rows, standardized, in leaf order
	secW         = 5  // n×k float64: their memberships
	secGram      = 6  // k×k float64: WᵀW
	secSigma     = 7  // n float64: kNN: the self-tuning scale of each training row
	secReach     = 8  // n float64: kNN: the squared distance of its M-th neighbour
	secCentroids = 9  // leaves×p float64: the mean of each leaf's rows
	secLists     = 10 // n×M int32: kNN: each row's M nearest rows (itself first), by (d², row)
)

var sectionNames = map[uint32]string{secMeta: "meta", secMean: "mean", secStd: "std", secFeatures: "features",
	secW: "W", secGram: "gram", secSigma: "sigma", secReach: "reach", secCentroids: "centroids", secLists: "lists"}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Affinities a model holds.
const (
	KNN      = "knn"
	Gaussian = "gaussian"
)

// Meta is the model's settings: what the affinity of a new row needs
// besides the arrays.
type Meta struct {
	Affinity    string   `json:"affinity"` // KNN or Gaussian
	N           int      `json:"n"`        // training rows
	P           int      `json:"p"`        // features
	K           int      `json:"k"`        // clusters
	Features    []string `json:"features"` // the feature columns, in order
	Standardize bool     `json:"standardize"`
	// KNN: M, the weights ("self-tuning" or "connectivity"), the floor of
	// the self-tuning scales, and the factor of P.
	Neighbors  int     `json:"neighbors,omitempty"`
	Weights    string  `json:"weights,omitempty"`
	SigmaFloor float64 `json:"sigma_floor,omitempty"`
	Scale      float64 `json:"scale,omitempty"`
	// Gaussian: the bandwidth.
	Gamma float64 `json:"gamma,omitempty"`
	// Leaf is the rows of a leaf: leaf I is the rows [I·Leaf, (I+1)·Leaf).
	Leaf int `json:"leaf"`
	// Search is how the training graph's neighbours were found, and Input
	// and Method what was solved: for the record.
	Search string `json:"search,omitempty"`
	Input  string `json:"input,omitempty"`
	Method string `json:"method,omitempty"`
}

// Leaves returns the number of leaves, ⌈N/Leaf⌉.
func (m *Meta) Leaves() int { return (m.N + m.Leaf - 1) / m.Leaf }

// check validates the settings; the arrays are checked against them.
func (m *Meta) check() error {
	switch {
	case m.Affinity != KNN && m.Affinity != Gaussian:
		return fmt.Errorf("affinity %q, want %s or %s", m.Affinity, KNN, Gaussian)
	case m.N < 1 || m.P < 1 || m.K < 1 || m.Leaf < 1:
		return fmt.Errorf("n = %d, p = %d, k = %d, leaf = %d, want them >= 1", m.N, m.P, m.K, m.Leaf)
	case m.N > math.MaxInt32 || m.P > 1<<20 || m.K > 1<<16:
		return fmt.Errorf("n = %d, p = %d, k = %d: too large", m.N, m.P, m.K)
	case int64(m.N)*int64(m.P+m.K) > 1<<40:
		return fmt.Errorf("n·(p+k) = %d values: too large", int64(m.N)*int64(m.P+m.K))
	case len(m.Features) != m.P:
		return fmt.Errorf("%d feature names for p = %d", len(m.Features), m.P)
	case m.Affinity == KNN && (m.Neighbors < 1 || !(m.Scale > 0) || math.IsInf(m.Scale, 0)):
		return fmt.Errorf("kNN: %d neighbours and scale %v, want >= 1 and a finite value > 0", m.Neighbors, m.Scale)
	case m.Affinity == KNN && m.Weights != "self-tuning" && m.Weights != "connectivity":
		return fmt.Errorf("kNN weights %q, want self-tuning or connectivity", m.Weights)
	case m.Affinity == KNN && m.Weights == "self-tuning" && !(m.SigmaFloor > 0):
		return fmt.Errorf("self-tuning scales' floor %v, want > 0", m.SigmaFloor)
	case m.Affinity == Gaussian && (!(m.Gamma > 0) || math.IsInf(m.Gamma, 0)):
		return fmt.Errorf("gamma %v, want a finite value > 0", m.Gamma)
	}
	return nil
}

// Arrays are a model's arrays, in the order of Meta's leaves: the
// training rows as the affinity uses them (standardized) and their rows of
// W, row q of each being the same training row.
type Arrays struct {
	Mean, Std []float64 // p each; nil (or Std all 0) without standardization
	Features  []float64 // n×p
	W         []float64 // n×k
	Gram      []float64 // k×k, WᵀW
	Sigma     []float64 // n; kNN only
	Reach     []float64 // n; kNN only
	Centroids []float64 // leaves×p
	Lists     []int32   // n×M; kNN only
}

// sections returns the sections of a model in file order, with their
// expected lengths in float64s.
func sections(m *Meta, a *Arrays) []struct {
	kind uint32
	data []float64
	want int
} {
	type sec = struct {
		kind uint32
		data []float64
		want int
	}
	s := []sec{{secMean, a.Mean, m.P}, {secStd, a.Std, m.P}, {secFeatures, a.Features, m.N * m.P},
		{secW, a.W, m.N * m.K}, {secGram, a.Gram, m.K * m.K}}
	if m.Affinity == KNN {
		s = append(s, sec{secSigma, a.Sigma, m.N}, sec{secReach, a.Reach, m.N})
	}
	return append(s, sec{secCentroids, a.Centroids, m.Leaves() * m.P})
}

// hasLists reports whether the model has the lists section.
func (m *Meta) hasLists() bool { return m.Affinity == KNN }

// encode writes the model file of m and a to w.
func encode(w io.Writer, m *Meta, a *Arrays) error {
	if err := m.check(); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	meta, err := json.Marshal(m)
	if err != nil {
		return err
	}
	secs := sections(m, a)
	for _, s := range secs {
		if len(s.data) != s.want {
			return fmt.Errorf("model: section %s has %d values, want %d", sectionNames[s.kind], len(s.data), s.want)
		}
	}
	count := 1 + len(secs)
	if m.hasLists() {
		if len(a.Lists) != m.N*m.Neighbors {
			return fmt.Errorf("model: section lists has %d values, want %d", len(a.Lists), m.N*m.Neighbors)
		}
		count++
	}
	head := make([]byte, align8(headerFixed+entrySize*count+4))
	copy(head, Magic)
	binary.LittleEndian.PutUint32(head[8:], Version)
	binary.LittleEndian.PutUint32(head[12:], uint32(count))
	off := uint64(len(head))
	entry := func(i int, kind uint32, b []byte) {
		e := head[headerFixed+entrySize*i:]
		binary.LittleEndian.PutUint32(e, kind)
		binary.LittleEndian.PutUint32(e[4:], crc32.Checksum(b, castagnoli))
		binary.LittleEndian.PutUint64(e[8:], off)
		binary.LittleEndian.PutUint64(e[16:], uint64(len(b)))
		off += uint64(align8(len(b)))
	}
	entry(0, secMeta, meta)
	for i, s := range secs {
		entry(i+1, s.kind, store.AsBytes(s.data))
	}
	if m.hasLists() {
		entry(count-1, secLists, store.AsBytes(a.Lists))
	}
	tableEnd := headerFixed + entrySize*count
	binary.LittleEndian.PutUint32(head[tableEnd:], crc32.Checksum(head[:tableEnd], castagnoli))
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.Write(head)
	write := func(b []byte) {
		bw.Write(b)
		bw.Write(make([]byte, align8(len(b))-len(b)))
	}
	write(meta)
	for _, s := range secs {
		write(store.AsBytes(s.data))
	}
	if m.hasLists() {
		write(store.AsBytes(a.Lists))
	}
	return bw.Flush()
}

func align8(n int) int { return (n + 7) &^ 7 }

// VersionError reports a model file of another format version.
type VersionError struct{ Got uint32 }

func (e *VersionError) Error() string {
	return fmt.Sprintf("format version %d, this build reads version %d: save the model again with this build's ssnmf solve -model", e.Got, Version)
}

// decode checks the model file b (checksums included) and returns its
// settings and arrays, which alias b. b must be 8-byte aligned. It never
// panics.
func decode(b []byte) (*Meta, *Arrays, error) {
	if len(b) < headerFixed || string(b[:8]) != Magic {
		return nil, nil, errors.New("not a model file (bad magic)")
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != Version {
		return nil, nil, &VersionError{Got: v}
	}
	count := int(binary.LittleEndian.Uint32(b[12:]))
	if count < 1 || count > maxSections {
		return nil, nil, fmt.Errorf("%d sections, want 1 to %d", count, maxSections)
	}
	tableEnd := headerFixed + entrySize*count
	if len(b) < tableEnd+4 {
		return nil, nil, fmt.Errorf("truncated: %d bytes, the header needs %d", len(b), tableEnd+4)
	}
	if got, want := binary.LittleEndian.Uint32(b[tableEnd:]), crc32.Checksum(b[:tableEnd], castagnoli); got != want {
		return nil, nil, fmt.Errorf("bad header checksum 0x%08x, computed 0x%08x", got, want)
	}
	raw := map[uint32][]byte{}
	for i := range count {
		e := b[headerFixed+entrySize*i:]
		kind, sum := binary.LittleEndian.Uint32(e), binary.LittleEndian.Uint32(e[4:])
		off, n := binary.LittleEndian.Uint64(e[8:]), binary.LittleEndian.Uint64(e[16:])
		name := sectionNames[kind]
		switch {
		case name == "":
			return nil, nil, fmt.Errorf("section %d: unknown kind %d", i, kind)
		case raw[kind] != nil:
			return nil, nil, fmt.Errorf("section %s twice", name)
		case off%8 != 0 || off < uint64(tableEnd+4) || off > uint64(len(b)) || n > uint64(len(b))-off:
			return nil, nil, fmt.Errorf("section %s: %d bytes at offset %d, outside the file's %d or unaligned", name, n, off, len(b))
		}
		sec := b[off : off+n]
		if got := crc32.Checksum(sec, castagnoli); got != sum {
			return nil, nil, fmt.Errorf("section %s: bad checksum 0x%08x, computed 0x%08x", name, sum, got)
		}
		raw[kind] = sec
	}
	m := &Meta{}
	if err := json.Unmarshal(raw[secMeta], m); err != nil {
		return nil, nil, fmt.Errorf("section meta: %w", err)
	}
	if err := m.check(); err != nil {
		return nil, nil, fmt.Errorf("section meta: %w", err)
	}
	a := &Arrays{}
	dst := map[uint32]*[]float64{secMean: &a.Mean, secStd: &a.Std, secFeatures: &a.Features, secW: &a.W,
		secGram: &a.Gram, secSigma: &a.Sigma, secReach: &a.Reach, secCentroids: &a.Centroids}
	for _, s := range sections(m, a) {
		sec, ok := raw[s.kind]
		if !ok {
			return nil, nil, fmt.Errorf("section %s missing", sectionNames[s.kind])
		}
		if len(sec) != 8*s.want {
			return nil, nil, fmt.Errorf("section %s: %d bytes, want %d for n = %d, p = %d, k = %d", sectionNames[s.kind], len(sec), 8*s.want, m.N, m.P, m.K)
		}
		*dst[s.kind] = floats(sec)
	}
	if m.hasLists() {
		sec, ok := raw[secLists]
		if !ok || len(sec) != 4*m.N*m.Neighbors {
			return nil, nil, fmt.Errorf("section lists: %d bytes, want %d for n = %d, M = %d", len(sec), 4*m.N*m.Neighbors, m.N, m.Neighbors)
		}
		if len(sec) > 0 {
			a.Lists = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(sec))), len(sec)/4)
		}
		for i, j := range a.Lists {
			if j < 0 || int(j) >= m.N {
				return nil, nil, fmt.Errorf("section lists: entry %d is row %d, outside [0, %d)", i, j, m.N)
			}
		}
	}
	if err := a.check(m); err != nil {
		return nil, nil, err
	}
	return m, a, nil
}

// floats views b, 8-byte aligned, as float64s.
func floats(b []byte) []float64 {
	if len(b) == 0 {
		return []float64{}
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
}

// check refuses values that no solve writes: non-finite numbers, W off
// the simplex's sign, negative scales.
func (a *Arrays) check(m *Meta) error {
	for _, s := range []struct {
		name string
		v    []float64
	}{{"mean", a.Mean}, {"std", a.Std}, {"features", a.Features}, {"W", a.W}, {"gram", a.Gram},
		{"sigma", a.Sigma}, {"reach", a.Reach}, {"centroids", a.Centroids}} {
		for i, v := range s.v {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("section %s: value %d is %v", s.name, i, v)
			}
		}
	}
	for i, v := range a.W {
		if v < 0 {
			return fmt.Errorf("section W: value %d is %v < 0", i, v)
		}
	}
	for _, s := range [][]float64{a.Std, a.Sigma, a.Reach} {
		for i, v := range s {
			if v < 0 {
				return fmt.Errorf("a negative scale %v at %d", v, i)
			}
		}
	}
	for i, v := range a.Sigma {
		if !(v > 0) {
			return fmt.Errorf("section sigma: value %d is %v, want > 0", i, v)
		}
	}
	return nil
}
