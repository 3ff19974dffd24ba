package store

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// QuoteLimit is the number of bytes of a text that [Quote] keeps: an
// error message quotes at most this much of a field or a name read from
// an input, however long it is.
const QuoteLimit = 60

// Quote returns s quoted as [strconv.Quote] does, for an error message. A
// text longer than QuoteLimit bytes is cut to its first whole UTF-8
// characters within the limit and followed by "…(N bytes)", N the length
// of the whole text, so that a 10 MB field read from a file never fills an
// error line. It is the one place where an error quotes text read from an
// input.
func Quote(s string) string {
	if len(s) <= QuoteLimit {
		return strconv.Quote(s)
	}
	cut := QuoteLimit
	for back := 0; back < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(s[cut]); back++ {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// quoteList returns the texts quoted by Quote and joined by ", ", at most
// listLimit of them, followed by "… (N in all)" when there are more.
func quoteList(texts []string) string {
	var b strings.Builder
	for j, s := range texts {
		if j == listLimit {
			b.WriteString(", … (" + strconv.Itoa(len(texts)) + " in all)")
			break
		}
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(Quote(s))
	}
	return b.String()
}

// listLimit is the number of names an error lists before it stops.
const listLimit = 20
