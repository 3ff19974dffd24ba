package tile

import "fmt"

// Precision is the floating-point format in which a Source's kernel values
// are produced. Every sum formed from them (row sums, ||P||_F^2, P·W, P·S)
// is accumulated in float64 whatever the precision.
type Precision int

const (
	// Float64 produces kernel values in float64, the default.
	Float64 Precision = iota
	// Float32 rounds every kernel value to float32. The vectorized kernel
	// then computes the tile in float32 arithmetic, twice as many values per
	// instruction, and keeps half the tile memory.
	Float32
)

// String returns "float64" or "float32".
func (p Precision) String() string {
	switch p {
	case Float64:
		return "float64"
	case Float32:
		return "float32"
	}
	return fmt.Sprintf("Precision(%d)", int(p))
}

// ParsePrecision parses "float64" or "float32" (also "f64", "f32", "64" and
// "32").
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "float64", "f64", "64":
		return Float64, nil
	case "float32", "f32", "32":
		return Float32, nil
	}
	return 0, fmt.Errorf("precision %q: want float32 or float64", s)
}
