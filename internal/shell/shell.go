// Package shell writes user strings into bash scripts without letting them
// change the script: every value is single-quoted, and commands are split
// into words the way a shell would, without expanding anything.
package shell

import (
	"errors"
	"strings"
)

// Quote returns s as one bash word that stands for exactly s.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if isSafe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Words quotes every word and joins them with spaces.
func Words(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}

func isSafe(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("-_./:=@%+,", r):
		default:
			return false
		}
	}
	return true
}

// ErrUnterminatedQuote is returned by Split for a quote left open.
var ErrUnterminatedQuote = errors.New("a quote is not closed")

// ErrTrailingBackslash is returned by Split for a backslash at the end.
var ErrTrailingBackslash = errors.New("the string ends with a backslash")

// Split breaks s into words as bash would for a simple command, honouring
// single quotes, double quotes and backslashes, but expanding nothing: $,
// backticks, globs, pipes and redirections are ordinary characters. It is how
// a command string becomes argv without a shell ever parsing it.
func Split(s string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		runes   = []rune(s)
		i       = 0
		flush   = func() { words = append(words, cur.String()); cur.Reset(); inWord = false }
		isSpace = func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }
	)
	for i < len(runes) {
		r := runes[i]
		switch {
		case isSpace(r):
			if inWord {
				flush()
			}
			i++
		case r == '\\':
			if i+1 >= len(runes) {
				return nil, ErrTrailingBackslash
			}
			if runes[i+1] != '\n' { // backslash-newline continues the line
				cur.WriteRune(runes[i+1])
				inWord = true
			}
			i += 2
		case r == '\'':
			j := i + 1
			for j < len(runes) && runes[j] != '\'' {
				j++
			}
			if j >= len(runes) {
				return nil, ErrUnterminatedQuote
			}
			cur.WriteString(string(runes[i+1 : j]))
			inWord = true
			i = j + 1
		case r == '"':
			j := i + 1
			for ; j < len(runes) && runes[j] != '"'; j++ {
				if runes[j] == '\\' && j+1 < len(runes) && strings.ContainsRune("\\\"$`\n", runes[j+1]) {
					if runes[j+1] != '\n' {
						cur.WriteRune(runes[j+1])
					}
					j++
					continue
				}
				cur.WriteRune(runes[j])
			}
			if j >= len(runes) {
				return nil, ErrUnterminatedQuote
			}
			inWord = true
			i = j + 1
		default:
			cur.WriteRune(r)
			inWord = true
			i++
		}
	}
	if inWord {
		flush()
	}
	return words, nil
}
