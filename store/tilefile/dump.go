package tilefile

import (
	"fmt"
	"io"
	"maps"
	"slices"
)

// Dump writes a human-readable description of the tile file name to w: its
// metadata, value type, and one line per tile with its coordinates, shape,
// and smallest, largest and mean values. It validates the file first.
func Dump(w io.Writer, name string) error {
	tf, err := Open(name, 0)
	if err != nil {
		return err
	}
	defer tf.Close()
	typ := "float64"
	if tf.float32 {
		typ = "float32"
	}
	fmt.Fprintf(w, "tile file %s\n  n %d, block %d, %d×%d tile grid, %d tiles stored, values %s\n",
		name, tf.n, tf.b, tf.g.nb, tf.g.nb, tf.g.tiles(), typ)
	for _, k := range slices.Sorted(maps.Keys(tf.meta)) {
		fmt.Fprintf(w, "  %s%s = %s\n", keyPrefix, k, tf.meta[k])
	}
	for t := range tf.g.tiles() {
		I, J := tf.g.coords(t)
		r0, r1, c0, c1 := tf.g.bounds(t)
		m := (r1 - r0) * (c1 - c0)
		lo, hi, sum := tf.value(t, 0), tf.value(t, 0), 0.0
		for i := range m {
			v := tf.value(t, i)
			lo, hi, sum = min(lo, v), max(hi, v), sum+v
		}
		fmt.Fprintf(w, "  tile %d,%d  rows [%d:%d) cols [%d:%d)  min %.6g max %.6g mean %.6g\n",
			I, J, r0, r1, c0, c1, lo, hi, sum/float64(m))
	}
	return nil
}
