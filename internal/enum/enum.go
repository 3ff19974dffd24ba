// Package enum names the values of small integer enumerations (step rules,
// starts, statuses, edge weights) from a table of names, one name a value,
// so that String and the parser of each enumeration agree by construction;
// List and Join name several in prose ("a, b or c").
package enum

import (
	"fmt"
	"strings"
)

// Name returns the name of v in names, or typ(v) if it has none.
func Name[E ~int](names []string, v E, typ string) string {
	if v >= 0 && int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, int(v))
}

// Parse returns the value whose name in names is s; what names the kind of
// value in the error, which lists the names.
func Parse[E ~int](names []string, s, what string) (E, error) {
	for i, name := range names {
		if s == name {
			return E(i), nil
		}
	}
	return 0, fmt.Errorf("unknown %s %q (want %s)", what, s, List(names))
}

// List returns the names as "a, b or c".
func List(names []string) string { return Join(names, "or") }

// Join joins words as prose does, with conj ("and", "or") before the
// last: "a", "a or b", "a, b or c"; "" for none.
func Join(words []string, conj string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}
