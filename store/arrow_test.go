package store

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// TestMembershipArrowRoundTrip writes memberships as an Arrow IPC file and
// reads them back with Arrow's own reader, across a batch boundary.
func TestMembershipArrowRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		n, k int
	}{
		{name: "empty", n: 0, k: 3},
		{name: "k=1", n: 5, k: 1},
		{name: "two batches", n: arrowBatchRows + 17, k: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.n)))
			W := make([]float64, tc.n*tc.k)
			for i := range W {
				W[i] = rng.Float64()
			}
			var buf bytes.Buffer
			if err := WriteMembershipArrow(&buf, W, tc.n, tc.k); err != nil {
				t.Fatal(err)
			}
			r, err := ipc.NewFileReader(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if !r.Schema().Equal(MembershipSchema(tc.k)) {
				t.Fatalf("schema %v, want %v", r.Schema(), MembershipSchema(tc.k))
			}
			row := 0
			for b := range r.NumRecords() {
				rec, err := r.RecordBatch(b)
				if err != nil {
					t.Fatal(err)
				}
				m := int(rec.NumRows())
				for j := range tc.k {
					col := rec.Column(j).(*array.Float64)
					if col.NullN() != 0 {
						t.Fatalf("column w%d has nulls", j+1)
					}
					for i := range m {
						if math.Float64bits(col.Value(i)) != math.Float64bits(W[(row+i)*tc.k+j]) {
							t.Fatalf("row %d w%d = %v, wrote %v", row+i, j+1, col.Value(i), W[(row+i)*tc.k+j])
						}
					}
				}
				cl := rec.Column(tc.k).(*array.Int32)
				for i := range m {
					if want := Argmax(W[(row+i)*tc.k : (row+i+1)*tc.k]); int(cl.Value(i)) != want {
						t.Fatalf("row %d cluster %d, want %d", row+i, cl.Value(i), want)
					}
				}
				row += m
			}
			if row != tc.n {
				t.Fatalf("read %d rows, wrote %d", row, tc.n)
			}
		})
	}
	if err := WriteMembershipArrow(&bytes.Buffer{}, make([]float64, 5), 2, 3); err == nil {
		t.Error("no error for a W of the wrong size")
	}
}
