// Package experiment is what the experiment scripts (studies/paper,
// studies/convergence, studies/quality) share about running on the shared
// data sets: how a list of them is given on the command line (name[:k],
// [ParseSets]), where a data set's file is in the data directory ([Path])
// and how it is read with its labels ([ReadLabeled]), the hard clusters of a
// solution W that are scored against those labels (with score.Compare,
// [Clusters]), and how a run's trace is kept ([WriteTrace]).
package experiment

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/trace"
)

// Set is a data set and the number of clusters to find in it.
type Set struct {
	Name string // the data set, NAME.csv in the data directory (see Path)
	K    int    // clusters
}

// ParseSets parses a comma-separated list of data sets, each name or
// name:k (surrounding white space is dropped). A name without k takes the k
// of the Set of that name in known; it is an error if there is none, or if
// a k is not a whole number >= 1.
func ParseSets(list string, known []Set) ([]Set, error) {
	var sets []Set
	for s := range strings.SplitSeq(list, ",") {
		name, kText, hasK := strings.Cut(strings.TrimSpace(s), ":")
		set := Set{Name: name}
		if hasK {
			k, err := strconv.Atoi(kText)
			if err != nil || k < 1 {
				return nil, fmt.Errorf("%q: k must be a whole number >= 1", s)
			}
			set.K = k
		} else {
			for _, d := range known {
				if d.Name == name {
					set.K = d.K
				}
			}
			if set.K == 0 {
				return nil, fmt.Errorf("%q has no default k; give it as %s:K", s, name)
			}
		}
		sets = append(sets, set)
	}
	return sets, nil
}

// Path returns the file of the data set name in the data directory dir:
// dir/name.csv, or dir/name.csv.gz if only that exists (the larger shared
// data sets are compressed).
func Path(dir, name string) string {
	path := filepath.Join(dir, name+".csv")
	if _, err := os.Stat(path); err != nil {
		if _, gzErr := os.Stat(path + ".gz"); gzErr == nil {
			return path + ".gz"
		}
	}
	return path
}

// ReadLabeled reads the CSV file path as "ssnmf solve" reads it
// (store.ReadCSV: every column but "label" a feature) and returns an error
// naming the file if it has no label column to score against.
func ReadLabeled(path string) (*store.Table, error) {
	tab, err := store.ReadCSV(path, store.CSVOptions{})
	if err != nil {
		return nil, err
	}
	if tab.Labels == nil {
		tab.Close()
		return nil, fmt.Errorf("%s: no label column to score against", path)
	}
	return tab, nil
}

// Clusters returns the cluster of every row of the row-major n×k matrix w:
// the index of its largest entry (store.Argmax, the lowest on ties), the
// column "cluster" of "ssnmf solve -out".
func Clusters(w []float64, k int) []int {
	pred := make([]int, len(w)/k)
	for i := range pred {
		pred[i] = store.Argmax(w[i*k : (i+1)*k])
	}
	return pred
}

// WriteTrace writes the records of a run to path as a trace (package trace,
// the format of "ssnmf solve -trace", which "ssnmf plot" reads), atomically:
// path is replaced only once the whole trace is written.
func WriteTrace(path string, its []fw.Iteration) error {
	tw := trace.NewWriter(nil)
	for _, it := range its {
		tw.Record(it)
	}
	return store.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(tw.Bytes())
		return err
	})
}
