//go:build !amd64 && !arm64

package tile

// vectorFMAProbe returns false: off amd64 and arm64 FMAPeak has the scalar
// probe alone (ISAGo is the only family these CPUs run).
func vectorFMAProbe(ISA, Precision) (fmaProbe, bool) { return fmaProbe{}, false }

// scalarFMAProbe returns false: ISAGo's probe is scalarFMA here.
func scalarFMAProbe() (fmaProbe, bool) { return fmaProbe{}, false }
