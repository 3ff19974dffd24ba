package fw

import (
	"fmt"
	"strings"
)

// enumString returns the name of v in names, or typ(v) if it has none: the
// String method of the package's enumerations.
func enumString[E ~int](names []string, v E, typ string) string {
	if v >= 0 && int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, int(v))
}

// parseEnum returns the value whose name in names is s; what names the
// kind of value in the error.
func parseEnum[E ~int](names []string, s, what string) (E, error) {
	for i, name := range names {
		if s == name {
			return E(i), nil
		}
	}
	return 0, fmt.Errorf("unknown %s %q (want %s)", what, s, strings.Join(names[:len(names)-1], ", ")+" or "+names[len(names)-1])
}
