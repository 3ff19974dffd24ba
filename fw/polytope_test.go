package fw

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// pieceLinear is max{a x1 + x2, -a x1 + x2} with the subgradient (a, 1) at
// x1 >= 0, (-a, 1) at x1 < 0.
func pieceLinear(a float64) func(x, grad []float64) float64 {
	return func(x, grad []float64) float64 {
		s := 1.0
		if x[0] < 0 {
			s = -1
		}
		grad[0], grad[1] = s*a, 1
		return s*a*x[0] + x[1]
	}
}

// TestSection4Examples reproduces both examples of Section 4 from random
// starts in the triangle (-1, 3), (1, 3), (0, 0), for every step rule. On
// max{5x1 + x2, -5x1 + x2} Frank-Wolfe never approaches the minimum (0, 0):
// x2 never decreases, and with the open-loop and curvature steps it climbs
// to 3; with the line search it stalls where it first reaches x1 = 0. On
// max{x1/2 + x2, -x1/2 + x2} it converges to (0, 0).
func TestSection4Examples(t *testing.T) {
	triangle := Vertices{{-1, 3}, {1, 3}, {0, 0}}
	rng := rand.New(rand.NewPCG(71, 72))
	for _, tc := range []struct {
		name     string
		a        float64
		step     StepRule
		maxIter  int
		wantTop  bool    // x2 ends within 1e-6 of 3
		wantNear float64 // > 0: ends within this of (0, 0)
	}{
		{name: "a=5 open-loop", a: 5, step: StepOpenLoop, maxIter: 2000, wantTop: true},
		{name: "a=5 curvature", a: 5, step: StepCurvature, maxIter: 2000, wantTop: true},
		{name: "a=5 line search", a: 5, step: StepExact, maxIter: 200},
		{name: "a=1/2 open-loop", a: 0.5, step: StepOpenLoop, maxIter: 2000, wantNear: 1e-12},
		{name: "a=1/2 curvature", a: 0.5, step: StepCurvature, maxIter: 2000, wantNear: 0.05},
		{name: "a=1/2 line search", a: 0.5, step: StepExact, maxIter: 200, wantNear: 1e-9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 {
				// A uniform point of the triangle.
				u, v := rng.Float64(), rng.Float64()
				if u+v > 1 {
					u, v = 1-u, 1-v
				}
				x := []float64{-u + v, 3*u + 3*v}
				x0 := []float64{x[0], x[1]}
				set := DefaultPolytopeSettings()
				set.Step, set.Curvature, set.MaxIter = tc.step, 50, tc.maxIter
				prev := x[1]
				set.Recorder = func(it Iteration) error {
					if it.Step < 0 || it.Step > 1 {
						t.Errorf("step %v outside [0, 1]", it.Step)
					}
					// x is the iterate being recorded.
					if tc.a == 5 && x[1] < prev-1e-12 {
						t.Errorf("iteration %d: x2 fell from %v to %v", it.Iter, prev, x[1])
					}
					prev = x[1]
					return nil
				}
				pr := PolytopeProblem{Func: pieceLinear(tc.a), LMO: triangle.LMO}
				res, err := MinimizePolytope(context.Background(), pr, x, &set)
				if err != nil {
					t.Fatal(err)
				}
				// Every iterate stays in the triangle.
				if x[1] > 3+1e-12 || x[1] < 3*x[0]-1e-12 || x[1] < -3*x[0]-1e-12 {
					t.Fatalf("start %v: left the triangle at %v", x0, x)
				}
				dist := math.Hypot(x[0], x[1])
				switch {
				case tc.wantTop && math.Abs(x[1]-3) > 1e-6:
					t.Fatalf("start %v: x = %v after %d iterations, want x2 = 3", x0, x, res.Iterations)
				case tc.a == 5 && (x[1] < x0[1]-1e-12 || res.Objective < x0[1]-1e-12 || dist < x0[1]-1e-12):
					t.Fatalf("start %v: x = %v, f = %v: came nearer the optimum than x2 at the start", x0, x, res.Objective)
				case tc.wantNear > 0 && dist > tc.wantNear:
					t.Fatalf("start %v: x = %v after %d iterations (%v), want (0, 0)", x0, x, res.Iterations, res.Status)
				}
			}
		})
	}
}

func TestVerticesLMO(t *testing.T) {
	vs := Vertices{{1, 0}, {0, 1}, {1, 0}, {-1, -1}}
	for _, tc := range []struct {
		g    []float64
		want []float64
	}{
		{g: []float64{1, 1}, want: []float64{-1, -1}},
		{g: []float64{-1, 0}, want: []float64{1, 0}}, // vertices 0 and 2 tie: the first
		{g: []float64{0, -1}, want: []float64{0, 1}},
		{g: []float64{0, 0}, want: []float64{1, 0}},
	} {
		s := make([]float64, 2)
		vs.LMO(tc.g, s)
		if s[0] != tc.want[0] || s[1] != tc.want[1] {
			t.Errorf("LMO(%v) = %v, want %v", tc.g, s, tc.want)
		}
	}
}

func TestSegmentArgmin(t *testing.T) {
	for _, tc := range []struct {
		name string
		phi  func(float64) float64
		want float64
	}{
		{name: "interior", phi: func(l float64) float64 { return (l - 0.3) * (l - 0.3) }, want: 0.3},
		{name: "increasing", phi: func(l float64) float64 { return l }, want: 0},
		{name: "decreasing", phi: func(l float64) float64 { return -l }, want: 1},
		{name: "kink", phi: func(l float64) float64 { return math.Abs(l - 0.7) }, want: 0.7},
	} {
		if got := segmentArgmin(tc.phi); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: argmin %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestMinimizePolytopeErrors(t *testing.T) {
	tri := Vertices{{-1, 3}, {1, 3}, {0, 0}}
	ok := PolytopeProblem{Func: pieceLinear(1), LMO: tri.LMO}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		p    PolytopeProblem
		x    []float64
		set  func(*PolytopeSettings)
	}{
		{name: "no Func", p: PolytopeProblem{LMO: tri.LMO}, x: []float64{0, 1}},
		{name: "no LMO", p: PolytopeProblem{Func: ok.Func}, x: []float64{0, 1}},
		{name: "empty x", p: ok, x: nil},
		{name: "curvature without C", p: ok, x: []float64{0, 1}, set: func(s *PolytopeSettings) { s.Step = StepCurvature }},
		{name: "unknown step", p: ok, x: []float64{0, 1}, set: func(s *PolytopeSettings) { s.Step = 9 }},
		{name: "negative max-iter", p: ok, x: []float64{0, 1}, set: func(s *PolytopeSettings) { s.MaxIter = -1 }},
		{name: "NaN objective", p: PolytopeProblem{Func: func(x, g []float64) float64 { return math.NaN() }, LMO: tri.LMO}, x: []float64{0, 1}},
		{name: "canceled", ctx: canceled, p: ok, x: []float64{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := DefaultPolytopeSettings()
			if tc.set != nil {
				tc.set(&set)
			}
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			if _, err := MinimizePolytope(ctx, tc.p, tc.x, &set); err == nil {
				t.Fatal("no error")
			}
		})
	}
}
