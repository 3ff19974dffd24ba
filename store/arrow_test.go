package store

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/ssnmf/ssnmf/store/internal/arrowtest"
)

// randomMembership returns an n×k matrix of uniform values with a few rows
// that tie or hold signed zeros.
func randomMembership(n, k int) []float64 {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	W := make([]float64, n*k)
	for i := range W {
		W[i] = rng.Float64()
	}
	if n > 2 && k > 1 {
		copy(W, make([]float64, k)) // an all-zero row: cluster 0
		W[k] = math.Copysign(0, -1)
		W[2*k], W[2*k+1] = 0.5, 0.5 // a tie: the lower index
	}
	return W
}

// TestMembershipArrowRoundTrip writes memberships as an Arrow IPC file and
// reads them back with Arrow's own reader, across a batch boundary.
func TestMembershipArrowRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		n, k int
	}{
		{name: "empty", n: 0, k: 3},
		{name: "k=1", n: 5, k: 1},
		{name: "two batches", n: MembershipBatchRows + 17, k: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			W := randomMembership(tc.n, tc.k)
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
				if !rec.Schema().Equal(MembershipSchema(tc.k)) {
					t.Fatalf("batch %d: schema %v, want %v", b, rec.Schema(), MembershipSchema(tc.k))
				}
				arrowtest.CheckMembership(t, rec, W, row, tc.k, Argmax)
				row += int(rec.NumRows())
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
